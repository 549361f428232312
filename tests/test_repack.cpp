// Weights packed for another CPU: a clear UNSUPPORTED, and repacking (between every pair of
// layouts) that gives bit-identical results.
#include <gtest/gtest.h>

#include "format/layouts.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.h"
#include "lowbit/lowbit.hpp"
#include "select/select_layout.h"
#include "test_util.h"

namespace lowbit {
namespace {

TEST(Repack, EveryPairOfLayoutsRoundTripsExactly) {
  const WeightProblem p{37, 128, 5, 32, true, true};
  const test::Weights w = test::random_weights(p, 31, true);
  for (const LayoutDesc& from : all_layouts())
    for (const LayoutDesc& to : all_layouts()) {
      const PackedBuffer a = pack_buffer(from, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
      std::vector<int8_t> q(w.q.size()), z(w.zeros.size());
      std::vector<float> s(w.scales.size()), bias(w.bias.size());
      unpack_payload(a.geo, a.payload(), q.data(), s.data(), z.data(), bias.data());
      const PackedBuffer b = pack_buffer(to, p, q.data(), s.data(), z.data(), bias.data());
      const PackedBuffer direct = pack_buffer(to, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
      ASSERT_EQ(b.bytes.size(), direct.bytes.size()) << from.name << " -> " << to.name;
      EXPECT_EQ(std::memcmp(b.bytes.data(), direct.bytes.data(), b.bytes.size()), 0)
          << from.name << " -> " << to.name;
    }
}

TEST(Repack, EveryTargetPacksAndRepacksForThisCpuBitExactly) {
  const WeightProblem p{70, 256, 4, 64, false, true};
  const test::Weights w = test::random_weights(p, 32, true);
  test::Activations x = test::random_activations(5, p.k, 33);
  const std::vector<float> want = test::reference(w, 5, x.x);
  for (const std::string& target : target_names()) {
    const PackedWeights packed = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(),
                                                     w.scales.data(), nullptr, w.bias_ptr(), target);
    std::vector<float> y(want.size());
    bool runs_here = true;
    try {
      packed.linear(5, x.x, y.data());
    } catch (const Error& e) {
      runs_here = false;
      EXPECT_EQ(e.status(), Status::unsupported) << target;
      EXPECT_NE(std::string(e.what()).find(packed.info().layout), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("missing ISA"), std::string::npos) << e.what();
    }
    if (runs_here) {
      EXPECT_TRUE(test::bits_equal(y.data(), want.data(), y.size())) << target;
    }
    const PackedWeights here = packed.repack();
    std::fill(y.begin(), y.end(), 0.0f);
    here.linear(5, x.x, y.data());
    EXPECT_TRUE(test::bits_equal(y.data(), want.data(), y.size())) << target << " repacked";
  }
}

TEST(Repack, CApiReportsUnsupportedThenRepacks) {
  const WeightProblem p{16, 64, 4, 32, false, false};
  const test::Weights w = test::random_weights(p, 34);
  // A target this build can describe but not run: the other architecture's best.
  const char* foreign = kBuildArch == Arch::x86_64 ? "aarch64-i8mm" : "x86-avx512vnni";
  lowbit_packed_weights* pw = nullptr;
  ASSERT_EQ(lowbit_pack_weights(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr,
                                nullptr, foreign, &pw),
            LOWBIT_OK)
      << lowbit_last_error();
  test::Activations x = test::random_activations(1, p.k, 35);
  std::vector<float> y(size_t(p.n));
  const lowbit_status s = lowbit_linear(pw, 1, x.x, y.data(), nullptr);
  const std::string error = lowbit_last_error();  // the calls below clear it
  lowbit_packed_weights* here = nullptr;
  ASSERT_EQ(lowbit_repack(pw, nullptr, &here), LOWBIT_OK) << lowbit_last_error();
  ASSERT_EQ(lowbit_linear(here, 1, x.x, y.data(), nullptr), LOWBIT_OK);
  EXPECT_TRUE(test::bits_equal(y.data(), test::reference(w, 1, x.x).data(), y.size()));
  if (s != LOWBIT_OK) {
    EXPECT_EQ(s, LOWBIT_UNSUPPORTED);
    EXPECT_NE(error.find("missing ISA"), std::string::npos) << error;
  }
  lowbit_free(here);
  lowbit_free(pw);
}

// A layout no kernel reads any more (superseded by one with column sums) still loads; a call
// says so, not that this CPU lacks something, and repack makes the weights run, bit-exactly.
TEST(Repack, ASupersededLayoutSaysSoAndRepacks) {
  const WeightProblem p{24, 64, 4, 32, false, false};
  const test::Weights w = test::random_weights(p, 41, true);
  const test::Activations x = test::random_activations(1, p.k, 42);
  const LayoutDesc* old = nullptr;
  for (const LayoutDesc& l : all_layouts())
    if (std::string(l.name) == "x86_avx2_n8k4s32") old = &l;
  ASSERT_NE(old, nullptr);
  const PackedBuffer b = pack_buffer(*old, p, w.q.data(), w.scales.data(), nullptr, nullptr);
  const PackedWeights packed = PackedWeights::from_buffer(b.data(), b.size());
  std::vector<float> y(size_t(p.n));
  try {
    packed.linear(1, x.x, y.data());
    ADD_FAILURE() << "a superseded layout ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::unsupported);
    EXPECT_NE(std::string(e.what()).find("no kernel reads layout x86_avx2_n8k4s32 any more"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("repack"), std::string::npos) << e.what();
  }
  packed.repack().linear(1, x.x, y.data());
  EXPECT_TRUE(test::bits_equal(y.data(), test::reference(w, 1, x.x).data(), y.size()));
}

}  // namespace
}  // namespace lowbit
