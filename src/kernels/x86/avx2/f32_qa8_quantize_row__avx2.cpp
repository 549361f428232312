// quantize_row (ops/quantize_activations.h) with 256-bit vectors: 8 values per min, max and
// divide instead of SSE2's 4. Still DESIGN §1's division x / s, not a reciprocal multiply, so
// the bits are the scalar definition's; the end of the range, the tail and the per-row scalars are its own
// code (format/row_quant.h).
#include <immintrin.h>

#include "kernels/x86/kernels.h"

namespace lowbit {

RowQuant f32_qa8_quantize_row__avx2(const float* x, size_t k, int8_t* q) {
  // Range: min/max are exact, so the order does not matter; x * 0 is NaN for NaN and ±Inf.
  // Four chains each: one would wait on the latency of min/max every 8 values.
  const __m256 zero = _mm256_setzero_ps();
  __m256 los[4] = {zero, zero, zero, zero}, his[4] = {zero, zero, zero, zero};
  __m256 bad = zero;
  size_t i = 0;
  for (; i + 32 <= k; i += 32) {
    for (int j = 0; j < 4; ++j) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * j);
      los[j] = _mm256_min_ps(los[j], v);
      his[j] = _mm256_max_ps(his[j], v);
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(_mm256_mul_ps(v, zero), zero, _CMP_UNORD_Q));
    }
  }
  if (_mm256_movemask_ps(bad) != 0) return nonfinite_row(k, q);
  alignas(32) float lo8[8], hi8[8];
  _mm256_store_ps(lo8, _mm256_min_ps(_mm256_min_ps(los[0], los[1]), _mm256_min_ps(los[2], los[3])));
  _mm256_store_ps(hi8, _mm256_max_ps(_mm256_max_ps(his[0], his[1]), _mm256_max_ps(his[2], his[3])));
  RowQuant r;
  if (!finish_range(lo8, hi8, 8, x, i, k, &r)) return nonfinite_row(k, q);
  // vcvtps2dq rounds half-to-even (the default MXCSR mode), like nearbyint; the saturating
  // packs clamp to [-128, 127], which equals clamping in f32 (small integers). The packs work
  // per 128-bit lane, so the last permute puts the 4-byte runs back in order.
  const __m256 vs = _mm256_set1_ps(r.scale);
  const __m256i vzp = _mm256_set1_epi32(r.zero);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (i = 0; i + 32 <= k; i += 32) {
    __m256i w[4];
    for (int j = 0; j < 4; ++j)
      w[j] = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_div_ps(_mm256_loadu_ps(x + i + 8 * j), vs)), vzp);
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(w[0], w[1]), _mm256_packs_epi32(w[2], w[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), _mm256_permutevar8x32_epi32(bytes, order));
  }
  quantize_tail(x, i, k, r, q);
  return r;
}

}  // namespace lowbit
