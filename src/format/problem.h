// The shape and options of one set of quantized weights.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int kMaxGroupSize = 32768;  // keeps every d_g = Σ(qx-zx)(qw-zw) exact in int32

struct WeightProblem {
  int n = 0, k = 0, bits = 0, group_size = 0;
  bool has_zeros = false, has_bias = false;
  int groups() const { return k / group_size; }
};

// Throws Error(invalid_argument) naming the first bad value: n, k >= 1, bits in 1..8,
// group_size a multiple of 16 in [16, 32768] dividing k, n*k < 2^31.
void validate_problem(const WeightProblem& p);

}  // namespace lowbit
