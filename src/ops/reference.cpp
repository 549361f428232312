#include "ops/reference.h"

#include <cmath>
#include <limits>
#include <vector>

#include "ops/quantize_activations.h"
#include "registry/kernel.h"

namespace lowbit {

void reference_linear(const WeightProblem& p, const int8_t* qvals, const float* scales,
                      const int8_t* zeros, const float* bias, int m, const float* x, float* y,
                      ClampRange clamp) {
  const float lo = clamp.on ? clamp.lo : -std::numeric_limits<float>::infinity();
  const float hi = clamp.on ? clamp.hi : std::numeric_limits<float>::infinity();
  const int G = p.groups();
  std::vector<int8_t> qx(size_t(p.k));
  for (int r = 0; r < m; ++r) {
    const RowQuant rq = quantize_row_scalar(x + size_t(r) * p.k, size_t(p.k), qx.data());
    for (int col = 0; col < p.n; ++col) {
      float acc = 0.0f;
      for (int g = 0; g < G; ++g) {
        const int32_t zw = zeros ? zeros[size_t(col) * G + g] : 0;
        int32_t d = 0;
        for (int i = g * p.group_size; i < (g + 1) * p.group_size; ++i)
          d += (int32_t(qx[i]) - rq.zero) * (int32_t(qvals[size_t(col) * p.k + i]) - zw);
        acc = std::fma(float(d), scales[size_t(col) * G + g], acc);
      }
      y[size_t(r) * p.n + col] = finish_output(acc, rq.scale, bias ? bias[col] : 0.0f, lo, hi);
    }
  }
}

void float_reference_linear(const WeightProblem& p, const int8_t* qvals, const float* scales,
                            const int8_t* zeros, const float* bias, int m, const float* x,
                            float* y, ClampRange clamp) {
  const int G = p.groups();
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < p.n; ++col) {
      double acc = bias ? bias[col] : 0.0;
      for (int i = 0; i < p.k; ++i) {
        const int g = i / p.group_size;
        const int zw = zeros ? zeros[size_t(col) * G + g] : 0;
        const double w = double(scales[size_t(col) * G + g]) * (qvals[size_t(col) * p.k + i] - zw);
        acc += double(x[size_t(r) * p.k + i]) * w;
      }
      float v = float(acc);
      if (clamp.on) v = std::fmin(std::fmax(v, clamp.lo), clamp.hi);
      y[size_t(r) * p.n + col] = v;
    }
}

}  // namespace lowbit
