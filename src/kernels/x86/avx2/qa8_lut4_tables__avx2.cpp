// lut_tables (ops/lhs_pack.h) with 256-bit vectors: one k4 group's 16 entries per step, as
// T'(e) = Σ_b bit b of e · q_b - zx·popcount(e) + kLutBias: one vpmaddubsw of the entries' bit
// bytes with the group's 4 values broadcast, one vpmaddwd to add the two halves, then the split
// into T' & 31 and T' >> 5. The same bytes as the SSE2 definition (exact integer arithmetic).
#include <immintrin.h>

#include <cstring>

#include "kernels/x86/kernels.h"
#include "format/lhs_layout.h"  // kLutBias, kLutTableBytes

namespace lowbit {

namespace {

// Int32 lane m of the first (a) or second (b) vector holds entry e: a = 0-3 | 8-11, b = 4-7 |
// 12-15 (128-bit lanes), the order vpackssdw(a, b) turns into 0-15.
constexpr int entry(int half, int m) { return m % 4 + 4 * half + 8 * (m / 4); }

struct Constants {
  __m256i bits[2], offset[2];
};

Constants constants(int32_t zx) {
  alignas(32) uint8_t bits[2][32];
  alignas(32) int32_t offset[2][8];
  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < 8; ++m) {
      const int e = entry(h, m);
      for (int b = 0; b < 4; ++b) bits[h][4 * m + b] = uint8_t(e >> b & 1);
      offset[h][m] = kLutBias - zx * __builtin_popcount(unsigned(e));
    }
  Constants c;
  for (int h = 0; h < 2; ++h) {
    c.bits[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(bits[h]));
    c.offset[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(offset[h]));
  }
  return c;
}

}  // namespace

void qa8_lut4_tables__avx2(const int8_t* q, size_t k, int32_t zx, size_t mr, uint8_t* out) {
  const Constants c = constants(zx);
  const __m256i ones = _mm256_set1_epi16(1), low5 = _mm256_set1_epi16(31);
  for (size_t j = 0; j < k / 4; ++j) {
    int32_t v;
    std::memcpy(&v, q + 4 * j, 4);
    const __m256i x = _mm256_set1_epi32(v);
    __m256i t[2];
    for (int h = 0; h < 2; ++h)
      t[h] = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(c.bits[h], x), ones), c.offset[h]);
    const __m256i e = _mm256_packs_epi32(t[0], t[1]);  // 0..2040: no saturation
    const __m256i b = _mm256_packus_epi16(_mm256_and_si256(e, low5), _mm256_srli_epi16(e, 5));
    // [lo 0-7, hi 0-7 | lo 8-15, hi 8-15] as 64-bit quarters 0 2 1 3: lo 0-15, hi 0-15.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j * mr * kLutTableBytes), _mm256_permute4x64_epi64(b, 0xD8));
  }
}

}  // namespace lowbit
