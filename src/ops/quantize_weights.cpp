#include <cmath>

#include "format/problem.h"
#include "lowbit/lowbit.hpp"
#include "util/bf16.h"
#include "util/error.h"

namespace lowbit {

QuantizedWeights quantize_weights(const float* w, int n, int k, int bits, int group_size,
                                  bool asymmetric, ScaleFormat scale_format) {
  validate_problem({n, k, bits, group_size, asymmetric, false});
  if (w == nullptr) fail(Status::invalid_argument, "weights are NULL");
  for (size_t i = 0; i < size_t(n) * k; ++i)
    if (!std::isfinite(w[i])) fail(Status::invalid_argument, "w[", i, "] = ", w[i], " is not finite");
  QuantizedWeights q;
  q.n = n;
  q.k = k;
  q.bits = bits;
  q.group_size = group_size;
  const int G = k / group_size;
  q.qvals.resize(size_t(n) * k);
  q.scales.resize(size_t(n) * G);
  if (asymmetric) q.zeros.resize(size_t(n) * G);
  const float qmin = -float(1 << (bits - 1)), qmax = float((1 << (bits - 1)) - 1);
  auto finish_scale = [&](float s) {
    if (!(s > 0.0f) || !std::isfinite(s)) s = 1.0f;  // all-zero (or degenerate) group
    return scale_format == ScaleFormat::bf16 ? round_to_bf16(s) : s;
  };
  for (int r = 0; r < n; ++r)
    for (int g = 0; g < G; ++g) {
      const float* src = w + size_t(r) * k + size_t(g) * group_size;
      float lo = src[0], hi = src[0];
      for (int i = 1; i < group_size; ++i) {
        lo = std::fmin(lo, src[i]);
        hi = std::fmax(hi, src[i]);
      }
      float scale, zero = 0.0f;
      if (asymmetric) {
        scale = finish_scale((hi - lo) / (qmax - qmin));
        zero = std::fmin(std::fmax(std::nearbyint(qmin - lo / scale), -128.0f), 127.0f);
        q.zeros[size_t(r) * G + g] = int8_t(zero);
      } else {
        const float amax = std::fmax(std::fabs(lo), std::fabs(hi));
        scale = finish_scale(amax / std::fmax(qmax, 1.0f));
      }
      q.scales[size_t(r) * G + g] = scale;
      int8_t* dst = q.qvals.data() + size_t(r) * k + size_t(g) * group_size;
      for (int i = 0; i < group_size; ++i) {
        const float v = std::nearbyint(src[i] / scale) + zero;
        dst[i] = int8_t(std::fmin(std::fmax(v, qmin), qmax));
      }
    }
  return q;
}

std::vector<float> dequantize_weights(const QuantizedWeights& q) {
  std::vector<float> w(size_t(q.n) * q.k);
  const int G = q.k / q.group_size;
  for (int r = 0; r < q.n; ++r)
    for (int i = 0; i < q.k; ++i) {
      const size_t gi = size_t(r) * G + i / q.group_size;
      const int z = q.zeros.empty() ? 0 : q.zeros[gi];
      w[size_t(r) * q.k + i] = q.scales[gi] * float(q.qvals[size_t(r) * q.k + i] - z);
    }
  return w;
}

}  // namespace lowbit
