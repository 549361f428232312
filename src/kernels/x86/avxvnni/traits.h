// AVX-VNNI (256-bit vpdpbusd, VEX): exact u8 x s8 -> int32 with no saturation, so partial
// sums need no runs. Shares everything else with AVX2.
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
  static V part_begin(V acc) { return acc; }
  template <int UMAX>
  static W prep(V u) { return W{u}; }
  template <int UMAX>
  static V dot(V p, const W& w, V x) { return _mm256_dpbusd_avx_epi32(p, w.u, x); }
  template <int UMAX>
  static V part_end(V, V p) { return p; }
  static V sum_flush(V su, V s8) { return _mm256_dpbusd_avx_epi32(su, s8, set1_8(1)); }
  static V sum_flush_scaled(V acc, V s8, V f16) {
    return _mm256_dpwssd_avx_epi32(acc, _mm256_maddubs_epi16(s8, set1_8(1)), f16);
  }
};

}  // namespace
}  // namespace x86
}  // namespace lowbit
