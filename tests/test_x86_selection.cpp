// Which x86 kernel family the real registry's cost model picks, per ISA cap of this machine
// (host_profile() capped like LOWBIT_ISA would) and on synthetic x86 machines.
#include <gtest/gtest.h>

#include <string>

#include "cpu/profile.h"
#include "format/layouts.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "select/select_layout.h"
#include "select/tuning.h"
#include "test_util.h"

namespace lowbit {
namespace {

struct Want {
  const char* layout;
  const char* gemv;     // m = 1: this GEMV, or its variant reading the column sums (_sums)
  const char* gemm4;    // m = 4 (the 8-row AVX-512 tile runs its 4-row variant)
  const char* tier;     // name suffix of every kernel at m = 128 (a GEMM tile, mr >= 4)
};

// "qa8_qw_gemv_1x8c4__avx2" -> "qa8_qw_gemv_1x8c4_sums__avx2".
std::string sums_variant(const std::string& gemv) {
  const size_t isa = gemv.find("__");
  return gemv.substr(0, isa) + "_sums" + gemv.substr(isa);
}

// What this profile should get at `bits`: the widest ISA tier it has (with GFNI and VPOPCNTDQ,
// the GEMV that unpacks by affine transforms up to 6 bits, where the generic numbers favour it).
Want expected(IsaSet isa, int bits) {
  const IsaSet avx2{Isa::avx2, Isa::fma, Isa::f16c};
  const IsaSet avx512vnni = avx2 | IsaSet{Isa::avx512f, Isa::avx512bw, Isa::avx512vl,
                                          Isa::avx512dq, Isa::avx512vnni};
  const bool gfni = isa.contains(IsaSet{Isa::gfni, Isa::avx512vpopcntdq}) && bits <= 6;
  if (isa.contains(avx512vnni))
    return {"x86_avx512_n16k4s64_sums", gfni ? "qa8_qw_gemv_1x16c4__avx512vnnigfni" : "qa8_qw_gemv_1x16c4__avx512vnni",
            "qa8_qw_gemm_8x16c4__avx512vnni", "__avx512vnni"};
  if (isa.contains(avx2 | IsaSet{Isa::avxvnni}))
    return {"x86_avx2_n8k4s32_sums", "qa8_qw_gemv_1x8c4__avxvnni", "qa8_qw_gemm_4x8c4__avxvnni",
            "__avxvnni"};
  if (isa.contains(avx2))
    return {"x86_avx2_n8k4s32_sums", "qa8_qw_gemv_1x8c4__avx2", "qa8_qw_gemm_4x8c4__avx2", "__avx2"};
  return {"portable_n1k1s1", "qa8_qw_gemm_1x1c1__scalar", "qa8_qw_gemm_4x1c1__scalar", "__scalar"};
}

// m rows on GEMM tiles of the expected tier: the first segment (mr >= 4) covers all full
// blocks; a tail of a few rows may go to a smaller tile or GEMV that needs at least the first
// segment's ISA (with GFNI, a 1-row tail may take the GFNI GEMV), never to a lower tier.
void expect_prefill(const UarchPlan& up, const Want& want, int m, const std::string& ctx) {
  ASSERT_GE(up.num_segments, 1) << ctx;
  const KernelDesc& blocks = *up.seg[0].kernel;
  EXPECT_GE(blocks.mr, 4) << ctx << " " << blocks.name;
  EXPECT_GE(up.seg[0].rows, m / blocks.mr * blocks.mr) << ctx;
  EXPECT_TRUE(test::ends_with(blocks.name, want.tier)) << ctx << " " << blocks.name;
  for (int i = 1; i < up.num_segments; ++i)
    EXPECT_TRUE(up.seg[i].kernel->requires.contains(blocks.requires)) << ctx << " " << up.seg[i].kernel->name;
}

void check_profile_with(const CpuProfile& prof, const std::string& what, const Tuning* tuning) {
  const Registry& reg = default_registry();
  const WeightProblem shapes[] = {
      {4096, 4096, 4, 32, false, false},  {14336, 4096, 4, 128, false, false},
      {4096, 14336, 2, 32, true, false},  {6144, 4096, 8, 64, false, true},
      {4096, 4096, 3, 32, true, true},
  };
  for (const WeightProblem& p : shapes) {
    const std::string ctx = what + " (" + prof.isa.to_string() + ") n=" + std::to_string(p.n) +
                            " k=" + std::to_string(p.k) + " bits=" + std::to_string(p.bits);
    const Want tier = expected(prof.isa, p.bits);
    const LayoutDecision d = select_layout(reg, prof, p, tuning);
    ASSERT_NE(d.winner, nullptr) << ctx;
    // At 1-3 bits on the AVX2 tier the table-lookup families compete (docs/lut-kernels.md;
    // the 512-bit one where AVX-512 F/BW are there without VNNI): the layout may be theirs,
    // and then so must every kernel be.
    const Want luts[] = {
        {"x86_avx2_lut_n32k4s32", "qa8_qw_lut_gemv_1x32__avx2", "qa8_qw_lut_gemm_4x32__avx2", "__avx2"},
        {"x86_avx512_lut_n64k4s64", "qa8_qw_lut_gemv_1x64__avx512", "qa8_qw_lut_gemm_4x64__avx512", "__avx512"}};
    const Want* want_ptr = &tier;
    for (const Want& lut : luts)
      if (p.bits <= 3 && std::string(tier.tier) == "__avx2" && std::string(d.winner->name) == lut.layout)
        want_ptr = &lut;
    const Want& want = *want_ptr;
    EXPECT_STREQ(d.winner->name, want.layout) << ctx;
    PackedHeader h;
    h.layout = d.winner;
    h.problem = p;
    const ExecPlan one = make_plan(reg, prof, h, 1, 1, nullptr, true, tuning);
    const ExecPlan four = make_plan(reg, prof, h, 4, 1, nullptr, true, tuning);
    if (tuning != nullptr) {
      ASSERT_EQ(one.per_uarch[0].num_segments, 1) << ctx;
      const std::string gemv = one.per_uarch[0].seg[0].kernel->name;
      EXPECT_TRUE(gemv == want.gemv || gemv == sums_variant(want.gemv)) << ctx << " m=1: " << gemv;
      EXPECT_STREQ(four.per_uarch[0].seg[0].kernel->name, want.gemm4) << ctx << " m=4";
    } else {
      // A record measured on this machine may rank kernels of one layout either way at m = 1
      // and 4 (on Zen 5 the AVX2 GEMVs measure faster than the AVX-VNNI ones): any kernel that
      // can run the chosen layout here.
      for (const ExecPlan* e : {&one, &four})
        for (int i = 0; i < e->per_uarch[0].num_segments; ++i) {
          const KernelDesc& kern = *e->per_uarch[0].seg[i].kernel;
          EXPECT_EQ(kernel_rejection(kern, *d.winner, p, prof.isa), "") << ctx << " " << kern.name;
        }
    }
    for (int threads : {1, 2}) {
      const ExecPlan many = make_plan(reg, prof, h, 128, threads, nullptr, true, tuning);
      expect_prefill(many.per_uarch[0], want, 128, ctx + " m=128");
    }
  }
}

// With the generic numbers, the exact kernels; with the tuning in use (a record measured on this
// machine, which may rank two near-equal kernels either way), the layout, kernels that can run
// it at m = 1 and 4, and the ISA tier at m = 128.
void check_profile(const CpuProfile& prof, const std::string& what) {
  const Tuning generic;
  for (const Tuning* t : {&generic, static_cast<const Tuning*>(nullptr)})
    check_profile_with(prof, what + (t ? "" : ", " + active_tuning()->origin()), t);
}

TEST(X86Selection, HostProfileAsCapped) {
  // Whatever LOWBIT_ISA says: the suite runs under each cap.
  check_profile(host_profile(), "host");
}

TEST(X86Selection, EveryCapOfThisMachine) {
  for (const char* cap : {"native", "scalar", "avx2", "avx2+avxvnni", "avx512", "avx512vnni"})
    check_profile(apply_isa_cap(host_profile(), cap), std::string("cap ") + cap);
}

TEST(X86Selection, SyntheticMachines) {
  check_profile(parse_profile_spec("x86_64:avx2,fma,f16c;cores=2xzen3"), "zen3");
  check_profile(parse_profile_spec("x86_64:avx2,fma,f16c,avxvnni;cores=8xalderlake-p"), "adl");
  check_profile(parse_profile_spec("x86_64:avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,"
                                   "avx512vnni,avxvnni;cores=2xzen5"),
                "zen5");
  check_profile(parse_profile_spec("x86_64:avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,"
                                   "avx512vnni;cores=8xicelake"),
                "icelake");
  check_profile(parse_profile_spec("x86_64:avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,"
                                   "avx512vnni,gfni,avx512vpopcntdq;cores=2xzen4"),
                "zen4");
}

// Prefill sizes run GEMM tiles on their whole blocks; a tail of a few rows goes to a smaller
// tile of the same ISA, never to the scalar kernel.
TEST(X86Selection, PrefillRowsStayOnGemmTiles) {
  const CpuProfile& prof = host_profile();
  const Want want = expected(prof.isa, 4);
  if (std::string(want.layout) == "portable_n1k1s1") GTEST_SKIP() << "no x86 SIMD on this profile";
  PackedHeader h;
  h.layout = find_layout(want.layout);
  h.problem = WeightProblem{4096, 4096, 4, 32, false, false};
  for (int m : {16, 33, 64, 100}) {
    const ExecPlan plan = make_plan(default_registry(), prof, h, m, 1);
    const UarchPlan& up = plan.per_uarch[0];
    expect_prefill(up, want, m, "m=" + std::to_string(m));
    for (int i = 0; i < up.num_segments; ++i)
      EXPECT_EQ(up.seg[i].kernel->layout_id, h.layout->id) << "m=" << m;
  }
}

}  // namespace
}  // namespace lowbit
