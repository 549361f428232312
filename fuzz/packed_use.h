// What the packed-weights harnesses do with weights they got accepted: every read a user can
// make of them (info through the C++ object, linear at a few m, repack), on small problems.
#pragma once

#include <vector>

#include "fuzz_util.h"
#include "lowbit/lowbit.h"

namespace lowbit::fuzz {

inline void use_packed(lowbit_packed_weights* w, int n, int k) {
  if (int64_t(n) * k > (1 << 16)) return;  // keep each execution fast
  for (int m : {1, 5}) {
    std::vector<float> x(size_t(m) * size_t(k)), y(size_t(m) * size_t(n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 7919 % 255) - 127) * 0.01f;
    lowbit_linear_options o = {1, -2.0f, 2.0f, 1};
    expect_no_internal_error(lowbit_linear(w, m, x.data(), y.data(), &o), "lowbit_linear");
  }
  lowbit_packed_weights* again = nullptr;
  expect_no_internal_error(lowbit_repack(w, "portable", &again), "lowbit_repack");
  lowbit_free(again);
}

}  // namespace lowbit::fuzz
