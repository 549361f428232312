#include "ops/lhs_pack.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "format/layout.h"

namespace lowbit {

namespace {

// Σ q over each sum block of b values (b a multiple of 16, as every sum block is) into
// out[k / b], in one pass: the pairs and the group sums are then a few adds per block.
void block_sums(const int8_t* q, size_t k, size_t b, int32_t* out) {
#if defined(__SSE2__)
  // Σ q = Σ (q + 128) - b·128, the unsigned bytes summed by psadbw against zero (two 64-bit
  // partial sums per 16 bytes, added up over the block).
  const __m128i flip = _mm_set1_epi8(char(0x80)), zero = _mm_setzero_si128();
  for (size_t i = 0; i < k / b; ++i) {
    __m128i acc = zero;
    for (size_t c = 0; c < b; c += 16) {
      const __m128i u = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i * b + c)), flip);
      acc = _mm_add_epi64(acc, _mm_sad_epu8(u, zero));
    }
    out[i] = _mm_cvtsi128_si32(_mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc))) - int32_t(b) * 128;
  }
#else
  for (size_t i = 0; i < k / b; ++i) {
    int32_t s = 0;
    for (size_t c = 0; c < b; ++c) s += q[i * b + c];
    out[i] = s;
  }
#endif
}

}  // namespace

// Per k4 group, the 16 entries as two vectors of 8 int16 (entries 0-7, then + x'3 for 8-15).
void lut_tables(const int8_t* q, size_t k, int32_t zx, size_t mr, uint8_t* out) {
#if defined(__SSE2__)
  // Lane e of mask b: -1 when bit b of e is set (entries 0-7).
  const __m128i m0 = _mm_setr_epi16(0, -1, 0, -1, 0, -1, 0, -1), m1 = _mm_setr_epi16(0, 0, -1, -1, 0, 0, -1, -1);
  const __m128i m2 = _mm_setr_epi16(0, 0, 0, 0, -1, -1, -1, -1), bias = _mm_set1_epi16(kLutBias);
  const __m128i low5 = _mm_set1_epi16(31);
  for (size_t j = 0; j < k / 4; ++j) {
    const __m128i x0 = _mm_set1_epi16(int16_t(q[4 * j] - zx)), x1 = _mm_set1_epi16(int16_t(q[4 * j + 1] - zx));
    const __m128i x2 = _mm_set1_epi16(int16_t(q[4 * j + 2] - zx)), x3 = _mm_set1_epi16(int16_t(q[4 * j + 3] - zx));
    const __m128i lo8 = _mm_add_epi16(_mm_add_epi16(_mm_and_si128(m0, x0), _mm_and_si128(m1, x1)),
                                      _mm_add_epi16(_mm_and_si128(m2, x2), bias));
    const __m128i hi8 = _mm_add_epi16(lo8, x3);
    uint8_t* t = out + j * mr * kLutTableBytes;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t),
                     _mm_packus_epi16(_mm_and_si128(lo8, low5), _mm_and_si128(hi8, low5)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t + 16),
                     _mm_packus_epi16(_mm_srli_epi16(lo8, 5), _mm_srli_epi16(hi8, 5)));
  }
#else
  for (size_t j = 0; j < k / 4; ++j) {
    uint8_t* t = out + j * mr * kLutTableBytes;
    for (int e = 0; e < 16; ++e) {
      int v = kLutBias;
      for (int b = 0; b < 4; ++b)
        if (e >> b & 1) v += q[4 * j + size_t(b)] - zx;
      t[e] = uint8_t(v & 31);
      t[16 + e] = uint8_t(v >> 5);
    }
  }
#endif
}

namespace {

// Row r's values into the block's [k/KR][mr][KR] order (q already points at row r's slot).
template <size_t KR>
void interleave(const int8_t* row, size_t k, size_t mr, int8_t* q) {
  for (size_t kb = 0; kb < k / KR; ++kb) std::memcpy(q + kb * mr * KR, row + kb * KR, KR);
}
void interleave(size_t kr, const int8_t* row, size_t k, size_t mr, int8_t* q) {
  switch (kr) {  // a constant size per copy: a move, not a library call per kr bytes
    case 1: return interleave<1>(row, k, mr, q);
    case 2: return interleave<2>(row, k, mr, q);
    case 4: return interleave<4>(row, k, mr, q);
    case 8: return interleave<8>(row, k, mr, q);
    default: return interleave<16>(row, k, mr, q);  // the registry allows kr dividing 16
  }
}

// The `rows` quantized rows of a block (row r at rows_q + r * k) into its [k/kr][mr][kr] order.
// kr = 4 with mr a multiple of 4 (the x86 GEMMs): 4 rows at a time, each 16 values of them a
// 4 x 4 transpose of int32 and four 16-byte stores instead of sixteen 4-byte copies.
void interleave_block(LhsFormat f, int8_t* rows_q, size_t rows, size_t k, int8_t* q) {
  const size_t mr = size_t(f.mr), kr = size_t(f.kr);
#if defined(__SSE2__)
  if (kr == 4 && mr % 4 == 0) {
    for (size_t r = 0; r < rows; r += 4) {
      // A partial last quad transposes zero rows: their slots are zero in the block anyway.
      if (r + 4 > rows) std::memset(rows_q + rows * k, 0, (r + 4 - rows) * k);
      const auto* src = reinterpret_cast<const __m128i*>(rows_q + r * k);
      const size_t quad = k / 16;  // __m128i per row
      for (size_t c = 0; c < k / 16; ++c) {
        const __m128i a = _mm_loadu_si128(src + c), b = _mm_loadu_si128(src + quad + c);
        const __m128i e = _mm_loadu_si128(src + 2 * quad + c), d = _mm_loadu_si128(src + 3 * quad + c);
        const __m128i ab_lo = _mm_unpacklo_epi32(a, b), ed_lo = _mm_unpacklo_epi32(e, d);
        const __m128i ab_hi = _mm_unpackhi_epi32(a, b), ed_hi = _mm_unpackhi_epi32(e, d);
        const __m128i out[4] = {_mm_unpacklo_epi64(ab_lo, ed_lo), _mm_unpackhi_epi64(ab_lo, ed_lo),
                                _mm_unpacklo_epi64(ab_hi, ed_hi), _mm_unpackhi_epi64(ab_hi, ed_hi)};
        for (size_t j = 0; j < 4; ++j)
          _mm_storeu_si128(reinterpret_cast<__m128i*>(q + ((4 * c + j) * mr + r) * 4), out[j]);
      }
    }
    return;
  }
#endif
  for (size_t r = 0; r < rows; ++r) interleave(kr, rows_q + r * k, k, mr, q + r * kr);
}
}  // namespace

void pack_lhs(LhsFormat f, size_t m, size_t k, size_t group_size, const float* x, size_t ldx,
              uint8_t* out, RowQuantizeFn quantize, LutTablesFn tables) {
  const size_t groups = k / group_size;
  const size_t sum_block = size_t(col_sum_block(int(group_size)));
  const LhsBlockLayout l = lhs_block_layout(f, k, groups);
  thread_local std::vector<int8_t> rows_q;  // a block's rows before the interleave
  thread_local std::vector<int32_t> bsums;  // one row's sum per sum block
  const size_t blocks = k / sum_block, blocks_per_group = group_size / sum_block;
  // The rows before the interleave (values) or the tables (lut4, which keep no values).
  const bool lut = f.kind == LhsKind::lut4;
  const size_t staged_rows = lut ? 1 : f.mr > 1 ? size_t(f.mr) : 0;
  if (rows_q.size() < staged_rows * k) rows_q.resize(staged_rows * k);
  if (bsums.size() < blocks) bsums.resize(blocks);
  for (size_t b0 = 0; b0 < m; b0 += f.mr) {
    uint8_t* block = out + (b0 / f.mr) * l.block_bytes;
    // Rows past m are zero; the rows of a full block overwrite every value the kernels read.
    if (b0 + size_t(f.mr) > m) std::memset(block, 0, l.block_bytes);
    auto* scales = reinterpret_cast<float*>(block);
    auto* zeros = reinterpret_cast<int32_t*>(block + l.zero_offset);
    auto* sums = reinterpret_cast<int32_t*>(block + l.sums_offset);
    auto* pairs = reinterpret_cast<int32_t*>(block + l.pairs_offset);
    auto* q = reinterpret_cast<int8_t*>(block + l.q_offset);
    for (size_t r = 0; r < size_t(f.mr) && b0 + r < m; ++r) {
      // With one row per block the interleave is the identity: quantize in place.
      int8_t* qr = lut ? rows_q.data() : f.mr == 1 ? q : rows_q.data() + r * k;
      const RowQuant rq = quantize(x + (b0 + r) * ldx, k, qr);
      scales[r] = rq.scale;
      zeros[r] = rq.zero;
      block_sums(qr, k, sum_block, bsums.data());
      const uint32_t nzx = uint16_t(-rq.zero);
      const int32_t bzx = int32_t(sum_block) * rq.zero;
      for (size_t b = 0; b < blocks; ++b)
        pairs[b * f.mr + r] = int32_t(nzx | uint32_t(uint16_t(bzx - bsums[b])) << 16);  // -Ex
      // Sum blocks divide the group (col_sum_block): a group's sum is its blocks'.
      for (size_t g = 0; g < groups; ++g) {
        int32_t group_sum = 0;
        for (size_t b = g * blocks_per_group; b < (g + 1) * blocks_per_group; ++b) group_sum += bsums[b];
        sums[g * f.mr + r] = group_sum;
      }
      if (lut) tables(qr, k, rq.zero, size_t(f.mr), reinterpret_cast<uint8_t*>(q) + r * kLutTableBytes);
    }
    if (f.mr > 1 && !lut) interleave_block(f, rows_q.data(), std::min(size_t(f.mr), m - b0), k, q);
  }
}

}  // namespace lowbit
