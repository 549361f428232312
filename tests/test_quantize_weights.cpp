#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lowbit/lowbit.hpp"
#include "util/bf16.h"

namespace lowbit {
namespace {

std::vector<float> random_w(int n, int k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.02f);
  std::vector<float> w(size_t(n) * k);
  for (float& v : w) v = d(rng);
  return w;
}

TEST(QuantizeWeights, ErrorShrinksWithBitsAndStaysInRange) {
  const int n = 8, k = 128;
  const std::vector<float> w = random_w(n, k, 3);
  double last = 1e9;
  for (int bits = 2; bits <= 8; ++bits)
    for (bool asym : {false, true}) {
      const QuantizedWeights q = quantize_weights(w.data(), n, k, bits, 32, asym);
      const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
      for (int8_t v : q.qvals) ASSERT_TRUE(v >= lo && v <= hi) << int(v) << " bits " << bits;
      EXPECT_EQ(q.zeros.empty(), !asym);
      const std::vector<float> back = dequantize_weights(q);
      double err = 0;
      for (size_t i = 0; i < w.size(); ++i) err = std::max(err, double(std::fabs(back[i] - w[i])));
      if (!asym) {
        EXPECT_LT(err, last * 1.01) << bits;
        last = err;
      }
      EXPECT_LT(err, 0.1 * std::pow(2.0, -bits) * 8) << bits << " asym " << asym;
    }
}

TEST(QuantizeWeights, Bf16ScalesAreExact) {
  const std::vector<float> w = random_w(4, 64, 5);
  const QuantizedWeights q = quantize_weights(w.data(), 4, 64, 4, 16, true, ScaleFormat::bf16);
  for (float s : q.scales) EXPECT_TRUE(bf16_exact(s)) << s;
}

TEST(QuantizeWeights, OneBitAndZeroGroups) {
  std::vector<float> w(2 * 32, 0.0f);
  for (int i = 0; i < 32; ++i) w[32 + i] = (i % 2) ? 1.0f : -1.0f;
  const QuantizedWeights q = quantize_weights(w.data(), 2, 32, 1, 16, false);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q.qvals[i], 0);
  for (float s : q.scales) EXPECT_GT(s, 0.0f);
}

TEST(QuantizeWeights, RejectsBadArguments) {
  const std::vector<float> w = random_w(2, 32, 1);
  EXPECT_THROW(quantize_weights(w.data(), 2, 32, 0, 16, false), Error);
  EXPECT_THROW(quantize_weights(w.data(), 2, 32, 9, 16, false), Error);
  EXPECT_THROW(quantize_weights(w.data(), 2, 32, 4, 24, false), Error);
  EXPECT_THROW(quantize_weights(nullptr, 2, 32, 4, 16, false), Error);
  std::vector<float> bad = w;
  bad[3] = NAN;
  try {
    quantize_weights(bad.data(), 2, 32, 4, 16, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("w[3]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lowbit
