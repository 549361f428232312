#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/quantize_activations.h"

namespace lowbit {
namespace {

// The vectorised path equals the scalar definition bit for bit.
void expect_same(const std::vector<float>& x) {
  std::vector<int8_t> a(x.size()), b(x.size());
  const RowQuant ra = quantize_row_scalar(x.data(), x.size(), a.data());
  const RowQuant rb = quantize_row(x.data(), x.size(), b.data());
  EXPECT_EQ(std::memcmp(&ra.scale, &rb.scale, 4), 0) << ra.scale << " vs " << rb.scale;
  EXPECT_EQ(ra.zero, rb.zero);
  EXPECT_EQ(a, b);
}

TEST(QuantizeActivations, ZeroRowGetsScaleOneAndDequantizesToZero) {
  std::vector<float> x(37, 0.0f);
  std::vector<int8_t> q(x.size());
  const RowQuant r = quantize_row_scalar(x.data(), x.size(), q.data());
  EXPECT_EQ(r.scale, 1.0f);
  EXPECT_EQ(r.zero, -128);
  for (int8_t v : q) EXPECT_EQ(r.scale * (v - r.zero), 0.0f);
  expect_same(x);
}

TEST(QuantizeActivations, ConstantRows) {
  for (float c : {3.5f, -2.0f, 1e-30f, 1e30f, -1e30f}) {
    std::vector<float> x(19, c);
    std::vector<int8_t> q(x.size());
    const RowQuant r = quantize_row_scalar(x.data(), x.size(), q.data());
    // 0 is always representable, and the constant lands on an end of the range.
    const float back = r.scale * float(q[0] - r.zero);
    EXPECT_NEAR(back, c, std::fabs(c) * 1e-5f) << c;
    expect_same(x);
  }
}

TEST(QuantizeActivations, NonFiniteRowsGetNaNScale) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    for (size_t pos : {size_t(0), size_t(5), size_t(16), size_t(18)}) {
      std::vector<float> x(19, 1.0f);
      x[pos] = bad;
      std::vector<int8_t> q(x.size(), 7);
      const RowQuant r = quantize_row_scalar(x.data(), x.size(), q.data());
      EXPECT_TRUE(std::isnan(r.scale));
      for (int8_t v : q) EXPECT_EQ(v, 0);
      expect_same(x);
    }
  }
}

TEST(QuantizeActivations, ExtremeMagnitudesAndDenormals) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float mag : {1e-30f, 1e30f, 1e-40f /* denormal */, 1e-45f, 3e38f}) {
    std::vector<float> x(53);
    for (float& v : x) v = d(rng) * mag;
    std::vector<int8_t> q(x.size());
    const RowQuant r = quantize_row_scalar(x.data(), x.size(), q.data());
    EXPECT_TRUE(r.zero >= -128 && r.zero <= 127);
    expect_same(x);
  }
}

TEST(QuantizeActivations, RoundTripErrorIsWithinHalfAStep) {
  std::mt19937 rng(2);
  std::normal_distribution<float> d(0.0f, 3.0f);
  for (size_t k : {1u, 3u, 16u, 31u, 4096u}) {
    std::vector<float> x(k);
    for (float& v : x) v = d(rng);
    std::vector<int8_t> q(k);
    const RowQuant r = quantize_row_scalar(x.data(), k, q.data());
    for (size_t i = 0; i < k; ++i)
      EXPECT_LE(std::fabs(r.scale * float(q[i] - r.zero) - x[i]), r.scale * 0.5001f + 1e-6f);
    expect_same(x);
  }
}

TEST(QuantizeActivations, AllPositiveAndAllNegativeRowsUseTheWholeRange) {
  std::vector<float> pos = {0.5f, 1.0f, 2.0f}, neg = {-0.5f, -1.0f, -2.0f};
  std::vector<int8_t> q(3);
  RowQuant r = quantize_row_scalar(pos.data(), 3, q.data());
  EXPECT_EQ(r.zero, -128);
  EXPECT_EQ(q[2], 127);
  r = quantize_row_scalar(neg.data(), 3, q.data());
  EXPECT_EQ(r.zero, 127);
  EXPECT_EQ(q[2], -128);
}

}  // namespace
}  // namespace lowbit
