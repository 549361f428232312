#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "format/layouts.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/linear.h"
#include "ops/live_weights.h"
#include "test_util.h"
#include "util/bf16.h"

namespace lowbit {
namespace {

// The generic packer is exactly invertible for every geometry a layout may choose.
TEST(Layout, PackUnpackRoundTripForManyGeometries) {
  for (int nr : {1, 3, 8, 16})
    for (int kr : {1, 4, 8, 16})
      for (int sr : {1, 16, 32, 64})
        for (int bits = 1; bits <= 8; ++bits) {
          LayoutDesc l = LayoutDesc::family(999, "test", Arch::unknown, IsaSet{}).panel(nr, kr, sr).bf16_scales_when_exact();
          if ((nr + bits) % 2 == 0) l = l.with_col_sums();
          const WeightProblem p{nr * 2 + 1, 96, bits, 48, bits % 2 == 0, bits % 3 == 0};
          const test::Weights w = test::random_weights(p, uint32_t(nr * kr + sr + bits), bits > 4);
          const PackedBuffer b = pack_buffer(l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
          std::vector<int8_t> q(w.q.size()), z(w.zeros.size());
          std::vector<float> s(w.scales.size()), bias(w.bias.size());
          unpack_payload(b.geo, b.payload(), q.data(), s.data(), p.has_zeros ? z.data() : nullptr,
                         p.has_bias ? bias.data() : nullptr);
          ASSERT_EQ(q, w.q) << "nr " << nr << " kr " << kr << " sr " << sr << " bits " << bits;
          ASSERT_EQ(s, w.scales);
          ASSERT_EQ(z, w.zeros);
          ASSERT_EQ(bias, w.bias);
          EXPECT_EQ(b.header.scale_format, bits > 4 ? ScaleFormat::bf16 : ScaleFormat::f32);
        }
}

// Table-lookup layouts (lut_k4): the round trip, and every index bit and scale where
// format/layout.h says it is, read here from that description alone.
TEST(Layout, LutIndicesHoldEveryBitWhereTheFormatSays) {
  for (int nr : {16, 32, 64})
    for (int bits = 1; bits <= 8; ++bits)
      for (int group : {16, 48}) {
        const LayoutDesc l =
            LayoutDesc::family(999, "test", Arch::unknown, IsaSet{}).panel(nr, 4, nr).bf16_scales_when_exact().lut_indices();
        const WeightProblem p{nr + 3, group * 2, bits, group, bits % 2 == 0, bits % 3 == 0};
        const test::Weights w = test::random_weights(p, uint32_t(nr + bits + group), group == 16);
        const PackedBuffer b = pack_buffer(l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
        const PackedGeometry& g = b.geo;
        ASSERT_EQ(g.record_bytes, size_t(nr) * group * bits / 8 + size_t(nr) * (group == 16 ? 2 : 4) + (p.has_zeros ? nr : 0));
        const int o = 1 << (bits - 1), runs = nr / 4;
        for (int col = 0; col < p.n; ++col)
          for (int kk = 0; kk < p.k; ++kk) {
            const uint8_t* rec = b.payload() + g.record_offset(col / nr, kk / group);
            const int c = col % nr, r = c / runs, i = c % runs, t = kk % group / 8, j = kk % 8;
            const int pos = 16 * (i / 4) + 8 * (r / 2) + 2 * (i % 4) + r % 2;
            const int u = w.q[size_t(col) * p.k + kk] + o;
            for (int plane = 0; plane < bits; ++plane)
              ASSERT_EQ(rec[(t * bits + plane) * nr + pos] >> j & 1, u >> plane & 1)
                  << "nr " << nr << " bits " << bits << " col " << col << " k " << kk << " plane " << plane;
          }
        for (int col = 0; col < p.n; ++col)
          for (int grp = 0; grp < g.groups; ++grp) {
            const uint8_t* rec = b.payload() + g.record_offset(col / nr, grp);
            const int c = col % nr, r = c / runs, i = c % runs;
            float s;
            if (group == 16) {
              uint16_t h;
              std::memcpy(&h, rec + g.scales_offset + 2 * (2 * runs * (r / 2) + 2 * i + r % 2), 2);
              s = bf16_to_f32(h);
            } else {
              std::memcpy(&s, rec + g.scales_offset + 4 * c, 4);
            }
            ASSERT_EQ(s, w.scales[size_t(col) * g.groups + grp]) << "nr " << nr << " col " << col;
            if (p.has_zeros) {
              ASSERT_EQ(int8_t(rec[g.zeros_offset + c]), w.zeros[size_t(col) * g.groups + grp]);
            }
          }
        std::vector<int8_t> q(w.q.size()), z(w.zeros.size());
        std::vector<float> sc(w.scales.size()), bias(w.bias.size());
        unpack_payload(g, b.payload(), q.data(), sc.data(), p.has_zeros ? z.data() : nullptr,
                       p.has_bias ? bias.data() : nullptr);
        ASSERT_EQ(q, w.q);
        ASSERT_EQ(sc, w.scales);
        ASSERT_EQ(z, w.zeros);
        ASSERT_EQ(bias, w.bias);
      }
}

// Column-sum layouts: every lane is Su | cz << 16 of its sum block (format/layout.h),
// recomputed here from the unpacked weights, for group sizes with one and several blocks.
TEST(Layout, ColumnSumsHoldSuAndCzOfEverySumBlock) {
  for (int group : {16, 32, 48, 128, 144, 256})
    for (int bits : {1, 4, 5, 8})
      for (bool zeros : {false, true}) {
        const LayoutDesc l = LayoutDesc::family(999, "test", Arch::unknown, IsaSet{}).panel(8, 4, 32).bf16_scales_when_exact().with_col_sums();
        const WeightProblem p{11, group * 2, bits, group, zeros, false};
        const test::Weights w = test::random_weights(p, uint32_t(group + bits));
        const PackedBuffer b = pack_buffer(l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), nullptr);
        const PackedGeometry& g = b.geo;
        const int block = group % 128 == 0 ? 128 : group == 144 ? 48 : group;
        ASSERT_EQ(g.sum_block, block) << group;
        ASSERT_EQ(g.sums_per_group, group / block);
        const int o = 1 << (bits - 1);
        for (int col = 0; col < g.n_padded; ++col)
          for (int grp = 0; grp < g.groups; ++grp)
            for (int s = 0; s < g.sums_per_group; ++s) {
              int su = 0, cz = o;
              if (col < p.n) {
                for (int i = 0; i < block; ++i) su += w.q[size_t(col) * p.k + grp * group + s * block + i] + o;
                if (zeros) cz += w.zeros[size_t(col) * g.groups + grp];
              }
              int32_t lane;
              std::memcpy(&lane, b.payload() + g.sums_entry(col / 8, grp, s) + 4 * (col % 8), 4);
              ASSERT_EQ(int16_t(lane & 0xFFFF), su) << "group " << group << " bits " << bits << " col " << col;
              ASSERT_EQ(int16_t(lane >> 16), cz) << "group " << group << " bits " << bits << " col " << col;
            }
        std::vector<int8_t> q(w.q.size()), z(w.zeros.size());
        std::vector<float> sc(w.scales.size());
        unpack_payload(g, b.payload(), q.data(), sc.data(), zeros ? z.data() : nullptr, nullptr);
        ASSERT_EQ(q, w.q);
        ASSERT_EQ(z, w.zeros);
      }
}

// Sums that disagree with the weights are corrupt data even under a valid checksum.
TEST(Layout, ColumnSumsThatDisagreeWithTheWeightsAreCorruptData) {
  const LayoutDesc* l = find_layout("x86_avx2_n8k4s32_sums");
  ASSERT_NE(l, nullptr);
  const WeightProblem p{9, 64, 4, 32, true, false};
  const test::Weights w = test::random_weights(p, 8);
  PackedBuffer b = pack_buffer(*l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), nullptr);
  uint8_t* payload = b.bytes.data() + kHeaderSize;
  payload[b.geo.sums_entry(1, 1, 0) + 5] ^= 1;  // panel 1, group 1, column 1
  b.header.payload_crc = crc32_of(payload, b.geo.payload_bytes);
  const auto hdr = encode_header(b.header);
  std::memcpy(b.bytes.data(), hdr.data(), kHeaderSize);
  try {
    parse_buffer(b.bytes.data(), b.bytes.size());
    FAIL() << "wrong column sums were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("column sums of panel 1 group 1"), std::string::npos) << e.what();
  }
}

TEST(Layout, PayloadBytesMatchTheBitWidth) {
  const WeightProblem p{64, 4096, 4, 32, false, false};
  const PackedGeometry g = make_geometry(portable_layout(), p, ScaleFormat::bf16);
  EXPECT_EQ(g.payload_bytes, size_t(64) * 4096 / 2 + size_t(64) * 128 * 2);
}

class Files : public ::testing::Test {
 protected:
  const test::TempDir tmp{"lowbit_files"};
  std::string path = tmp.path() + "/weights.bin";
};

TEST_F(Files, SaveLoadAndBufferRoundTripsGiveIdenticalResults) {
  const WeightProblem p{19, 64, 5, 32, true, true};
  const test::Weights w = test::random_weights(p, 3);
  const PackedWeights a = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(),
                                              w.scales.data(), w.zeros_ptr(), w.bias_ptr());
  a.save(path);
  const PackedWeights b = PackedWeights::load(path);
  const PackedWeights c = PackedWeights::from_buffer(a.data(), a.size());
  ASSERT_EQ(b.size(), a.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size()), 0);
  test::Activations x = test::random_activations(3, p.k, 4);
  std::vector<float> ya(3 * p.n), yb(3 * p.n), yc(3 * p.n);
  a.linear(3, x.x, ya.data());
  b.linear(3, x.x, yb.data());
  c.linear(3, x.x, yc.data());
  EXPECT_TRUE(test::bits_equal(ya.data(), yb.data(), ya.size()));
  EXPECT_TRUE(test::bits_equal(ya.data(), yc.data(), ya.size()));
  EXPECT_TRUE(test::bits_equal(ya.data(), test::reference(w, 3, x.x).data(), ya.size()));
}

// A view reads the caller's bytes in place (PyTorch keeps packed weights in its own tensors),
// validated like a copy, and the same results.
// A buffer of format version 1 (each panel's column sums right after its records) loads as
// the same bytes as packing the weights anew, copied or through a view (which then copies).
TEST(Layout, Version1BuffersLoadAsTheirPackingInTheCurrentVersion) {
  for (const char* name : {"x86_avx2_n8k4s32_sums", "x86_avx512_n16k4s64_sums", "portable_n1k1s1"}) {
    const LayoutDesc* l = find_layout(name);
    ASSERT_NE(l, nullptr);
    const WeightProblem p{21, 96, 4, 32, true, true};
    const test::Weights w = test::random_weights(p, 3);
    const PackedBuffer now = pack_buffer(*l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
    PackedHeader h = now.header;
    h.version = 1;
    const PackedGeometry g1 = make_geometry(*l, p, h.scale_format, 1);
    h.payload_bytes = g1.payload_bytes;
    AlignedBuffer old(kHeaderSize + g1.payload_bytes);
    pack_payload(g1, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr(), old.data() + kHeaderSize);
    h.payload_crc = crc32_of(old.data() + kHeaderSize, g1.payload_bytes);
    const auto hdr = encode_header(h);
    std::memcpy(old.data(), hdr.data(), kHeaderSize);
    // Only the column-sum layouts were arranged differently.
    const bool moved = g1.payload_bytes != now.geo.payload_bytes ||
                       std::memcmp(old.data() + kHeaderSize, now.payload(), g1.payload_bytes) != 0;
    EXPECT_EQ(moved, l->col_sums) << name;
    for (bool view : {false, true}) {
      const PackedBuffer b = view ? view_buffer(old.data(), old.size()) : parse_buffer(old.data(), old.size());
      EXPECT_EQ(b.header.version, kFormatVersion) << name;
      ASSERT_EQ(b.size(), now.size()) << name;
      EXPECT_EQ(std::memcmp(b.data(), now.data(), now.size()), 0) << name << (view ? " (view)" : "");
    }
  }
}

TEST(View, ReadsTheCallersMemoryInPlaceAfterValidatingIt) {
  const WeightProblem p{19, 64, 3, 32, true, true};
  const test::Weights w = test::random_weights(p, 8);
  const PackedWeights a = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(),
                                              w.scales.data(), w.zeros_ptr(), w.bias_ptr());
  AlignedBuffer mem(a.size() + AlignedBuffer::kAlign);
  std::memcpy(mem.data(), a.data(), a.size());
  const PackedWeights v = PackedWeights::view(mem.data(), a.size());
  EXPECT_EQ(v.data(), mem.data());
  EXPECT_EQ(v.size(), a.size());
  EXPECT_EQ(v.info().total_bytes, a.size());
  test::Activations x = test::random_activations(5, p.k, 9);
  std::vector<float> ya(5 * p.n), yv(5 * p.n);
  a.linear(5, x.x, ya.data());
  v.linear(5, x.x, yv.data());
  EXPECT_TRUE(test::bits_equal(ya.data(), yv.data(), ya.size()));
  const PackedWeights r = v.repack("portable");
  EXPECT_NE(r.data(), mem.data());

  std::memmove(mem.data() + 16, mem.data(), a.size());
  try {
    PackedWeights::view(mem.data() + 16, a.size());
    FAIL() << "a misaligned view was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
  }
  std::memmove(mem.data(), mem.data() + 16, a.size());
  mem.data()[kHeaderSize + 3] ^= 1;
  try {
    PackedWeights::view(mem.data(), a.size());
    FAIL() << "a corrupt payload was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::corrupt_data);
  }
}

// The live count once an earlier test's late worker has let go of that call's weights (it holds
// them past the call's return, ops/thread_pool.h: seen under qemu): nothing else here outlives
// its test, so wait for zero (at most 10 s) rather than start from a count that is still falling.
size_t settled_live_weight_bytes() {
  for (int i = 0; i < 1000 && live_weight_bytes() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return live_weight_bytes();
}

// The process's live packed weights (ops/live_weights.h) count a buffer once, whatever holds
// it: an owner, its copies, and a view of the same bytes; a view of other bytes is another.
TEST(View, CountsOnceAmongTheLiveWeights) {
  const WeightProblem p{64, 128, 4, 32, false, false};
  const test::Weights w = test::random_weights(p, 3);
  const size_t before = settled_live_weight_bytes();
  {
    const PackedWeights a = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(),
                                                nullptr, nullptr);
    EXPECT_EQ(live_weight_bytes(), before + a.size());
    {
      const PackedWeights copy = a;  // NOLINT: a second holder of the same Impl
      const PackedWeights v = PackedWeights::view(a.data(), a.size());
      EXPECT_EQ(live_weight_bytes(), before + a.size());
      AlignedBuffer mem(a.size());
      std::memcpy(mem.data(), a.data(), a.size());
      const PackedWeights other = PackedWeights::view(mem.data(), a.size());
      EXPECT_EQ(live_weight_bytes(), before + 2 * a.size());
    }
    EXPECT_EQ(live_weight_bytes(), before + a.size());
  }
  EXPECT_EQ(live_weight_bytes(), before);
}

// A call plans with the live packed weights as its working set once they exceed the CPU's L3,
// under the streamed cache key; while L3 holds them, with the weights alone (ops/linear.h).
TEST(View, ACallPlansWithTheLiveWeightsOnceTheyOutgrowL3) {
  const WeightProblem p{64, 128, 4, 32, false, false};
  const test::Weights w = test::random_weights(p, 4);
  settled_live_weight_bytes();
  const PackedWeights a = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(),
                                              nullptr, nullptr);
  const PackedHeader& h = a.impl().buf.header;
  const size_t live = live_weight_bytes();
  CpuProfile prof = host_profile();
  for (const int m : {1, 8}) {
    prof.caches.l3 = live - 1;
    const ExecPlan streamed = call_plan(default_registry(), prof, h, m, 2);
    EXPECT_EQ(streamed.key, plan_key(m, 2, true));
    EXPECT_EQ(streamed.per_uarch[0].est_ns,
              make_plan(default_registry(), prof, h, m, 2, nullptr, true, nullptr, live).per_uarch[0].est_ns);
    prof.caches.l3 = live;
    const ExecPlan alone = call_plan(default_registry(), prof, h, m, 2);
    EXPECT_EQ(alone.key, plan_key(m, 2, false));
    EXPECT_EQ(alone.per_uarch[0].est_ns, make_plan(default_registry(), prof, h, m, 2).per_uarch[0].est_ns);
  }
}

TEST_F(Files, FlippedBitInASavedFileIsDetected) {
  const WeightProblem p{4, 32, 2, 16, false, false};
  const test::Weights w = test::random_weights(p, 5);
  PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr).save(path);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(140);
  char c;
  f.get(c);
  f.seekp(140);
  f.put(char(c ^ 4));
  f.close();
  try {
    PackedWeights::load(path);
    FAIL() << "a flipped payload bit was not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(Files, MissingFileAndUnwritablePathAreIoErrors) {
  try {
    PackedWeights::load(path + ".does-not-exist");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::io_error);
  }
  const WeightProblem p{4, 32, 2, 16, false, false};
  const test::Weights w = test::random_weights(p, 5);
  const PackedWeights a =
      PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr);
  try {
    a.save("/nonexistent-dir/x.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::io_error);
  }
}

TEST(Pack, RejectsOutOfRangeValuesNamingThem) {
  const WeightProblem p{3, 32, 3, 16, false, false};
  test::Weights w = test::random_weights(p, 6);
  w.q[37] = 4;  // 3-bit range is [-4, 3]
  try {
    PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("qvals[37]"), std::string::npos) << e.what();
  }
  w.q[37] = 0;
  w.scales[2] = INFINITY;
  EXPECT_THROW(PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr), Error);
}

TEST(Pack, UnknownTargetIsAnArgumentError) {
  const WeightProblem p{3, 32, 4, 16, false, false};
  const test::Weights w = test::random_weights(p, 6);
  try {
    PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr, "x86-avx9000");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("x86-avx9000"), std::string::npos);
  }
}

}  // namespace
}  // namespace lowbit
