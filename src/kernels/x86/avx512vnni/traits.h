// AVX-512 VNNI traits for the x86 kernels (gemv.h, gemm.h): 16 columns x 4 k per 64-byte
// vector, 512-bit vpdpbusd / vpdpwssd (exact, no saturation; a 32-bit broadcast from memory
// becomes the instruction's embedded {1to16} operand), masked tails for bias loads and
// output stores. Include only from translation units built with the AVX-512 VNNI flags.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/x86/common.h"

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
  // Fields by shift and and; column sums by byte adds (avx512vnnigfni/traits.h has the others).
  static constexpr bool kAffineUnpack = false, kPopcountSums = false;
  static constexpr int gemv_panels(int) { return 4; }  // 32 registers: four panels always fit
  static constexpr int gemm_panels(int, int) { return 1 << 10; }  // the kernels' own choice
  // GCC 12's unmasked forms trip -Wmaybe-uninitialized (_mm512_undefined_*): use maskz.
  static constexpr __mmask16 kAll = 0xFFFF;

  static V load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  // Loaded once, then unpacked from the register: GCC otherwise folds the load into both the
  // and and the shift, and with 288-byte records (4 bits, bf16 scales, group 32) half the
  // vectors straddle two cache lines, each read twice (measured: ~4 % of a prefill on Zen 5).
  static V load_packed(const uint8_t* p) {
#if defined(__AVX512F__)  // not in the SIMDe-emulated build, where V is not a register type
    return opaque_register(load(p));
#else
    return load(p);
#endif
  }
  static void store(uint8_t* p, V v) { _mm512_store_si512(p, v); }
  static V zero() { return _mm512_setzero_si512(); }
  static V set1_8(char v) { return _mm512_set1_epi8(v); }
  static V set1_16(int16_t v) { return _mm512_set1_epi16(v); }
  static V set1_32(int32_t v) { return _mm512_set1_epi32(v); }
  static V bcast32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  }
  static V and_(V a, V b) { return _mm512_and_si512(a, b); }
  template <int N>
  static V srli16(V a) { return _mm512_srli_epi16(a, N); }
  template <int N>
  static V slli16(V a) { return _mm512_slli_epi16(a, N); }
  // (a & m) | b in one instruction (truth table 0xEA).
  static V and_or(V a, V m, V b) { return _mm512_ternarylogic_epi32(a, m, b, 0xEA); }
  static V add8(V a, V b) { return _mm512_add_epi8(a, b); }
  static V add16(V a, V b) { return _mm512_add_epi16(a, b); }
  static V sum_pairs(V s8) { return _mm512_maddubs_epi16(s8, set1_8(1)); }
  static V cz_high(const uint8_t* zeros, int base) {
    const V z = _mm512_maskz_cvtepi8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(zeros)));
    return _mm512_maskz_slli_epi32(kAll, _mm512_add_epi32(z, set1_32(base)), 16);
  }

  static constexpr int run_kbs(int) { return 1 << 20; }
  static V part_begin(V acc) { return acc; }
  template <int UMAX>
  static W prep(V u) { return W{u}; }
  template <int UMAX>
  static V dot(V p, const W& w, V x) { return _mm512_dpbusd_epi32(p, w.u, x); }
  template <int UMAX>
  static V part_end(V, V p) { return p; }
  static V pair_dot(V acc, V a, V b) { return _mm512_dpwssd_epi32(acc, a, b); }
  // The same with b = 4 bytes at x broadcast. GCC 12 does not fold a broadcast load into the
  // instruction's {1to16} operand, so the compiled kernels write it out (one instruction, and
  // no shuffle-pipe broadcast); the SIMDe-emulated build uses the intrinsics.
#if defined(__AVX512VNNI__)
  template <int UMAX>
  static V dot_x(V p, const W& w, const int8_t* x) {
    __asm__("vpdpbusd %[x]%{1to16%}, %[w], %[p]" : [p] "+v"(p) : [w] "v"(w.u), [x] "m"(*reinterpret_cast<const int32_t*>(x)));
    return p;
  }
  static V pair_dot_x(V acc, V a, const int32_t* x) {
    __asm__("vpdpwssd %[x]%{1to16%}, %[a], %[acc]" : [acc] "+v"(acc) : [a] "v"(a), [x] "m"(*x));
    return acc;
  }
#else
  template <int UMAX>
  static V dot_x(V p, const W& w, const int8_t* x) { return dot<UMAX>(p, w, bcast32(x)); }
  static V pair_dot_x(V acc, V a, const int32_t* x) { return pair_dot(acc, a, bcast32(x)); }
#endif

  static F fload(const float* p) { return _mm512_load_ps(p); }
  static void fstore(float* p, F v) { _mm512_store_ps(p, v); }
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
  static __mmask16 col_mask(int cols) { return __mmask16((1u << cols) - 1u); }
  static F load_cols(const float* p, int cols) { return _mm512_maskz_loadu_ps(col_mask(cols), p); }
  static void store_cols(float* p, F v, int cols) { _mm512_mask_storeu_ps(p, col_mask(cols), v); }
};

}  // namespace
}  // namespace x86
}  // namespace lowbit
