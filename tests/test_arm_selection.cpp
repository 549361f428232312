// On aarch64 (natively or under qemu-aarch64 -cpu cortex-a53 / cortex-a76 / max): the layout
// and kernels the planner picks for this CPU belong to the family its detected features
// allow (neon only -> NEON, +dotprod -> dot product, +i8mm -> i8mm), and the Arm kernels
// clamp exactly as finish_output does, signed zeros included. Skips itself elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "cpu/profile.h"
#include "format/layouts.h"
#include "format/packed_weights.h"
#include "ops/linear.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "select/select_layout.h"
#include "test_util.h"

namespace lowbit {
namespace {

struct Family {
  const char* layout;  // layout select_layout must pick
  const char* suffix;  // every planned kernel's name ends with it
};

Family expected_family(IsaSet isa) {
  if (isa.has(Isa::i8mm)) return {"arm_i8mm_n8k8s16_sums", "__i8mm"};
  if (isa.has(Isa::dotprod)) return {"arm_dotprod_n8k4s16_sums", "__dotprod"};
  if (isa.has(Isa::neon)) return {"arm_neon_n8k1s16", "__neon"};
  return {"portable_n1k1s1", "__scalar"};  // LOWBIT_ISA=scalar
}

#define SKIP_UNLESS_ARM64()                                                   \
  if (kBuildArch != Arch::arm64) GTEST_SKIP() << "not an aarch64 build"; \
  static_cast<void>(0)

TEST(ArmSelection, DetectedFeaturesAreConsistent) {
  SKIP_UNLESS_ARM64();
  const CpuProfile& prof = host_profile();  // as capped by LOWBIT_ISA
  EXPECT_EQ(prof.arch, Arch::arm64);
  EXPECT_TRUE(detect_host_profile().isa.has(Isa::neon)) << prof.isa.to_string();
  if (prof.isa.has(Isa::i8mm)) {
    EXPECT_TRUE(prof.isa.has(Isa::dotprod)) << prof.isa.to_string();
  }
  std::printf("host: %s, %s, uarch %s -> %s kernels\n", prof.source.c_str(),
              prof.isa.to_string().c_str(), uarch_name(prof.main_uarch()),
              expected_family(prof.isa).suffix + 2);
}

TEST(ArmSelection, PlannerPicksTheFamilyOfTheDetectedFeatures) {
  SKIP_UNLESS_ARM64();
  const CpuProfile& prof = host_profile();
  const Registry& reg = default_registry();
  const Family fam = expected_family(prof.isa);
  for (int bits : {1, 2, 3, 4, 5, 8})
    for (bool zeros : {false, true})
      for (int group : {32, 128}) {
        const WeightProblem p{4096, 4096, bits, group, zeros, false};
        const std::string what = concat("bits=", bits, " zeros=", zeros, " group=", group,
                                        " isa=", prof.isa.to_string());
        const LayoutDecision d = select_layout(reg, prof, p);
        ASSERT_NE(d.winner, nullptr) << what;
        EXPECT_STREQ(d.winner->name, fam.layout) << what;
        PackedHeader h;
        h.layout = d.winner;
        h.problem = p;
        for (int m : {1, 2, 3, 4, 5, 8, 16, 33, 128}) {
          const ExecPlan plan = make_plan(reg, prof, h, m, 1);
          const UarchPlan& up = plan.per_uarch[0];
          ASSERT_GE(up.num_segments, 1) << what;
          for (int s = 0; s < up.num_segments; ++s)
            EXPECT_TRUE(test::ends_with(up.seg[s].kernel->name, fam.suffix))
                << what << " m=" << m << ": " << up.seg[s].kernel->name;
          // From 4 rows on, the GEMM tile covers the full blocks; a single row is a GEMV.
          if (m >= 4) {
            EXPECT_GE(up.seg[0].kernel->mr, 4) << what << " m=" << m << ": " << up.seg[0].kernel->name;
          }
          if (m == 1) {
            EXPECT_EQ(up.seg[0].kernel->mr, 1) << what << ": " << up.seg[0].kernel->name;
          }
        }
      }
}

// Weights packed for a lower tier run here through the planner (layouts stay usable on the
// CPUs of later tiers), and weights packed for a tier above are refused with a clear reason.
TEST(ArmSelection, EveryArmLayoutThisCpuCanRunIsPlannable) {
  SKIP_UNLESS_ARM64();
  const CpuProfile& prof = host_profile();
  const Registry& reg = default_registry();
  const WeightProblem p{64, 256, 4, 32, true, true};
  for (const char* name : {"arm_neon_n8k1s16", "arm_dotprod_n8k4s16_sums", "arm_i8mm_n8k8s16_sums"}) {
    const LayoutDesc* l = find_layout(name);
    ASSERT_NE(l, nullptr) << name;
    PackedHeader h;
    h.layout = l;
    h.problem = p;
    if (prof.isa.contains(l->isa)) {
      EXPECT_NO_THROW(make_plan(reg, prof, h, 5, 1)) << name;
    } else {
      try {
        make_plan(reg, prof, h, 5, 1);
        ADD_FAILURE() << name << " planned without " << l->isa.to_string();
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("missing ISA"), std::string::npos) << e.what();
      }
    }
  }
}

// On a simulated phone, given as `lowbit explain --target` takes it (any build: the planner
// reads the kernels' descriptions and the generic costs, not their code), the A55 cores run
// the in-order _a55 variants and the big cores the out-of-order ones, for decode (m = 1, GEMV)
// and prefill (m = 64, GEMM).
TEST(ArmSelection, BigLittleRunsTheA55VariantsOnlyOnTheA55Cores) {
  const CpuProfile phone = target_profile("arm64:neon,dotprod;cores=4xcortex-a55,4xcortex-a76");
  const Registry& reg = default_registry();
  const WeightProblem p{4096, 4096, 4, 32, false, false};
  const LayoutDecision d = select_layout(reg, phone, p);
  ASSERT_NE(d.winner, nullptr);
  EXPECT_STREQ(d.winner->name, "arm_dotprod_n8k4s16_sums");
  PackedHeader h;
  h.layout = d.winner;
  h.problem = p;
  for (int m : {1, 64}) {
    const ExecPlan plan = make_plan(reg, phone, h, m, 8, nullptr, false);
    ASSERT_EQ(plan.num_uarchs, 2);
    for (int u = 0; u < plan.num_uarchs; ++u) {
      const UarchPlan& up = plan.per_uarch[u];
      const char* suffix = up.uarch == Uarch::cortex_a55 ? "__dotprod_a55" : "__dotprod";
      ASSERT_GE(up.num_segments, 1);
      for (int s = 0; s < up.num_segments; ++s)
        EXPECT_TRUE(test::ends_with(up.seg[s].kernel->name, suffix))
            << uarch_name(up.uarch) << " m=" << m << ": " << up.seg[s].kernel->name;
    }
  }
}

// finish_output clamps with `y < lo ? lo : y` and `y > hi ? hi : y`: +0 stays +0 under a
// clamp_max of -0 (vminq would give -0), and NaN rows stay NaN. A zero activation row gives
// y = fma(+0, 1, +0) = +0 exactly.
TEST(ArmKernels, ClampKeepsSignedZerosAndNaNLikeTheReference) {
  SKIP_UNLESS_ARM64();
  const CpuProfile& prof = host_profile();
  for (const KernelDesc& kd : default_registry().kernels()) {
    const LayoutDesc& layout = *default_registry().layout(kd.layout_id);
    if (layout.arch != Arch::arm64 || kd.fn == nullptr || !prof.isa.contains(kd.requires)) continue;
    const WeightProblem p{layout.nr + 3, 64, 4, 32, true, false};
    const test::Weights w = test::random_weights(p, 7);
    const PackedBuffer b = pack_buffer(layout, p, w.q.data(), w.scales.data(), w.zeros_ptr(), nullptr);
    const int m = kd.mr + 1;
    test::Activations a = test::random_activations(m, p.k, 11);
    for (int i = 0; i < p.k; ++i) a.x[i] = 0.0f;  // row 0: all zeros -> y = +0
    a.x[size_t(p.k) + 5] = std::numeric_limits<float>::quiet_NaN();  // row 1: NaN
    for (const ClampRange c : {ClampRange{true, -1.0f, -0.0f}, ClampRange{true, 0.0f, 0.0f},
                               ClampRange{true, -0.0f, 0.0f}, ClampRange{true, -0.0f, -0.0f}}) {
      const std::vector<float> want = test::reference(w, m, a.x, c);
      const ExecPlan plan = single_kernel_plan(kd, m, 1, layout.nr);
      LinearOptions opt;
      opt.has_clamp = true;
      opt.clamp_min = c.lo;
      opt.clamp_max = c.hi;
      std::vector<float> got(want.size(), 1.0f);
      execute_plan(plan, prof, b, m, a.x, got.data(), opt, nullptr, {});
      EXPECT_TRUE(test::bits_equal(got.data(), want.data(), want.size()))
          << kd.name << " clamp [" << c.lo << ", " << c.hi << "] first difference at "
          << test::first_difference(got.data(), want.data(), want.size());
      EXPECT_FALSE(std::signbit(got[0])) << kd.name << ": +0 must stay +0";
      EXPECT_TRUE(std::isnan(got[size_t(p.n)])) << kd.name << ": NaN row";
    }
  }
}

}  // namespace
}  // namespace lowbit
