// DESIGN §1's activation quantization, the scalar way: the definition and the pieces every
// vectorised quantizer (ops/quantize_activations.cpp, the ISA ones beside the kernels) shares.
#include "format/row_quant.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace lowbit {

namespace {

inline int8_t quantize_value(float x, float s, float zp) {
  float q = std::nearbyint(x / s) + zp;
  q = std::fmin(std::fmax(q, -128.0f), 127.0f);
  return int8_t(q);
}

// Scale and zero point from the row's range [lo, hi] (lo <= 0 <= hi).
RowQuant row_params(float lo, float hi) {
  float s = (hi - lo) / 255.0f;
  if (s == 0.0f) s = 1.0f;  // a row of zeros (or one whose range underflows)
  float zp = std::nearbyint(-128.0f - lo / s);
  zp = std::fmin(std::fmax(zp, -128.0f), 127.0f);
  return {s, int32_t(zp)};
}

bool range_tail(const float* x, size_t from, size_t k, float* lo, float* hi) {
  for (size_t i = from; i < k; ++i) {
    if (!std::isfinite(x[i])) return false;
    *lo = std::fmin(*lo, x[i]);
    *hi = std::fmax(*hi, x[i]);
  }
  return true;
}

}  // namespace

RowQuant nonfinite_row(size_t k, int8_t* q) {
  std::memset(q, 0, k);
  return {std::numeric_limits<float>::quiet_NaN(), 0};
}

bool finish_range(const float* lo_lanes, const float* hi_lanes, size_t lanes, const float* x,
                  size_t from, size_t k, RowQuant* r) {
  // No NaN among the lanes: plain compares (std::fmin would be a libm call per lane).
  float lo = 0.0f, hi = 0.0f;
  for (size_t j = 0; j < lanes; ++j) {
    lo = lo_lanes[j] < lo ? lo_lanes[j] : lo;
    hi = hi_lanes[j] > hi ? hi_lanes[j] : hi;
  }
  if (!range_tail(x, from, k, &lo, &hi)) return false;
  *r = row_params(lo, hi);
  return true;
}

void quantize_tail(const float* x, size_t from, size_t k, RowQuant r, int8_t* q) {
  for (size_t i = from; i < k; ++i) q[i] = quantize_value(x[i], r.scale, float(r.zero));
}

RowQuant quantize_row_scalar(const float* x, size_t k, int8_t* q) {
  float lo = 0.0f, hi = 0.0f;
  if (!range_tail(x, 0, k, &lo, &hi)) return nonfinite_row(k, q);
  const RowQuant r = row_params(lo, hi);
  quantize_tail(x, 0, k, r, q);
  return r;
}

}  // namespace lowbit
