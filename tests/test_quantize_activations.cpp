#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "format/layout.h"
#include "ops/lhs_pack.h"
#include "ops/quantize_activations.h"
#include "test_util.h"

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

// The baseline vectorised path (SSE2 / Advanced SIMD) on every branch: tails, ties, non-finite.
TEST(QuantizeActivations, BaselineMatchesScalarDefinitionOnEveryBranch) {
  test::expect_quantizer_matches_scalar(quantize_row);
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

// Packed LHS blocks: scale, zero point, per-group sums, the (-zx, -Ex) pairs of every sum
// block and the kr-interleaved values (or, for table-lookup kernels, the tables of
// ops/lhs_pack.h), recomputed from quantize_row; rows past m are zero.
// The buffer starts out as garbage: packing is into a reused buffer.
TEST(LhsPack, BlocksHoldScalesSumsPairsAndInterleavedValues) {
  for (int group : {16, 32, 144, 256})
    for (int mr : {1, 4, 8})
      for (int kr : {1, 4, 8, 0}) {  // 0: lookup tables (kr 4)
        const LhsKind kind = kr == 0 ? LhsKind::lut4 : LhsKind::values;
        const size_t k = size_t(group) * 3, m = size_t(mr) + 3, groups = 3;
        const size_t block = size_t(col_sum_block(group));
        std::mt19937 rng(uint32_t(group + mr));
        std::normal_distribution<float> d(0.5f, 2.0f);
        std::vector<float> x(m * k);
        for (float& v : x) v = d(rng);
        const LhsFormat f{mr, kr == 0 ? 4 : kr, kind};
        const LhsBlockLayout l = lhs_block_layout(f, k, groups);
        std::vector<uint8_t> out(l.block_bytes * ((m + mr - 1) / mr) + 64, 0xA5);
        uint8_t* base = out.data() + (64 - reinterpret_cast<uintptr_t>(out.data()) % 64) % 64;
        pack_lhs(f, m, k, size_t(group), x.data(), k, base);
        for (size_t row = 0; row < (m + mr - 1) / mr * mr; ++row) {
          const uint8_t* b = base + row / mr * l.block_bytes;
          const size_t r = row % mr;
          std::vector<int8_t> q(k, 0);
          RowQuant rq{0.0f, 0};
          if (row < m) {
            rq = quantize_row_scalar(x.data() + row * k, k, q.data());
            EXPECT_EQ(std::memcmp(&lhs_scales(b)[r], &rq.scale, 4), 0);
          }
          EXPECT_EQ(lhs_zeros(b, l)[r], rq.zero);
          for (size_t g = 0; g < groups; ++g) {
            int32_t s = 0;
            for (size_t i = 0; i < size_t(group); ++i) s += q[g * group + i];
            EXPECT_EQ(lhs_sums(b, l)[g * mr + r], s);
          }
          for (size_t sb = 0; sb < k / block; ++sb) {
            int32_t sx = 0;
            for (size_t i = 0; i < block; ++i) sx += q[sb * block + i];
            const int32_t pair = lhs_pairs(b, l)[sb * mr + r];
            EXPECT_EQ(int16_t(pair & 0xFFFF), -rq.zero) << "group " << group << " row " << row;
            EXPECT_EQ(int16_t(pair >> 16), -(sx - int32_t(block) * rq.zero)) << "group " << group << " row " << row;
          }
          if (kind == LhsKind::values) {
            for (size_t i = 0; i < k; ++i)
              ASSERT_EQ(lhs_q(b, l)[(i / kr * mr + r) * kr + i % kr], q[i]) << "kr " << kr << " row " << row;
            continue;
          }
          for (size_t j = 0; j < k / 4; ++j)
            for (int e = 0; e < 16; ++e) {
              int t = kLutBias;  // rows past m: zero, like every other part
              for (int bit = 0; bit < 4; ++bit)
                if (e >> bit & 1) t += q[4 * j + size_t(bit)] - rq.zero;
              const uint8_t* tab = lhs_tables(b, l) + (j * mr + r) * kLutTableBytes;
              ASSERT_EQ(int(tab[e]), row < m ? t & 31 : 0) << "group " << group << " row " << row << " j " << j;
              ASSERT_EQ(int(tab[16 + e]), row < m ? t >> 5 : 0) << "group " << group << " row " << row << " j " << j;
            }
        }
      }
}

}  // namespace
}  // namespace lowbit
