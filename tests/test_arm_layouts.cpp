// The aarch64 layouts' packing, on every architecture (weights are packed for Arm targets
// anywhere): two's-complement fields with the top bits in the widest plane round-trip at every
// width; the scaled column sums hold 2^(8-b)·Σq and 2^(8-b)·zw per sum block; weights packed for
// the retired layouts 33 and 34 load, and repack into the current ones with the same results.
#include <gtest/gtest.h>

#include <cstring>

#include "format/layouts.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/linear.h"
#include "test_util.h"

namespace lowbit {
namespace {

constexpr const char* kSigned[] = {"arm_dotprod_n8k4s16_sums", "arm_i8mm_n8k8s16_sums"};

TEST(ArmLayouts, SignedTopAlignedFieldsRoundTripAtEveryWidth) {
  for (const char* name : kSigned)
    for (int bits = 1; bits <= 8; ++bits)
      for (int group : {16, 48, 256}) {
        const LayoutDesc* l = find_layout(name);
        ASSERT_NE(l, nullptr) << name;
        const WeightProblem p{21, group * 2, bits, group, bits % 2 == 0, bits % 3 == 0};
        const test::Weights w = test::random_weights(p, uint32_t(bits * 7 + group), bits > 4);
        const PackedBuffer b = pack_buffer(*l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
        std::vector<int8_t> q(w.q.size()), z(w.zeros.size());
        std::vector<float> s(w.scales.size()), bias(w.bias.size());
        unpack_payload(b.geo, b.payload(), q.data(), s.data(), p.has_zeros ? z.data() : nullptr,
                       p.has_bias ? bias.data() : nullptr);
        ASSERT_EQ(q, w.q) << name << " bits " << bits << " group " << group;
        ASSERT_EQ(s, w.scales);
        ASSERT_EQ(z, w.zeros);
        ASSERT_EQ(bias, w.bias);
      }
}

// odd_width_steps: at 7 bits, vector 7 of a step keeps bit i of its values at bit 0 of chunk
// 6 - i (step_bit); vectors 0-6 their values in the top 7 bits of chunks 0-6. One weight set
// to 1 (bit 0) shows up exactly there, the fields elsewhere holding 0.
TEST(ArmLayouts, OddWidthStepsPutEveryBitWhereStepBitSays) {
  const LayoutDesc* l = find_layout(kSigned[0]);
  for (int v : {3, 7}) {
    const WeightProblem p{8, 32, 7, 32, false, false};
    test::Weights w = test::random_weights(p, 1);
    for (auto& q : w.q) q = 0;
    // Stream value 16v + j of the dot-product layout (nr 8, kr 4): k-block (16v + j) / 32,
    // column (16v + j) % 32 / 4, k (16v + j) % 4 of it.
    const int j = 5, pos = 16 * v + j, col = pos % 32 / 4, k = pos / 32 * 4 + pos % 4;
    w.q[size_t(col) * p.k + k] = 1;
    const PackedBuffer b = pack_buffer(*l, p, w.q.data(), w.scales.data(), nullptr, nullptr);
    const StepBit sb = step_bit(7, v, 0);
    EXPECT_EQ(sb.chunk, v == 7 ? 6 : v);
    for (int byte = 0; byte < 7 * 16; ++byte)
      EXPECT_EQ(b.payload()[byte], byte == sb.chunk * 16 + j ? 1 << sb.bit : 0) << "vector " << v << " byte " << byte;
  }
}

// Column c of panel 0 at 4 bits: stream values (two's complement nibbles) sit where the
// layout's k-interleave puts them; their sum per block, times 16, is the stored S.
TEST(ArmLayouts, ScaledColumnSumsHoldSAndZOfEverySumBlock) {
  for (const char* name : kSigned)
    for (int bits : {1, 3, 4, 8})
      for (int group : {32, 48, 256})
        for (bool zeros : {false, true}) {
          const LayoutDesc* l = find_layout(name);
          const WeightProblem p{13, group * 2, bits, group, zeros, false};
          const test::Weights w = test::random_weights(p, uint32_t(group + bits));
          const PackedBuffer b = pack_buffer(*l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), nullptr);
          const PackedGeometry& g = b.geo;
          ASSERT_EQ(g.sum_block, group == 256 ? 128 : group);
          const int scale = 1 << (8 - bits);
          for (int col = 0; col < g.n_padded; ++col)
            for (int grp = 0; grp < g.groups; ++grp)
              for (int s = 0; s < g.sums_per_group; ++s) {
                int sum = 0, zw = 0;
                if (col < p.n) {
                  for (int i = 0; i < g.sum_block; ++i) sum += w.q[size_t(col) * p.k + grp * group + s * g.sum_block + i];
                  if (zeros) zw = w.zeros[size_t(col) * g.groups + grp];
                }
                int16_t got[2];
                const uint8_t* entry = b.payload() + g.sums_entry(col / 8, grp, s);
                std::memcpy(&got[0], entry + 2 * (col % 8), 2);
                std::memcpy(&got[1], entry + 2 * (8 + col % 8), 2);
                ASSERT_EQ(got[0], scale * sum) << name << " bits " << bits << " group " << group << " col " << col;
                ASSERT_EQ(got[1], scale * zw) << name << " bits " << bits << " group " << group << " col " << col;
              }
        }
}

// Layouts 33 and 34 (offset-binary fields, no sums) have no kernels any more: their buffers
// load, and repack to this CPU's layout computes exactly what the weights define.
TEST(ArmLayouts, RetiredLayoutsLoadAndRepackToTheSameResults) {
  for (const char* name : {"arm_dotprod_n8k4s16", "arm_i8mm_n8k8s16"}) {
    const LayoutDesc* l = find_layout(name);
    ASSERT_NE(l, nullptr) << name;
    const WeightProblem p{24, 128, 4, 32, true, true};
    const test::Weights w = test::random_weights(p, 9);
    const PackedBuffer old = pack_buffer(*l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
    const PackedWeights loaded = PackedWeights::from_buffer(old.data(), old.size());
    EXPECT_EQ(loaded.info().layout, name);
    const PackedWeights now = loaded.repack("");
    const int m = 3;
    const test::Activations x = test::random_activations(m, p.k, 4);
    std::vector<float> y(size_t(m) * p.n);
    now.linear(m, x.x, y.data());
    EXPECT_TRUE(test::bits_equal(y.data(), test::reference(w, m, x.x).data(), y.size())) << name;
  }
}

}  // namespace
}  // namespace lowbit
