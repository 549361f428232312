// Registry-driven: every kernel this CPU (as capped by LOWBIT_ISA) can run is compared with
// the scalar reference, bit for bit, across bit widths, group sizes, zero points, bias, clamp,
// odd m / n tails and unaligned buffers. A new kernel is covered by being registered.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "cpu/profile.h"
#include "format/layouts.h"
#include "format/packed_weights.h"
#include "ops/linear.h"
#include "ops/thread_pool.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "test_util.h"
#include "util/error.h"

namespace lowbit {
namespace {

std::vector<const KernelDesc*> runnable_kernels() {
  std::vector<const KernelDesc*> out;
  for (const KernelDesc& k : default_registry().kernels())
    if (k.fn != nullptr && host_profile().isa.contains(k.requires)) out.push_back(&k);
  return out;
}

struct Case {
  int bits, group, k_groups, n_extra, m;
  bool zeros, bias, clamp;
  float clamp_lo = -0.5f, clamp_hi = 0.75f;
  bool zero_row0 = false;  // row 0 all zeros: outputs are exactly ±0 (or the bias)
  bool one_tile = false;   // all columns in one task (else one column tile per panel)
  size_t l2 = 0;           // the profile's L2 bytes (0: this CPU's)
  int64_t prefetch = -1;   // UKernelArgs::prefetch_bytes (-1: the registry's distance)
};

std::string describe(const KernelDesc& kd, const Case& c) {
  return concat(kd.name, " bits=", c.bits, " group=", c.group, " k=", c.group * c.k_groups,
                " m=", c.m, " zeros=", c.zeros, " bias=", c.bias, " clamp=", c.clamp);
}

// Runs `kd` alone (or as the big tile of a mix with `tail`) and compares with the reference.
void check(const KernelDesc& kd, Case c, const KernelDesc* tail = nullptr, int threads = 1) {
  const LayoutDesc& layout = *default_registry().layout(kd.layout_id);
  const int n = layout.nr * 2 + c.n_extra;
  c.bits = test::width_for(kd, c.bits);
  const WeightProblem p{n, c.group * c.k_groups, c.bits, c.group, c.zeros, c.bias};
  if ((c.zeros && !kd.zeros) || (c.bias && !kd.bias)) return;
  const test::Weights w = test::random_weights(p, uint32_t(c.bits * 131 + c.group + c.m), c.bits % 2);
  const PackedBuffer b = pack_buffer(layout, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
  test::Activations a = test::random_activations(c.m, p.k, uint32_t(c.m * 7 + c.bits), 1 + c.m % 3);
  if (c.m > 2) a.x[size_t(p.k) + 3] = std::numeric_limits<float>::quiet_NaN();  // row 1: NaN
  if (c.zero_row0) std::fill(a.x, a.x + p.k, 0.0f);
  const ClampRange clamp{c.clamp, c.clamp_lo, c.clamp_hi};
  const std::vector<float> want = test::reference(w, c.m, a.x, clamp);

  ExecPlan plan;
  plan.m = c.m;
  plan.threads = threads;
  UarchPlan& up = plan.per_uarch[0];
  const uint32_t prefetch = c.prefetch < 0 ? kd.prefetch_bytes : uint32_t(c.prefetch);
  if (tail != nullptr && c.m > kd.mr && c.m % kd.mr != 0) {
    const int full = c.m / kd.mr * kd.mr;
    up.num_segments = 2;
    up.seg[0] = {&kd, 0, full, prefetch};
    up.seg[1] = {tail, full, c.m - full, tail->prefetch_bytes};
  } else {
    up.num_segments = 1;
    up.seg[0] = {&kd, 0, c.m, prefetch};
  }
  plan.row_tile = (c.m + kd.mr - 1) / kd.mr * kd.mr;
  plan.col_tile = c.one_tile ? b.geo.n_padded : layout.nr;  // several tiles: the tile offsets
  std::vector<float> got(want.size() + 1, -1.0f);
  float* y = got.data() + 1;  // unaligned output
  LinearOptions opt;
  opt.has_clamp = c.clamp;
  opt.clamp_min = clamp.lo;
  opt.clamp_max = clamp.hi;
  CpuProfile prof = host_profile();
  if (c.l2 != 0) prof.caches.l2 = c.l2;
  execute_plan(plan, prof, b, c.m, a.x, y, opt, pool_for_threads(threads), {});
  ASSERT_TRUE(test::bits_equal(y, want.data(), want.size()))
      << describe(kd, c) << " first difference at " << test::first_difference(y, want.data(), want.size());
}

class KernelTest : public ::testing::TestWithParam<const KernelDesc*> {};

TEST_P(KernelTest, EveryBitWidthAndGroupSize) {
  const KernelDesc& kd = *GetParam();
  int i = 0;
  for (int bits = 1; bits <= 8; ++bits)
    for (int group : {16, 32, 64, 128, 256}) {
      ++i;
      check(kd, {bits, group, group == 256 ? 1 : 2, 1 + i % 5, 1 + (i * 5) % 17, i % 2 == 0,
                 bits % 2 == 1, (i / 2) % 2 == 0});
      if (HasFatalFailure()) return;
    }
}

TEST_P(KernelTest, EveryRowCountWithTails) {
  const KernelDesc& kd = *GetParam();
  for (int m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 64})
    for (int bits : {3, 4}) {
      check(kd, {bits, 32, 3, 3, m, true, true, true});
      if (HasFatalFailure()) return;
    }
}

TEST_P(KernelTest, EveryOptionCombination) {
  const KernelDesc& kd = *GetParam();
  for (int bits : {2, 4, 8})
    for (int opts = 0; opts < 8; ++opts) {
      check(kd, {bits, 64, 2, 5, 5, (opts & 1) != 0, (opts & 2) != 0, (opts & 4) != 0});
      if (HasFatalFailure()) return;
    }
}

// One task over several row blocks runs its columns in chunks that fit half of L2, each over
// every block (ops/linear.cpp): a small L2 makes chunks of a few panels, with a last short one.
TEST_P(KernelTest, ColumnChunksOfOneTaskOverEveryRowBlock) {
  const KernelDesc& kd = *GetParam();
  for (int m : {kd.mr + 1, 3 * kd.mr}) {
    Case c{4, 64, 32, 151, m, true, true, true};
    c.one_tile = true;
    c.l2 = 64 * 1024;  // about 28 columns of 2048 4-bit k per chunk
    check(kd, c);
    if (HasFatalFailure()) return;
  }
}

// All columns in one call over many panels: the streaming GEMVs read NP panels a 1/NP of the
// call apart, then the panels left over one by one (gemv.h); the last panel short.
TEST_P(KernelTest, ManyPanelsInOneCall) {
  const KernelDesc& kd = *GetParam();
  const int nr = int(default_registry().layout(kd.layout_id)->nr);
  int i = 0;
  for (int panels : {4, 8, 11, 13, 31})
    for (int bits : {4, 3}) {
      ++i;
      Case c{bits, 32, 2, (panels - 2) * nr - i % 3, kd.mr, i % 2 == 0, true, true};
      c.one_tile = true;
      check(kd, c);
      if (HasFatalFailure()) return;
    }
}

// A kernel that prefetches its weights at any distance a tuning record may give it, none to
// far past the end of the weights: the same bits.
TEST_P(KernelTest, EveryPrefetchDistance) {
  const KernelDesc& kd = *GetParam();
  if (kd.prefetch_bytes == 0) GTEST_SKIP() << kd.name << " does not prefetch";
  const int nr = int(default_registry().layout(kd.layout_id)->nr);
  for (uint32_t d : {0u, 64u, 512u, 8192u, kMaxPrefetchBytes})
    for (int bits : {1, 3, 4, 8}) {
      Case c{bits, 32, 3, 9 * nr + 5, kd.mr, bits % 2 == 1, true, true};
      c.one_tile = true;
      c.prefetch = d;
      check(kd, c);
      if (HasFatalFailure()) return;
    }
}

// Clamp bounds of ±0 against outputs of ±0 and NaN: max/min instructions that order -0 below
// +0, or drop NaN, differ from the reference here and nowhere else.
TEST_P(KernelTest, SignedZeroClampBoundsAndZeroRows) {
  const KernelDesc& kd = *GetParam();
  for (float lo : {-0.0f, 0.0f})
    for (float hi : {-0.0f, 0.0f, 1.0f})
      for (bool bias : {false, true}) {
        Case c{4, 32, 2, 3, 5, true, bias, true};
        c.clamp_lo = lo;
        c.clamp_hi = hi;
        c.zero_row0 = true;
        check(kd, c);
        if (HasFatalFailure()) return;
      }
}

TEST_P(KernelTest, MixedWithEveryOtherTileOfItsLayoutAndThreads) {
  const KernelDesc& kd = *GetParam();
  for (const KernelDesc* tail : default_registry().kernels_for(kd.layout_id)) {
    if (tail->mr >= kd.mr || tail->fn == nullptr || !host_profile().isa.contains(tail->requires)) continue;
    for (int m : {kd.mr + 1, 2 * kd.mr + kd.mr - 1}) {
      check(kd, {4, 32, 2, 3, m, true, true, false}, tail, 2);
      if (HasFatalFailure()) return;
    }
  }
  check(kd, {4, 32, 4, 7, 2 * kd.mr + 1, false, true, true}, nullptr, 2);
}

INSTANTIATE_TEST_SUITE_P(Registry, KernelTest, ::testing::ValuesIn(runnable_kernels()),
                         [](const ::testing::TestParamInfo<const KernelDesc*>& info) {
                           return std::string(info.param->name);
                         });

TEST(KernelRegistry, HostRunsAtLeastThePortableKernel) {
  EXPECT_FALSE(runnable_kernels().empty());
}

}  // namespace
}  // namespace lowbit
