// 256-bit vector traits for the x86 kernels (gemv.h, gemm.h): the parts AVX2 and AVX-VNNI
// share (loads, unpacking, the f32 epilogue), and AVX2's exact dot product on vpmaddubsw.
// Include only from translation units built with the AVX2 flags (or more).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/x86/common.h"

namespace lowbit {
namespace x86 {
namespace {

struct Avx256Common {
  using V = __m256i;
  using F = __m256;
  static constexpr int kNr = 8, kBytes = 32;
  // Fields by shift and and; column sums by byte adds (common.h: unpack_kblock, block_dot).
  static constexpr bool kAffineUnpack = false, kPopcountSums = false;
  // Panels a GEMV runs at once for a stream format of `loads` vectors per step: with 16
  // registers, four panels of a multi-plane width spill (accumulators, partials, column sums
  // and the planes of every panel).
  static constexpr int gemv_panels(int loads) { return loads > 1 ? 2 : 4; }
  // Panels a GEMM of `rows` rows runs at once for values up to umax (no limit here: the
  // kernels' own choice).
  static constexpr int gemm_panels(int, int) { return 1 << 10; }

  static V load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  // A vector of packed weights that unpacks into several: loaded once into a register (the
  // compiler would otherwise fold it into each use, one load per use: loads are what limits
  // the AVX-VNNI GEMM on Intel client cores).
  static V load_packed(const uint8_t* p) {
#if defined(__AVX2__)  // not in the SIMDe-emulated build, where V is not a register type
    return opaque_register(load(p));
#else
    return load(p);
#endif
  }
  static void store(uint8_t* p, V v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
  static V zero() { return _mm256_setzero_si256(); }
  static V set1_8(char v) { return _mm256_set1_epi8(v); }
  static V set1_16(int16_t v) { return _mm256_set1_epi16(v); }
  static V set1_32(int32_t v) { return _mm256_set1_epi32(v); }
  static V bcast32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
  }
  static V and_(V a, V b) { return _mm256_and_si256(a, b); }
  template <int N>
  static V srli16(V a) { return _mm256_srli_epi16(a, N); }
  template <int N>
  static V slli16(V a) { return _mm256_slli_epi16(a, N); }
  // (a & m) | b
  static V and_or(V a, V m, V b) { return _mm256_or_si256(_mm256_and_si256(a, m), b); }
  static V add32(V a, V b) { return _mm256_add_epi32(a, b); }
  static V add8(V a, V b) { return _mm256_add_epi8(a, b); }
  static V add16(V a, V b) { return _mm256_add_epi16(a, b); }
  // Σ of the byte pairs of each 16-bit lane (s8: unsigned column sums, <= 255 each).
  static V sum_pairs(V s8) { return _mm256_maddubs_epi16(s8, set1_8(1)); }
  // (0 | c << 16) per column from c = base + zw: the zero-point lane of a GEMV's pair product.
  static V cz_high(const uint8_t* zeros, int base) {
    const V z = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zeros)));
    return _mm256_slli_epi32(_mm256_add_epi32(z, set1_32(base)), 16);
  }

  static F fload(const float* p) { return _mm256_load_ps(p); }
  static void fstore(float* p, F v) { _mm256_store_ps(p, v); }
  static F fzero() { return _mm256_setzero_ps(); }
  static F fset1(float v) { return _mm256_set1_ps(v); }
  static F cvt(V a) { return _mm256_cvtepi32_ps(a); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fmax(F a, F b) { return _mm256_max_ps(a, b); }
  static F fmin(F a, F b) { return _mm256_min_ps(a, b); }
  static F load_scales(const uint8_t* p, bool bf16) {
    if (bf16) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static V col_mask(int cols) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static F load_cols(const float* p, int cols) {
    return cols == kNr ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, col_mask(cols));
  }
  static void store_cols(float* p, F v, int cols) {
    if (cols == kNr) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, col_mask(cols), v);
  }
};

// vpmaddubsw saturates int16: u·x pairs are exact for u <= 127, and a run of R k-blocks of
// int16 partials stays exact while R·2·UMAX·128 <= 32768. 8-bit u is split into nibbles,
// u = lo + 16·hi: two products whose partials run 8 k-blocks, as 4 bits' do (u = lo + 128·hi
// had to flush both after every k-block: 8 vector ops per k-block and row against 4.5).
struct Avx2 : Avx256Common {
  struct Part {
    V a, h;
  };
  struct W {
    V u, hi;
  };
  // As many panels as keep the accumulators and their int16 partials in 16 registers: at 8
  // bits (two partials) 4 rows x 2 panels spill 24 and one panel fits (8-bit prefill on Zen 3
  // 0.55 -> 0.62 of 4 bits); 4 rows x 2 panels at the other widths are exactly 16.
  static constexpr int gemm_panels(int rows, int umax) {
    return max_i(1, 16 / (rows * (umax == 255 ? 3 : 2)));
  }
  static constexpr int run_kbs(int umax) { return 32768 / (256 * (umax == 255 ? 15 : umax)); }
  static Part part_begin(V) { return Part{zero(), zero()}; }
  template <int UMAX>
  static W prep(V u) {
    if (UMAX == 255)
      return W{_mm256_and_si256(u, set1_8(0x0F)), _mm256_and_si256(_mm256_srli_epi16(u, 4), set1_8(0x0F))};
    return W{u, u};
  }
  template <int UMAX>
  static Part dot(Part p, const W& w, V x) {
    p.a = _mm256_add_epi16(p.a, _mm256_maddubs_epi16(w.u, x));
    if (UMAX == 255) p.h = _mm256_add_epi16(p.h, _mm256_maddubs_epi16(w.hi, x));
    return p;
  }
  template <int UMAX>
  static V part_end(V acc, Part p) {
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p.a, _mm256_set1_epi16(1)));
    if (UMAX == 255) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p.h, _mm256_set1_epi16(16)));
    return acc;
  }
  // acc + Σ of the products of the int16 pairs of a and b (exact: no lane is -32768 twice).
  static V pair_dot(V acc, V a, V b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
  // dot / pair_dot with b = the 4 bytes at x, broadcast (VEX has no broadcast operand).
  template <int UMAX>
  static Part dot_x(Part p, const W& w, const int8_t* x) { return dot<UMAX>(p, w, bcast32(x)); }
  static V pair_dot_x(V acc, V a, const int32_t* x) { return pair_dot(acc, a, bcast32(x)); }
};

}  // namespace
}  // namespace x86
}  // namespace lowbit
