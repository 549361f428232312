// 256-bit traits of the table-lookup kernels (lut.h): 32 columns per index vector, the same
// 16-byte table in both 128-bit lanes; loads, constants and the f32 epilogue from
// Avx256Common. Include only from translation units built with the AVX2 flags.
#pragma once

#include "kernels/x86/avx2/traits.h"

namespace lowbit {
namespace x86 {
namespace {

struct LutAvx2 : Avx256Common {
  static constexpr int kCols = 32;  // columns per index vector: 4 runs of kNr (format/layout.h)

  static V table(const uint8_t* p) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static V shuffle(V table, V idx) { return _mm256_shuffle_epi8(table, idx); }
  // Bytes 0-7 (lo), 8-15 (hi) of each 128-bit lane of a and b, interleaved.
  static V unpacklo8(V a, V b) { return _mm256_unpacklo_epi8(a, b); }
  static V unpackhi8(V a, V b) { return _mm256_unpackhi_epi8(a, b); }
  template <int N>
  static V srli32(V a) { return _mm256_srli_epi32(a, N); }
  static V add16(V a, V b) { return _mm256_add_epi16(a, b); }
  static V sub32(V a, V b) { return _mm256_sub_epi32(a, b); }
  static V mul32(V a, V b) { return _mm256_mullo_epi32(a, b); }
  static V maddubs(V u8, V s8) { return _mm256_maddubs_epi16(u8, s8); }
  // cz = base + zw of kNr columns, one per int32 lane.
  static V cz_cols(const uint8_t* zeros, int base) {
    return _mm256_add_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zeros))),
                            set1_32(base));
  }
  // The record's scales of the 4 runs of columns; bf16 in the layout's pair order
  // (format/layout.h, scale_slot): the low half of each 32-bit lane is run 2h, the high half
  // run 2h + 1.
  static void load_scales4(const uint8_t* p, bool bf16, F (&out)[4]) {
    if (bf16) {
      for (int h = 0; h < 2; ++h) {
        const V v = load(p + 32 * h);
        out[2 * h] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
        out[2 * h + 1] = _mm256_castsi256_ps(_mm256_and_si256(v, set1_32(int32_t(0xFFFF0000u))));
      }
      return;
    }
    for (int r = 0; r < 4; ++r) out[r] = _mm256_loadu_ps(reinterpret_cast<const float*>(p) + r * kNr);
  }
};

}  // namespace
}  // namespace x86
}  // namespace lowbit
