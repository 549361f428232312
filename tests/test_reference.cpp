// The reference (the bit-exact oracle) against float math, and the invariances the result
// contract promises: independent of batching, of m and of the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lowbit/lowbit.hpp"
#include "ops/quantize_activations.h"
#include "ops/reference.h"
#include "test_util.h"

namespace lowbit {
namespace {

TEST(Reference, MatchesFloatMathWithinActivationQuantizationError) {
  for (int bits = 1; bits <= 8; ++bits)
    for (bool zeros : {false, true}) {
      const WeightProblem p{7, 96, bits, 32, zeros, true};
      const test::Weights w = test::random_weights(p, uint32_t(bits), false);
      const int m = 3;
      test::Activations a = test::random_activations(m, p.k, 11);
      const std::vector<float> y = test::reference(w, m, a.x);
      std::vector<float> yf(y.size());
      float_reference_linear(p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr(), m, a.x, yf.data());
      for (int r = 0; r < m; ++r) {
        std::vector<int8_t> q(size_t(p.k));
        const float s = quantize_row_scalar(a.x + size_t(r) * p.k, size_t(p.k), q.data()).scale;
        for (int c = 0; c < p.n; ++c) {
          // |x - xq| <= s/2 per element, so |y - yf| <= s/2 * Σ|w|, plus f32 rounding.
          double wsum = 0;
          for (int i = 0; i < p.k; ++i) {
            const int g = i / p.group_size;
            const int z = zeros ? w.zeros[size_t(c) * p.groups() + g] : 0;
            wsum += std::fabs(double(w.scales[size_t(c) * p.groups() + g]) * (w.q[size_t(c) * p.k + i] - z));
          }
          const double bound = 0.5 * s * wsum * 1.001 + 1e-5 * (1.0 + std::fabs(yf[size_t(r) * p.n + c]));
          EXPECT_LE(std::fabs(double(y[size_t(r) * p.n + c]) - yf[size_t(r) * p.n + c]), bound)
              << "bits " << bits << " zeros " << zeros << " row " << r << " col " << c;
        }
      }
    }
}

TEST(Reference, NaNRowPoisonsOnlyItsOwnOutputs) {
  const WeightProblem p{5, 32, 4, 16, false, true};
  const test::Weights w = test::random_weights(p, 1);
  test::Activations a = test::random_activations(3, p.k, 2);
  a.x[size_t(p.k) + 4] = std::numeric_limits<float>::infinity();
  const std::vector<float> y = test::reference(w, 3, a.x, {true, -1.0f, 1.0f});
  for (int c = 0; c < p.n; ++c) {
    EXPECT_FALSE(std::isnan(y[size_t(c)]));
    EXPECT_TRUE(std::isnan(y[size_t(p.n) + c])) << "clamp must keep NaN";
    EXPECT_FALSE(std::isnan(y[size_t(2 * p.n) + c]));
  }
}

TEST(Reference, ClampBoundsOutputs) {
  const WeightProblem p{9, 64, 8, 32, true, true};
  const test::Weights w = test::random_weights(p, 4);
  test::Activations a = test::random_activations(4, p.k, 5);
  const std::vector<float> y = test::reference(w, 4, a.x, {true, -0.01f, 0.02f});
  for (float v : y) EXPECT_TRUE(v >= -0.01f && v <= 0.02f) << v;
}

// Through the public API, on whatever kernels this CPU selects.
TEST(Invariance, EachRowOfABatchEqualsThatRowAlone) {
  const WeightProblem p{37, 256, 4, 32, true, true};
  const test::Weights w = test::random_weights(p, 6);
  const PackedWeights pw = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(),
                                               w.scales.data(), w.zeros_ptr(), w.bias_ptr());
  for (int m : {2, 5, 13, 64}) {
    test::Activations a = test::random_activations(m, p.k, uint32_t(m));
    std::vector<float> batch(size_t(m) * p.n), row(size_t(p.n));
    pw.linear(m, a.x, batch.data());
    EXPECT_TRUE(test::bits_equal(batch.data(), test::reference(w, m, a.x).data(), batch.size()));
    for (int r = 0; r < m; ++r) {
      pw.linear(1, a.x + size_t(r) * p.k, row.data());
      ASSERT_TRUE(test::bits_equal(row.data(), batch.data() + size_t(r) * p.n, row.size()))
          << "m=" << m << " row " << r;
    }
  }
}

TEST(Invariance, ThreadCountDoesNotChangeABit) {
  const WeightProblem p{300, 512, 3, 64, false, true};
  const test::Weights w = test::random_weights(p, 7);
  const PackedWeights pw = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(),
                                               w.scales.data(), nullptr, w.bias_ptr());
  for (int m : {1, 7, 33}) {
    test::Activations a = test::random_activations(m, p.k, uint32_t(9 + m));
    std::vector<float> y1(size_t(m) * p.n), y(size_t(m) * p.n);
    LinearOptions o;
    o.num_threads = 1;
    pw.linear(m, a.x, y1.data(), o);
    for (int t : {2, 3, 0}) {
      o.num_threads = t;
      pw.linear(m, a.x, y.data(), o);
      ASSERT_TRUE(test::bits_equal(y.data(), y1.data(), y.size())) << "threads " << t << " m " << m;
    }
  }
}

}  // namespace
}  // namespace lowbit
