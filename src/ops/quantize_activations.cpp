#include "ops/quantize_activations.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace lowbit {

#if defined(__SSE2__)

RowQuant quantize_row(const float* x, size_t k, int8_t* q) {
  // Range: min/max are exact, so the reduction order does not matter. A non-finite value is
  // detected by x*0 != 0 (NaN for Inf and NaN). Four independent chains: one would wait on
  // the latency of min/max every four values.
  const __m128 zero = _mm_setzero_ps();
  __m128 los[4] = {zero, zero, zero, zero}, his[4] = {zero, zero, zero, zero};
  __m128 bads[4] = {zero, zero, zero, zero};
  size_t i = 0;
  const auto range = [&](int j, const float* p) {
    const __m128 v = _mm_loadu_ps(p);
    los[j] = _mm_min_ps(los[j], v);
    his[j] = _mm_max_ps(his[j], v);
    bads[j] = _mm_or_ps(bads[j], _mm_cmpunord_ps(_mm_mul_ps(v, zero), zero));
  };
  for (; i + 16 <= k; i += 16) {
    for (int j = 0; j < 4; ++j) range(j, x + i + 4 * j);
  }
  for (; i + 4 <= k; i += 4) range(0, x + i);
  const __m128 vlo = _mm_min_ps(_mm_min_ps(los[0], los[1]), _mm_min_ps(los[2], los[3]));
  const __m128 vhi = _mm_max_ps(_mm_max_ps(his[0], his[1]), _mm_max_ps(his[2], his[3]));
  const __m128 bad = _mm_or_ps(_mm_or_ps(bads[0], bads[1]), _mm_or_ps(bads[2], bads[3]));
  if (_mm_movemask_ps(bad) != 0) return nonfinite_row(k, q);
  float lo4[4], hi4[4];
  _mm_storeu_ps(lo4, vlo);
  _mm_storeu_ps(hi4, vhi);
  RowQuant r;
  if (!finish_range(lo4, hi4, 4, x, i, k, &r)) return nonfinite_row(k, q);
  // cvtps2dq rounds half-to-even in the default rounding mode, like nearbyint. Clamping in
  // int32 after the add equals clamping in f32: both values are small integers.
  const __m128 vs = _mm_set1_ps(r.scale);
  const __m128i vzp = _mm_set1_epi32(r.zero);
  for (i = 0; i + 16 <= k; i += 16) {
    __m128i w[4];
    for (int j = 0; j < 4; ++j) {
      const __m128 v = _mm_div_ps(_mm_loadu_ps(x + i + 4 * j), vs);
      w[j] = _mm_add_epi32(_mm_cvtps_epi32(v), vzp);
    }
    // Saturating packs clamp to [-128, 127] exactly.
    const __m128i w01 = _mm_packs_epi32(w[0], w[1]), w23 = _mm_packs_epi32(w[2], w[3]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(w01, w23));
  }
  quantize_tail(x, i, k, r, q);
  return r;
}

#elif defined(__aarch64__)

RowQuant quantize_row(const float* x, size_t k, int8_t* q) {
  // The same two passes with Advanced SIMD (baseline on AArch64), four chains each.
  const float32x4_t zero = vdupq_n_f32(0.0f);
  float32x4_t los[4] = {zero, zero, zero, zero}, his[4] = {zero, zero, zero, zero};
  uint32x4_t bads[4] = {vdupq_n_u32(0), vdupq_n_u32(0), vdupq_n_u32(0), vdupq_n_u32(0)};
  size_t i = 0;
  const auto range = [&](int j, const float* p) {
    const float32x4_t v = vld1q_f32(p);
    los[j] = vminq_f32(los[j], v);
    his[j] = vmaxq_f32(his[j], v);
    const float32x4_t z = vmulq_f32(v, zero);  // NaN for NaN and ±Inf, else ±0
    bads[j] = vorrq_u32(bads[j], vmvnq_u32(vceqq_f32(z, z)));
  };
  for (; i + 16 <= k; i += 16) {
    for (int j = 0; j < 4; ++j) range(j, x + i + 4 * j);
  }
  for (; i + 4 <= k; i += 4) range(0, x + i);
  const uint32x4_t bad = vorrq_u32(vorrq_u32(bads[0], bads[1]), vorrq_u32(bads[2], bads[3]));
  if (vmaxvq_u32(bad) != 0) return nonfinite_row(k, q);
  float lo4[4], hi4[4];
  vst1q_f32(lo4, vminq_f32(vminq_f32(los[0], los[1]), vminq_f32(los[2], los[3])));
  vst1q_f32(hi4, vmaxq_f32(vmaxq_f32(his[0], his[1]), vmaxq_f32(his[2], his[3])));
  RowQuant r;
  if (!finish_range(lo4, hi4, 4, x, i, k, &r)) return nonfinite_row(k, q);
  // fcvtns rounds to nearest, ties to even, like nearbyint; the saturating narrows clamp to
  // [-128, 127], which equals clamping in f32 (small integers).
  const float32x4_t vs = vdupq_n_f32(r.scale);
  const int32x4_t vzp = vdupq_n_s32(r.zero);
  for (i = 0; i + 16 <= k; i += 16) {
    int32x4_t w[4];
    for (int j = 0; j < 4; ++j)
      w[j] = vaddq_s32(vcvtnq_s32_f32(vdivq_f32(vld1q_f32(x + i + 4 * j), vs)), vzp);
    const int16x8_t w01 = vcombine_s16(vqmovn_s32(w[0]), vqmovn_s32(w[1]));
    const int16x8_t w23 = vcombine_s16(vqmovn_s32(w[2]), vqmovn_s32(w[3]));
    vst1q_s8(q + i, vcombine_s8(vqmovn_s16(w01), vqmovn_s16(w23)));
  }
  quantize_tail(x, i, k, r, q);
  return r;
}

#else

RowQuant quantize_row(const float* x, size_t k, int8_t* q) { return quantize_row_scalar(x, k, q); }

#endif

}  // namespace lowbit
