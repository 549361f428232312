// Selection as data: table-driven tests on synthetic profiles with stand-in kernels that the
// test registers, so they do not depend on which real kernels exist.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "cpu/profile.h"
#include "format/layouts.h"
#include "format/packed_weights.h"
#include "kernels/ref/qa8_qw_gemm_x1c1__scalar.h"
#include "ops/linear.h"
#include "ops/thread_pool.h"
#include "registry/registry.h"
#include "select/cost_model.h"
#include "select/plan.h"
#include "select/select_layout.h"
#include "select/tuning.h"
#include "select/tuning_record.h"
#include "test_util.h"

namespace lowbit {
namespace {

void stand_in(const GemmShape&, const UKernelArgs&) {}

// Stand-in layouts: ids far from the real table; geometry only matters for the cost model.
const LayoutDesc kX86Generic =
    LayoutDesc::family(900, "fake_avx2_n8", Arch::x86_64, IsaSet{Isa::avx2}).panel(8, 4, 32).bf16_scales_when_exact();
const LayoutDesc kX86Wide = LayoutDesc::family(901, "fake_avx512_n64", Arch::x86_64, IsaSet{Isa::avx512f, Isa::avx512vnni})
                                .panel(64, 4, 64).bf16_scales_when_exact();
const LayoutDesc kX86Narrow = LayoutDesc::family(902, "fake_avx512_n16", Arch::x86_64, IsaSet{Isa::avx512f, Isa::avx512vnni})
                                  .panel(16, 4, 64).bf16_scales_when_exact();
const LayoutDesc kArm =
    LayoutDesc::family(903, "fake_arm_n8", Arch::arm64, IsaSet{Isa::neon}).panel(8, 8, 16).bf16_scales_when_exact();

KernelDesc kernel(const char* name, const LayoutDesc& l, IsaSet req, int mr, uint16_t row_variants,
                  uint16_t bits = kAllBits, bool zeros = true) {
  return KernelDesc::named(name, stand_in).reads(l.id).requires_isa(req).tile(mr, l.kr).widths(bits)
      .supports(zeros ? kZeroPoints | kBias : kBias).code_for_rows(row_variants);
}

const IsaSet kAvx512{Isa::avx512f, Isa::avx512vnni};
const IsaSet kI8mm{Isa::neon, Isa::dotprod, Isa::i8mm};

Registry test_registry() {
  return Registry(
      {
          kernel("portable_gemv_1x1", portable_layout(), {}, 1, kEveryRowCount),
          kernel("avx2_gemv_1x8", kX86Generic, {Isa::avx2}, 1, kEveryRowCount),
          kernel("avx2_gemm_4x8", kX86Generic, {Isa::avx2}, 4, row_counts({4})),
          kernel("avx512_gemv_1x64", kX86Wide, kAvx512, 1, kEveryRowCount),
          kernel("avx512_gemm_4x64", kX86Wide, kAvx512, 4, row_counts({4})),
          kernel("avx512_gemv_1x16", kX86Narrow, kAvx512, 1, kEveryRowCount),
          // A 4-bit-only, no-zero-point GEMM: selection must route around it.
          kernel("avx512_gemm_4x16_q4", kX86Narrow, kAvx512, 4, row_counts({4}), bits_mask({4}), false),
          kernel("arm_dot_gemv_1x8", kArm, {Isa::neon, Isa::dotprod}, 1, kEveryRowCount),
          kernel("arm_dot_gemm_4x8", kArm, {Isa::neon, Isa::dotprod}, 4, row_counts({4})),
          kernel("arm_i8mm_gemm_8x8", kArm, kI8mm, 8, row_counts({8})),
      },
      {&portable_layout(), &kX86Generic, &kX86Wide, &kX86Narrow, &kArm});
}

// What the stand-in kernels cost: selection reads these through a Tuning, as it reads the
// generic table for the real kernels.
const Tuning& test_tuning() {
  static const CostTable table = {
      {"portable_gemv_1x1", uniform_cost(8.0f, 2.0f, 100)},
      {"avx2_gemv_1x8", uniform_cost(0.30f, 0.30f, 100)},
      {"avx2_gemm_4x8", uniform_cost(0.30f, 0.10f, 100)},
      // Wide: cheaper per value, but pads n to 64 columns.
      {"avx512_gemv_1x64", uniform_cost(0.05f, 0.05f, 100)},
      {"avx512_gemm_4x64", uniform_cost(0.05f, 0.02f, 100)},
      {"avx512_gemv_1x16", uniform_cost(0.07f, 0.07f, 100)},
      {"avx512_gemm_4x16_q4", uniform_cost(0.07f, 0.03f, 100)},
      {"arm_dot_gemv_1x8", uniform_cost(0.20f, 0.20f, 100)},
      {"arm_dot_gemm_4x8", uniform_cost(0.20f, 0.08f, 100)},
      // i8mm is fast on big cores, slow on the little A510 (a uarch affinity).
      {"arm_i8mm_gemm_8x8", uniform_cost(0.20f, 0.03f, 100, 0, 0, {{Uarch::cortex_a510, 4.0f}})},
  };
  static const Tuning t(table);
  return t;
}

struct LayoutCase {
  const char* profile;
  WeightProblem problem;
  const char* want_layout;
};

TEST(SelectLayout, Table) {
  const Registry reg = test_registry();
  const LayoutCase cases[] = {
      {"x86_64:avx2,fma;cores=8xhaswell", {4096, 4096, 4, 32, false, false}, "fake_avx2_n8"},
      {"x86_64:avx512vnni;cores=8xzen5", {4096, 4096, 4, 32, false, false}, "fake_avx512_n64"},
      // n takes part: 16 columns would be padded to 64 by the wide layout.
      {"x86_64:avx512vnni;cores=8xzen5", {16, 4096, 4, 32, false, false}, "fake_avx512_n16"},
      {"x86_64:sse41;cores=4xunknown", {4096, 4096, 4, 32, false, false}, "portable_n1k1s1"},
      {"arm64:neon,dotprod;cores=4xcortex-a76", {4096, 4096, 4, 32, true, false}, "fake_arm_n8"},
      {"arm64:neon;cores=4xcortex-a53", {4096, 4096, 4, 32, false, false}, "portable_n1k1s1"},
  };
  for (const LayoutCase& c : cases) {
    const LayoutDecision d = select_layout(reg, parse_profile_spec(c.profile), c.problem, &test_tuning());
    EXPECT_STREQ(d.winner->name, c.want_layout) << c.profile << " n=" << c.problem.n;
    EXPECT_EQ(d.candidates.size(), reg.layouts().size());
  }
}

TEST(SelectLayout, RejectionsSayWhy) {
  const Registry reg = test_registry();
  const LayoutDecision d =
      select_layout(reg, parse_profile_spec("x86_64:avx2,fma;cores=2xzen3"), {64, 256, 4, 32, false, false},
                    &test_tuning());
  std::set<std::string> reasons;
  for (const Candidate& c : d.candidates) {
    if (std::string(c.name) == "fake_avx512_n64") {
      EXPECT_FALSE(c.eligible);
      EXPECT_NE(c.reason.find("missing ISA"), std::string::npos) << c.reason;
      EXPECT_NE(c.reason.find("avx512vnni"), std::string::npos) << c.reason;
    }
    if (std::string(c.name) == "fake_arm_n8") {
      EXPECT_NE(c.reason.find("arm64"), std::string::npos) << c.reason;
    }
  }
}

struct PlanCase {
  const char* profile;
  const LayoutDesc* layout;
  WeightProblem problem;
  int m, threads;
  // Expected kernels (uarch index 0 unless noted) with their row counts, in order.
  std::vector<std::pair<const char*, int>> want;
};

PackedHeader header(const LayoutDesc& layout, const WeightProblem& problem) {
  PackedHeader h;
  h.layout = &layout;
  h.problem = problem;
  return h;
}

std::vector<std::pair<std::string, int>> segments(const UarchPlan& up) {
  std::vector<std::pair<std::string, int>> v;
  for (int i = 0; i < up.num_segments; ++i) v.push_back({up.seg[i].kernel->name, up.seg[i].rows});
  return v;
}

TEST(Plan, KernelMixTable) {
  const Registry reg = test_registry();
  const WeightProblem big{4096, 4096, 4, 32, false, false};
  const char* zen5 = "x86_64:avx512vnni;cores=8xzen5";
  const char* hsw = "x86_64:avx2,fma;cores=4xhaswell";
  const PlanCase cases[] = {
      {hsw, &kX86Generic, big, 1, 1, {{"avx2_gemv_1x8", 1}}},
      {hsw, &kX86Generic, big, 64, 1, {{"avx2_gemm_4x8", 64}}},
      // 5 rows: one padded 4-row tile + one GEMV row beats two padded tiles (0.7+0.6 < 1.4).
      {hsw, &kX86Generic, big, 5, 1, {{"avx2_gemm_4x8", 4}, {"avx2_gemv_1x8", 1}}},
      // 7 rows: the padded second tile (0.7) beats three GEMV rows (1.8).
      {hsw, &kX86Generic, big, 7, 1, {{"avx2_gemm_4x8", 8 - 1}}},
      {zen5, &kX86Wide, big, 1, 8, {{"avx512_gemv_1x64", 1}}},
      // 13 rows: three tiles and a GEMV row (0.39+0.10) beat four tiles (0.52).
      {zen5, &kX86Wide, big, 13, 8, {{"avx512_gemm_4x64", 12}, {"avx512_gemv_1x64", 1}}},
      {zen5, &kX86Wide, big, 15, 8, {{"avx512_gemm_4x64", 15}}},
      // 3-bit weights: the 4-bit-only GEMM is not eligible.
      {zen5, &kX86Narrow, {4096, 4096, 3, 32, false, false}, 16, 1, {{"avx512_gemv_1x16", 16}}},
      {zen5, &kX86Narrow, {4096, 4096, 4, 32, true, false}, 16, 1, {{"avx512_gemv_1x16", 16}}},
      {zen5, &kX86Narrow, big, 16, 1, {{"avx512_gemm_4x16_q4", 16}}},
  };
  for (const PlanCase& c : cases) {
    const PackedHeader h = header(*c.layout, c.problem);
    const ExecPlan plan = make_plan(reg, parse_profile_spec(c.profile), h, c.m, c.threads, nullptr, false, &test_tuning());
    std::vector<std::pair<std::string, int>> want;
    for (const auto& w : c.want) want.push_back({w.first, w.second});
    EXPECT_EQ(segments(plan.per_uarch[0]), want) << c.profile << " m=" << c.m << " bits=" << c.problem.bits;
    // Tiling: every task is whole tiles of every kernel; enough tasks for the threads.
    EXPECT_EQ(plan.col_tile % c.layout->nr, 0);
    const int tasks = ((c.m + plan.row_tile - 1) / plan.row_tile) *
                      ((c.problem.n + plan.col_tile - 1) / plan.col_tile);
    EXPECT_GE(tasks, std::min(c.threads, c.problem.n / c.layout->nr)) << c.profile << " m=" << c.m;
  }
}

// Rows split across tasks make every row tile stream its column tile again, on another worker
// at the same time: the estimate charges that stream, so where the column tiles can occupy the
// threads the rows stay whole (split options are still candidates); with one column tile for
// two threads they are split.
TEST(Plan, SplitRowsPayTheColumnStreamAgain) {
  const Registry reg = test_registry();
  const CpuProfile prof = parse_profile_spec("x86_64:avx512vnni;cores=2xzen5");
  for (const int m : {13, 29}) {
    const PackedHeader h = header(kX86Wide, {4096, 4096, 4, 32, false, false});
    const int rows_all = (m + 3) / 4 * 4;
    int splits = 0;
    for (const PlanOption& o : plan_options(reg, prof, h, m, 2, &test_tuning())) splits += o.plan.row_tile < rows_all;
    EXPECT_GT(splits, 0) << "m " << m;
    EXPECT_EQ(make_plan(reg, prof, h, m, 2, nullptr, false, &test_tuning()).row_tile, rows_all) << "m " << m;
  }
  const PackedHeader one_tile = header(kX86Wide, {64, 4096, 4, 32, false, false});
  EXPECT_LT(make_plan(reg, prof, one_tile, 64, 2, nullptr, false, &test_tuning()).row_tile, 64)
      << "one column tile for 2 threads: the rows are split";
}

// same_kernels tells plans apart by their kernels and rows alone (lowbit tune times the best
// tiling of each set of kernels): among m = 13's options, tilings of one set and other sets.
TEST(Plan, SameKernelsIgnoresTheTiling) {
  const Registry reg = test_registry();
  const CpuProfile prof = parse_profile_spec("x86_64:avx512vnni;cores=2xzen5");
  const PackedHeader h = header(kX86Wide, {4096, 4096, 4, 32, false, false});
  const std::vector<PlanOption> options = plan_options(reg, prof, h, 13, 2, &test_tuning());
  int retiled = 0, other_kernels = 0;
  for (const PlanOption& a : options)
    for (const PlanOption& b : options) {
      if (same_plan(a.plan, b.plan)) {
        EXPECT_TRUE(same_kernels(a.plan, b.plan)) << a.name << " / " << b.name;
      }
      if (!same_plan(a.plan, b.plan)) {
        const bool kernels = same_kernels(a.plan, b.plan);
        EXPECT_EQ(kernels, segments(a.plan.per_uarch[0]) == segments(b.plan.per_uarch[0])) << a.name << " / " << b.name;
        retiled += kernels;
        other_kernels += !kernels;
      }
    }
  EXPECT_GT(retiled, 0);
  EXPECT_GT(other_kernels, 0);
}

// Two GEMVs of one layout: one streams the records only (fewer bytes), one reads the column
// sums too (less arithmetic). Without measured bandwidths the planner charges each the bytes
// it reads: the streaming one where the weights come from DRAM, the other where they are cached.
TEST(Plan, GemvThatSkipsTheSumsWinsWhereBytesDecide) {
  const LayoutDesc sums = LayoutDesc::family(904, "fake_avx2_n8_sums", Arch::x86_64, IsaSet{Isa::avx2})
                              .panel(8, 4, 32).bf16_scales_when_exact().with_col_sums();
  KernelDesc stream = kernel("gemv_stream", sums, {Isa::avx2}, 1, kEveryRowCount);
  stream.skips_sums = true;
  const Registry reg({kernel("gemv_sums", sums, {Isa::avx2}, 1, kEveryRowCount), stream}, {&sums});
  const CostTable table = {{"gemv_sums", uniform_cost(0.0f, 0.04f, 100)},
                           {"gemv_stream", uniform_cost(0.0f, 0.05f, 100)}};
  const Tuning tuning(table);
  const CpuProfile prof = parse_profile_spec("x86_64:avx2,fma;cores=2xzen3");
  const PackedGeometry cached = make_geometry(sums, {1024, 4096, 4, 32, false, false}, ScaleFormat::f32);
  const PackedGeometry dram = make_geometry(sums, {65536, 8192, 4, 32, false, false}, ScaleFormat::f32);
  EXPECT_LT(double(cached.payload_bytes), double(prof.caches.l3) / 2);
  EXPECT_GT(double(dram.payload_bytes), 4.0 * double(prof.caches.l3));
  // Per column and group of 32: 16 bytes of 4-bit values, a 4-byte scale, a 4-byte sum.
  EXPECT_DOUBLE_EQ(panel_read_bytes(stream, dram), double(dram.panel_footprint()) * 20.0 / 24.0);
  EXPECT_DOUBLE_EQ(panel_read_bytes(*reg.kernel("gemv_sums"), dram), double(dram.panel_footprint()));
  for (const auto& [problem, want] : {std::pair{WeightProblem{1024, 4096, 4, 32, false, false}, "gemv_sums"},
                                      std::pair{WeightProblem{65536, 8192, 4, 32, false, false}, "gemv_stream"}}) {
    const PackedHeader h = header(sums, problem);
    const ExecPlan plan = make_plan(reg, prof, h, 1, 1, nullptr, false, &tuning);
    EXPECT_EQ(segments(plan.per_uarch[0]), (std::vector<std::pair<std::string, int>>{{want, 1}})) << problem.n;
  }
}

// A shared L3 measured while neighbours used part of it looks smaller than the CPU's: between
// the measured size and the CPU's (at most twice the measured one) part of the weights still
// come from L3, so the GEMV that reads faster from L3 wins there even when another reads
// slightly faster from DRAM.
TEST(Plan, WeightsBetweenTheMeasuredAndTheReportedL3PartlyHitIt) {
  const LayoutDesc any = LayoutDesc::family(905, "fake_any_n8_sums", Arch::x86_64, IsaSet{})
                             .panel(8, 4, 32).bf16_scales_when_exact().with_col_sums();
  const Registry reg({kernel("gemv_l3", any, {}, 1, kEveryRowCount), kernel("gemv_dram", any, {}, 1, kEveryRowCount)},
                     {&any});
  TuningRecord r = record_for_this_machine("zone-test");
  r.caches = {32 * 1024, 512 * 1024, 16u << 20};
  r.bandwidth = {{20.0}, {12.0}, {6.0}};
  for (const auto& [name, l3, dram] : {std::tuple{"gemv_l3", 16.0, 6.0}, std::tuple{"gemv_dram", 10.0, 6.6}}) {
    KernelEntry e;
    e.name = name;
    e.identity = reg.identity(*reg.kernel(name));
    e.cost = uniform_cost(0.0f, 0.001f, 100);
    e.bandwidth = {{20.0}, {l3}, {dram}};
    r.kernels.push_back(e);
  }
  const Tuning tuning(std::make_shared<TuningRecord>(r), "zone test");
  // 4-bit g32 with f32 scales and sums: 0.75 bytes per weight.
  const int in_zone = 6656, past_it = 13312;  // x 4096: 19.5 MiB, 39 MiB
  EXPECT_EQ(make_geometry(any, {in_zone, 4096, 4, 32, false, false}, ScaleFormat::f32).payload_bytes, 19.5 * (1 << 20));
  for (const auto& [cpu_l3, n, want] : {std::tuple{32u << 20, in_zone, "gemv_l3"},   // 78 % from L3
                                        std::tuple{32u << 20, past_it, "gemv_dram"},  // past the CPU's L3
                                        std::tuple{16u << 20, in_zone, "gemv_dram"},  // the CPU agrees: DRAM
                                        std::tuple{508u << 20, in_zone, "gemv_l3"},   // an absurd CPUID L3 ...
                                        std::tuple{508u << 20, past_it, "gemv_dram"}}) {  // counts up to 2x
    CpuProfile prof = host_profile();
    prof.caches.l3 = cpu_l3;
    ASSERT_TRUE(tuning.applies_to(prof));
    const PackedHeader h = header(any, {n, 4096, 4, 32, false, false});
    const ExecPlan plan = make_plan(reg, prof, h, 1, 1, nullptr, false, &tuning);
    EXPECT_EQ(segments(plan.per_uarch[0]), (std::vector<std::pair<std::string, int>>{{want, 1}}))
        << "CPU L3 " << (cpu_l3 >> 20) << " MiB, n " << n;
  }
}

TEST(Plan, PerCoreKernelsOnBigLittle) {
  const Registry reg = test_registry();
  const CpuProfile phone = parse_profile_spec("arm64:neon,dotprod,i8mm;cores=4xcortex-a510,4xcortex-x3");
  const PackedHeader h = header(kArm, {4096, 4096, 4, 32, false, false});
  const ExecPlan plan = make_plan(reg, phone, h, 64, 8, nullptr, false, &test_tuning());
  ASSERT_EQ(plan.num_uarchs, 2);
  for (int u = 0; u < 2; ++u) {
    const UarchPlan& up = plan.per_uarch[u];
    const std::string want = up.uarch == Uarch::cortex_a510 ? "arm_dot_gemm_4x8" : "arm_i8mm_gemm_8x8";
    EXPECT_EQ(segments(up), (std::vector<std::pair<std::string, int>>{{want, 64}})) << uarch_name(up.uarch);
  }
  EXPECT_EQ(plan.row_tile % 8, 0) << "row tiles must be whole tiles of both uarchs' kernels";
}

TEST(Plan, UnrunnableLayoutIsUnsupportedNamingLayoutAndIsa) {
  const Registry reg = test_registry();
  const PackedHeader h = header(kArm, {64, 64, 4, 32, false, false});
  try {
    make_plan(reg, parse_profile_spec("x86_64:avx2,fma;cores=2xzen3"), h, 1, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::unsupported);
    EXPECT_NE(std::string(e.what()).find("fake_arm_n8"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("neon"), std::string::npos) << e.what();
  }
}

TEST(Plan, ExplanationListsEveryKernelWithReasons) {
  const Registry reg = test_registry();
  const PackedHeader h = header(kX86Narrow, {256, 256, 3, 32, false, false});
  PlanExplanation ex;
  make_plan(reg, parse_profile_spec("x86_64:avx512vnni;cores=2xzen5"), h, 8, 1, &ex, false, &test_tuning());
  EXPECT_EQ(ex.kernels.size(), reg.kernels().size());
  for (const Candidate& c : ex.kernels) {
    if (c.name == "avx512_gemm_4x16_q4") {
      EXPECT_EQ(c.reason, "no 3-bit weights");
    }
    if (c.name == "avx2_gemv_1x8") {
      EXPECT_NE(c.reason.find("layout mismatch"), std::string::npos);
    }
    if (c.name == "arm_dot_gemv_1x8") {
      EXPECT_NE(c.reason.find("layout mismatch"), std::string::npos);
    }
    if (c.eligible) {
      EXPECT_GT(c.cost_ns, 0.0);
      EXPECT_EQ(c.source, "generic") << c.name;
    }
  }
  EXPECT_FALSE(ex.winner.empty());
  EXPECT_FALSE(ex.mixes.empty());
}

// ---- registry validation ------------------------------------------------------------------

std::string registry_error(std::vector<KernelDesc> ks) {
  try {
    Registry r(std::move(ks), {&portable_layout(), &kX86Generic});
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::internal);
    return e.what();
  }
}

TEST(Registry, ValidatesDescriptors) {
  auto k = [&](const char* name, int mr, const LayoutDesc& l = kX86Generic) {
    return kernel(name, l, l.isa, mr, kEveryRowCount);
  };
  EXPECT_EQ(registry_error({k("a", 1), k("b", 4)}), "");
  EXPECT_NE(registry_error({k("a", 1), k("a", 4)}).find("duplicate kernel name a"), std::string::npos);
  EXPECT_NE(registry_error({k("a", 4), k("b", 1)}).find("increasing mr"), std::string::npos);
  // Alternatives of one tile (a GEMV reading the sums, one streaming the records) share an mr.
  EXPECT_EQ(registry_error({k("a", 1), k("b", 1), k("c", 4)}), "");
  EXPECT_NE(registry_error({k("a", 4), k("b", 6)}).find("multiple"), std::string::npos);
  KernelDesc bad_lhs = k("c", 4);
  bad_lhs.lhs.mr = 2;
  EXPECT_NE(registry_error({bad_lhs}).find("lhs.mr"), std::string::npos);
  KernelDesc bad_kr = k("d", 1);
  bad_kr.lhs.kr = 3;
  EXPECT_NE(registry_error({bad_kr}).find("kr"), std::string::npos);
  KernelDesc unknown = k("e", 1);
  unknown.layout_id = 4242;
  EXPECT_NE(registry_error({unknown}).find("unknown layout 4242"), std::string::npos);
  KernelDesc no_fn = k("f", 1, portable_layout());
  no_fn.fn = nullptr;
  EXPECT_NE(registry_error({no_fn}).find("no function"), std::string::npos);
  KernelDesc weak = k("g", 1);
  weak.requires = IsaSet{};  // the layout is packed for avx2: its kernels must require it
  EXPECT_NE(registry_error({weak}).find("packed for"), std::string::npos);
  KernelDesc nobits = k("h", 1);
  nobits.bits_mask = 1;
  EXPECT_NE(registry_error({nobits}).find("bits mask"), std::string::npos);
  KernelDesc no_full_block = k("i", 4);
  no_full_block.row_variants = row_counts({1, 2});
  EXPECT_NE(registry_error({no_full_block}).find("row variants"), std::string::npos);
  KernelDesc beyond_block = k("j", 4);
  beyond_block.row_variants = row_counts({4, 8});
  EXPECT_NE(registry_error({beyond_block}).find("row variants"), std::string::npos);
  KernelDesc unknown_width = k("l", 4);
  unknown_width.bits_mask = bits_mask({4});
  unknown_width.every_row_bits = bits_mask({4, 8});
  EXPECT_NE(registry_error({unknown_width}).find("every-row bit widths"), std::string::npos);
}

TEST(Registry, BuiltinRegistryIsValidAndDescribesEveryLayoutUsed) {
  const Registry& r = default_registry();
  EXPECT_FALSE(r.kernels().empty());
  for (const KernelDesc& k : r.kernels()) EXPECT_NE(r.layout(k.layout_id), nullptr) << k.name;
}

// ---- per-core execution on a simulated big.LITTLE machine ---------------------------------

std::atomic<int> g_little_runs{0}, g_big_runs{0}, g_wrong_core{0};
thread_local int t_uarch = -1;
std::atomic<int> g_next_query{0};

// Each task asks which core it is on; the simulated answer alternates little, big (as if tasks
// landed on alternating cores), so every call with two or more tasks exercises both, however
// the pool happens to schedule them. The kernel then checks it runs on the core it was planned
// for.
uint32_t simulated_core(void*) {
  t_uarch = g_next_query++ % 2;
  return uint32_t(t_uarch);
}

void little_kernel(const GemmShape& s, const UKernelArgs& a) {
  if (t_uarch != 0) ++g_wrong_core;
  ++g_little_runs;
  qa8_qw_gemm_1x1c1__scalar(s, a);
}
void big_kernel(const GemmShape& s, const UKernelArgs& a) {
  if (t_uarch != 1) ++g_wrong_core;
  ++g_big_runs;
  qa8_qw_gemm_4x1c1__scalar(s, a);
}

TEST(PerCore, EachSimulatedCoreRunsItsOwnKernelAndResultsStayExact) {
  const LayoutDesc& l = portable_layout();
  Registry reg({{"little_1x1", l.id, {}, 1, {1, 1}, kAllBits, true, true, kEveryRowCount, 0, little_kernel},
                {"big_4x1", l.id, {}, 4, {4, 1}, kAllBits, true, true, row_counts({4}), 0, big_kernel}},
               {&l});
  // run_linear plans with the active tuning: make it one that knows these kernels.
  static const CostTable costs = {
      {"little_1x1", uniform_cost(1, 1, 10, 0, 0, {{Uarch::cortex_x3, 50.0f}})},
      {"big_4x1", uniform_cost(1, 1, 10, 0, 0, {{Uarch::cortex_a510, 50.0f}})},
  };
  const ScopedTuning scope(std::make_shared<Tuning>(costs));
  CpuProfile phone = parse_profile_spec("arm64:neon;cores=2xcortex-a510,2xcortex-x3");
  const WeightProblem p{96, 64, 4, 32, true, true};
  const test::Weights w = test::random_weights(p, 21);
  const PackedBuffer b = pack_buffer(l, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
  const int m = 12;
  test::Activations x = test::random_activations(m, p.k, 22);
  std::vector<float> y(size_t(m) * p.n);
  RunContext ctx{&reg, &phone, nullptr, pool_for_threads(4), {simulated_core, nullptr}};
  LinearOptions opt;
  run_linear(ctx, b, m, x.x, y.data(), opt);
  EXPECT_GT(g_little_runs.load(), 0);
  EXPECT_GT(g_big_runs.load(), 0);
  EXPECT_EQ(g_wrong_core.load(), 0);
  EXPECT_TRUE(test::bits_equal(y.data(), test::reference(w, m, x.x).data(), y.size()));
}

}  // namespace
}  // namespace lowbit
