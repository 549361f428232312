// AVX-VNNI (256-bit vpdpbusd / vpdpwssd, VEX): exact u8 x s8 -> int32 with no saturation, so
// partial sums need no runs. Shares everything else with AVX2.
#pragma once

#include "kernels/x86/avx2/traits.h"

namespace lowbit {
namespace x86 {
namespace {

struct AvxVnni : Avx256Common {
  using Part = V;
  struct W {
    V u;
  };
  static constexpr int run_kbs(int) { return 1 << 20; }
  static Part part_begin(V acc) { return acc; }
  template <int UMAX>
  static W prep(V u) { return W{u}; }
  template <int UMAX>
  static V dot(V p, const W& w, V x) { return _mm256_dpbusd_avx_epi32(p, w.u, x); }
  template <int UMAX>
  static V part_end(V, V p) { return p; }
  static V pair_dot(V acc, V a, V b) { return _mm256_dpwssd_avx_epi32(acc, a, b); }
  template <int UMAX>
  static V dot_x(V p, const W& w, const int8_t* x) { return dot<UMAX>(p, w, bcast32(x)); }
  static V pair_dot_x(V acc, V a, const int32_t* x) { return pair_dot(acc, a, bcast32(x)); }
};

}  // namespace
}  // namespace x86
}  // namespace lowbit
