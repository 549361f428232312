// quantize_row (ops/quantize_activations.h) with 512-bit vectors: 16 values per min, max and
// divide instead of SSE2's 4. Still DESIGN §1's division x / s, not a reciprocal multiply, so
// the bits are the scalar definition's; the end of the range, the tail and the per-row scalars are its own
// code (format/row_quant.h).
#include <immintrin.h>

#include "kernels/x86/kernels.h"

// GCC 12 flags the self-initialised `__Y` placeholder inside its own min/max/cvt intrinsics.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lowbit {

RowQuant f32_qa8_quantize_row__avx512vnni(const float* x, size_t k, int8_t* q) {
  // Range: min/max are exact, so the order does not matter; x * 0 is NaN for NaN and ±Inf.
  // Two chains each: one would wait on the latency of min/max every 16 values.
  const __m512 zero = _mm512_setzero_ps();
  __m512 lo0 = zero, lo1 = zero, hi0 = zero, hi1 = zero;
  __mmask16 bad = 0;
  size_t i = 0;
  for (; i + 32 <= k; i += 32) {
    const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    lo0 = _mm512_min_ps(lo0, a);
    hi0 = _mm512_max_ps(hi0, a);
    lo1 = _mm512_min_ps(lo1, b);
    hi1 = _mm512_max_ps(hi1, b);
    bad |= _mm512_cmp_ps_mask(_mm512_mul_ps(a, zero), zero, _CMP_UNORD_Q) |
           _mm512_cmp_ps_mask(_mm512_mul_ps(b, zero), zero, _CMP_UNORD_Q);
  }
  for (; i + 16 <= k; i += 16) {
    const __m512 a = _mm512_loadu_ps(x + i);
    lo0 = _mm512_min_ps(lo0, a);
    hi0 = _mm512_max_ps(hi0, a);
    bad |= _mm512_cmp_ps_mask(_mm512_mul_ps(a, zero), zero, _CMP_UNORD_Q);
  }
  if (bad != 0) return nonfinite_row(k, q);
  alignas(64) float lo16[16], hi16[16];
  _mm512_store_ps(lo16, _mm512_min_ps(lo0, lo1));
  _mm512_store_ps(hi16, _mm512_max_ps(hi0, hi1));
  RowQuant r;
  if (!finish_range(lo16, hi16, 16, x, i, k, &r)) return nonfinite_row(k, q);
  // vcvtps2dq rounds half-to-even (the default MXCSR mode), like nearbyint; vpmovsdb
  // saturates to [-128, 127], which equals clamping in f32 (small integers).
  const __m512 vs = _mm512_set1_ps(r.scale);
  const __m512i vzp = _mm512_set1_epi32(r.zero);
  for (i = 0; i + 16 <= k; i += 16) {
    const __m512i w = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_div_ps(_mm512_loadu_ps(x + i), vs)), vzp);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm512_cvtsepi32_epi8(w));
  }
  quantize_tail(x, i, k, r, q);
  return r;
}

}  // namespace lowbit
