// AVX-512 VNNI traits for gemm_impl.h: 16 columns x 4 k per 64-byte vector, 512-bit
// vpdpbusd (exact, no saturation), masked tails for bias loads and output stores.
// Include only from translation units built with the AVX-512 VNNI flags.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lowbit {
namespace x86 {
namespace {

struct Avx512Vnni {
  using V = __m512i;
  using F = __m512;
  using Part = V;
  struct W {
    V u;
  };
  static constexpr int kNr = 16, kBytes = 64;
  // GCC 12's unmasked forms trip -Wmaybe-uninitialized (_mm512_undefined_*): use maskz.
  static constexpr __mmask16 kAll = 0xFFFF;

  static V load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static void store(uint8_t* p, V v) { _mm512_store_si512(p, v); }
  static V zero() { return _mm512_setzero_si512(); }
  static V set1_8(char v) { return _mm512_set1_epi8(v); }
  static V set1_32(int32_t v) { return _mm512_set1_epi32(v); }
  static V set1_16(int16_t v) { return _mm512_set1_epi16(v); }
  static V bcast32(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  }
  static V and_(V a, V b) { return _mm512_and_si512(a, b); }
  static V srli16(V a, int n) { return _mm512_srli_epi16(a, unsigned(n)); }
  static V add8(V a, V b) { return _mm512_add_epi8(a, b); }
  static V add32(V a, V b) { return _mm512_add_epi32(a, b); }
  static V sub32(V a, V b) { return _mm512_sub_epi32(a, b); }
  static V mullo32(V a, V b) { return _mm512_mullo_epi32(a, b); }

  static constexpr int run_kbs(int) { return 1 << 20; }
  static V part_begin(V acc) { return acc; }
  template <int UMAX>
  static W prep(V u) { return W{u}; }
  template <int UMAX>
  static V dot(V p, const W& w, V x) { return _mm512_dpbusd_epi32(p, w.u, x); }
  template <int UMAX>
  static V part_end(V, V p) { return p; }
  static V sum_flush(V su, V s8) { return _mm512_dpbusd_epi32(su, s8, set1_8(1)); }
  // acc + f·Σ s8 per column (f in every int16 lane; pairs <= 510, so int16 x int16 is exact).
  static V sum_flush_scaled(V acc, V s8, V f16) {
    return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(s8, set1_8(1)), f16);
  }

  static F fzero() { return _mm512_setzero_ps(); }
  static F fset1(float v) { return _mm512_set1_ps(v); }
  static F cvt(V a) { return _mm512_maskz_cvtepi32_ps(kAll, a); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fmax(F a, F b) { return _mm512_maskz_max_ps(kAll, a, b); }
  static F fmin(F a, F b) { return _mm512_maskz_min_ps(kAll, a, b); }
  static F load_scales(const uint8_t* p, bool bf16) {
    if (bf16) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, h), 16));
    }
    return _mm512_loadu_ps(p);
  }
  static V load_zeros(const uint8_t* p) {
    return _mm512_maskz_cvtepi8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __mmask16 col_mask(int cols) { return __mmask16((1u << cols) - 1u); }
  static F load_cols(const float* p, int cols) { return _mm512_maskz_loadu_ps(col_mask(cols), p); }
  static void store_cols(float* p, F v, int cols) { _mm512_mask_storeu_ps(p, col_mask(cols), v); }
};

}  // namespace
}  // namespace x86
}  // namespace lowbit
