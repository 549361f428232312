// Tuning: costs as data looked up by kernel name (the generic table, records), the fallback for
// a kernel nobody measured, tuning records (parse, validate, look up) and plan overrides.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

#include "format/layouts.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.h"
#include "ops/linear.h"
#include "registry/registry.h"
#include "select/cost_model.h"
#include "select/explain.h"
#include "select/plan.h"
#include "select/select_layout.h"
#include "select/tuning.h"
#include "test_util.h"

namespace lowbit {
namespace {

// Before anything looks a tuning up: messages on, and an empty cache directory of our own (the
// user's cache must not decide what these tests see).
const test::TempDir g_tmp("lowbit_test_tuning");
const std::string g_dir = [] {
  const std::string dir = g_tmp.path();
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  setenv("LOWBIT_LOG", "tuning", 1);
  unsetenv("LOWBIT_TUNING");
  return dir;
}();

void stand_in(const GemmShape&, const UKernelArgs&) {}

TEST(GenericCosts, EveryBuiltinKernelHasAnEntry) {
  const Tuning generic;
  for (const KernelDesc& kd : default_registry().kernels())
    EXPECT_EQ(generic.kernel_cost(default_registry(), kd, host_profile()).source, "generic") << kd.name;
}

TEST(GenericCosts, ComputeCyclesIsTheWeightedSumOfItsTerms) {
  const KernelDesc& kd = *default_registry().kernel("qa8_qw_gemm_4x8c4__avx2");
  const KernelCost c = *find_cost(generic_costs(), kd.name);
  for (int bits : {2, 4})
    for (size_t rows : {1, 2, 3, 4}) {
      const BlockShape b{rows, 64, 512, 32, bits};
      const CostTerms t = block_terms(kd, b);
      const double sum =
          t.unpack * c.unpack[bits] + t.dot * c.dot[bits] + t.group * c.group + t.group_row * c.group_row;
      EXPECT_NEAR(compute_cycles(kd, c, Uarch::zen3, b), sum, 1e-9 * sum) << rows;
      EXPECT_EQ(t.dot, t.unpack * effective_rows(kd, rows, bits));
    }
}

// The x86 GEMMs have code for every row count at 4 bits only; other widths round a partial
// block up to 2, 4 or MR rows (kernels/x86/gemm.h), and cost that.
TEST(GenericCosts, RowVariantsDependOnTheBitWidth) {
  const KernelDesc& kd = *default_registry().kernel("qa8_qw_gemm_4x8c4__avx2");
  const int at4[] = {1, 2, 3, 4}, other[] = {2, 2, 4, 4};
  for (int rows = 1; rows <= 4; ++rows) {
    EXPECT_EQ(effective_rows(kd, size_t(rows), 4), at4[rows - 1]) << rows;
    for (int bits : {1, 2, 3, 5, 8}) EXPECT_EQ(effective_rows(kd, size_t(rows), bits), other[rows - 1]) << rows;
  }
  const KernelDesc& wide = *default_registry().kernel("qa8_qw_gemm_8x16c4__avx512vnni");
  EXPECT_EQ(effective_rows(wide, 5, 4), 5);
  EXPECT_EQ(effective_rows(wide, 5, 2), 8);
  EXPECT_EQ(effective_rows(wide, 3, 8), 4);
}

// A kernel added to the registry without a cost entry anywhere still plans: it borrows a
// sibling's cost and says so.
TEST(GenericCosts, AKernelWithoutAnEntryBorrowsFromASibling) {
  const LayoutDesc& l = *find_layout("x86_avx2_n8k4s32_sums");
  const LayoutDesc& wide = *find_layout("x86_avx512_n16k4s64_sums");
  const IsaSet avx2{Isa::avx2, Isa::fma, Isa::f16c};
  const IsaSet avx512 = avx2 | IsaSet{Isa::avx512f, Isa::avx512bw, Isa::avx512vl, Isa::avx512dq, Isa::avx512vnni};
  const Registry reg({{"qa8_qw_gemv_1x8c4__avx2", l.id, avx2, 1, {1, 4}, kAllBits, true, true, kEveryRowCount, 0, stand_in},
                      {"qa8_qw_gemm_4x8c4__avx2", l.id, avx2, 4, {4, 4}, kAllBits, true, true, row_counts({2, 4}),
                       bits_mask({4}), stand_in},
                      {"new_8x8c4__avx2", l.id, avx2, 8, {8, 4}, kAllBits, true, true, row_counts({8}), 0, stand_in},
                      {"new_1x1c1__scalar", portable_layout().id, {}, 1, {1, 1}, kAllBits, true, true, kEveryRowCount, 0, stand_in},
                      {"new_4x16c4__avx512", wide.id, avx512, 4, {4, 4}, kAllBits, true, true, kEveryRowCount, 0, stand_in}},
                     {&portable_layout(), &l, &wide});
  const Tuning generic;
  const Tuning::KernelCostFrom c = generic.kernel_cost(reg, *reg.kernel("new_8x8c4__avx2"), host_profile());
  EXPECT_NE(c.source.find("derived from qa8_qw_gemm_4x8c4__avx2"), std::string::npos) << c.source;
  EXPECT_EQ(c.cost.dot[4], find_cost(generic_costs(), "qa8_qw_gemm_4x8c4__avx2")->dot[4]);
  const Tuning::KernelCostFrom d = generic.kernel_cost(reg, *reg.kernel("new_1x1c1__scalar"), host_profile());
  EXPECT_NE(d.source.find("conservative default"), std::string::npos) << d.source;
  // A new ISA tier's layout borrows from the tier below, the nearest mr.
  const Tuning::KernelCostFrom e = generic.kernel_cost(reg, *reg.kernel("new_4x16c4__avx512"), host_profile());
  EXPECT_NE(e.source.find("derived from qa8_qw_gemm_4x8c4__avx2"), std::string::npos) << e.source;
  PackedHeader h;
  h.layout = &l;
  h.problem = {256, 512, 4, 32, false, false};
  PlanExplanation ex;
  for (int m : {1, 3, 8, 17, 64})
    EXPECT_NO_THROW(make_plan(reg, parse_profile_spec("x86_64:avx2,fma,f16c;cores=2xzen3"), h, m, 2, &ex, true, &generic));
}

// ---- records ------------------------------------------------------------------------------

// A record for this machine and this build, with every field set.
TuningRecord host_record() {
  TuningRecord r = record_for_this_machine("test-record");
  r.source = "tests/test_tuning.cpp";
  r.caches = {32 * 1024, 768 * 1024, 24u << 20};
  r.bandwidth = {{30.0, 28.5}, {20.0, 18.0}, {9.0, 5.5}};
  r.task_cycles = 420.0;
  r.dispatch_cycles = {0.0, 3000.0};
  for (const KernelDesc& kd : default_registry().kernels()) {
    KernelEntry e;
    e.name = kd.name;
    e.identity = default_registry().identity(kd);
    e.cost = *find_cost(generic_costs(), kd.name);
    e.cost.call *= 1.5f;
    e.cost.dot[3] *= 1.6f;
    e.bandwidth = {{25.0}, {15.0, 14.0}, {7.0, 4.0}};
    e.fit_error = 0.031;
    e.samples = 160;
    if (kd.prefetch_bytes > 0) e.prefetch_bytes = 4096;
    r.kernels.push_back(e);
  }
  PlanOverride o;
  o.layout = "portable_n1k1s1";
  o.n = 64;
  o.k = 128;
  o.bits = 4;
  o.group = 32;
  o.m = 5;
  o.threads = 1;
  o.segments = {{"qa8_qw_gemm_4x1c1__scalar", 4}, {"qa8_qw_gemm_1x1c1__scalar", 1}};
  o.row_tile = 8;
  o.col_tile = 2;  // 32 tiny tasks: not what the model would pick
  o.speedup = 1.07;
  r.overrides.push_back(o);
  return r;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = g_dir + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

TEST(TuningRecord, RoundTrip) {
  const TuningRecord r = host_record();
  const std::string text = record_to_json(r);
  const TuningRecord back = parse_record(text);
  EXPECT_EQ(record_to_json(back), text);
  EXPECT_EQ(back.name, r.name);
  EXPECT_EQ(back.cpu.id.vendor, r.cpu.id.vendor);
  EXPECT_EQ(back.cpu.isa, r.cpu.isa);
  EXPECT_EQ(back.caches.l3, r.caches.l3);
  EXPECT_EQ(back.bandwidth.dram, r.bandwidth.dram);
  ASSERT_EQ(back.kernels.size(), r.kernels.size());
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    EXPECT_EQ(back.kernels[i].identity, r.kernels[i].identity);
    for (int b = 1; b <= kMaxBits; ++b) EXPECT_EQ(back.kernels[i].cost.dot[b], r.kernels[i].cost.dot[b]);
    EXPECT_EQ(back.kernels[i].cost.call, r.kernels[i].cost.call);
    EXPECT_EQ(back.kernels[i].cost.prefers[0].uarch, r.kernels[i].cost.prefers[0].uarch);
    EXPECT_EQ(back.kernels[i].prefetch_bytes, r.kernels[i].prefetch_bytes);
  }
  ASSERT_EQ(back.overrides.size(), 1u);
  EXPECT_EQ(back.overrides[0].segments, r.overrides[0].segments);
  EXPECT_EQ(record_mismatch(back, host_signature()), "");
}

// What the planner decides over a spread of problems, with a given tuning.
std::vector<std::string> plans(const Tuning& t) {
  std::vector<std::string> out;
  const CpuProfile& prof = host_profile();
  for (const WeightProblem& p : {WeightProblem{64, 128, 4, 32, false, false}, WeightProblem{4096, 4096, 3, 32, true, false},
                                 WeightProblem{14336, 4096, 4, 128, false, false}}) {
    const LayoutDecision d = select_layout(default_registry(), prof, p, &t);
    for (const LayoutDesc* l : {d.winner, &portable_layout()}) {
      PackedHeader h;
      h.layout = l;
      h.problem = p;
      for (int m : {1, 3, 5, 16, 100})
        for (int threads : {1, 2}) {
          const ExecPlan e = make_plan(default_registry(), prof, h, m, threads, nullptr, true, &t);
          out.push_back(concat(d.winner->name, " ", format_plan(e, h, nullptr)));
        }
    }
  }
  return out;
}

// LOWBIT_TUNING=<text in a file>: the lookup's result, and what it logged.
std::shared_ptr<const Tuning> lookup_with(const std::string& text, std::string* log) {
  setenv("LOWBIT_TUNING", write_temp("record.json", text).c_str(), 1);
  testing::internal::CaptureStderr();
  std::shared_ptr<const Tuning> t = lookup_tuning();
  *log = testing::internal::GetCapturedStderr();
  unsetenv("LOWBIT_TUNING");
  return t;
}

// A record the lookup must skip: with a message, falling back to what it finds without it, so
// every plan is the same as without it.
void expect_ignored(const std::string& text, const std::string& why) {
  const std::shared_ptr<const Tuning> without = lookup_tuning();
  std::string log;
  const std::shared_ptr<const Tuning> with = lookup_with(text, &log);
  EXPECT_EQ(with->origin(), without->origin()) << why;
  EXPECT_NE(log.find("ignored"), std::string::npos) << why << ": " << log;
  EXPECT_EQ(plans(*with), plans(*without)) << why;
}

TEST(TuningRecord, AValidRecordIsUsedAndChangesTheNumbers) {
  std::string log;
  const std::shared_ptr<const Tuning> t = lookup_with(record_to_json(host_record()), &log);
  EXPECT_EQ(t->origin().rfind("file ", 0), 0u) << t->origin();
  EXPECT_NE(log.find("using file"), std::string::npos) << log;
  ASSERT_TRUE(t->applies_to(host_profile()));
  const KernelDesc& kd = default_registry().kernels().front();
  const Tuning::KernelCostFrom c = t->kernel_cost(default_registry(), kd, host_profile());
  EXPECT_EQ(c.source, t->origin());
  EXPECT_EQ(c.cost.call, find_cost(generic_costs(), kd.name)->call * 1.5f);
  const MachineNumbers m = t->machine(host_profile());
  EXPECT_EQ(m.l3, 24u << 20);
  EXPECT_EQ(m.task_cycles, 420.0);
  EXPECT_NE(plans(*t), plans(Tuning()));
}

TEST(TuningRecord, EveryTruncationIsIgnored) {
  const std::string text = record_to_json(host_record());
  for (size_t len = 0; len < text.size(); ++len) {
    try {
      parse_record(text.substr(0, len));
      ADD_FAILURE() << "a record truncated to " << len << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::corrupt_data) << len;
    }
  }
  for (size_t len : {size_t(0), size_t(10), text.size() / 2, text.size() - 2})
    expect_ignored(text.substr(0, len), concat("truncated to ", len));
}

TEST(TuningRecord, EveryFlippedByteIsIgnored) {
  const std::string text = record_to_json(host_record());
  for (size_t i = 0; i < text.size(); ++i) {
    std::string bad = text;
    bad[i] = char(bad[i] ^ (1 << (i % 8)));
    try {
      parse_record(bad);
      ADD_FAILURE() << "a record with byte " << i << " flipped was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::corrupt_data) << i;
    }
  }
  std::string bad = text;
  bad[text.size() / 3] ^= 0x20;
  expect_ignored(bad, "a flipped byte");
}

TEST(TuningRecord, AnotherCpuVersionOrFormatIsIgnored) {
  TuningRecord r = host_record();
  r.cpu.id.model += 1;
  expect_ignored(record_to_json(r), "another CPU model");
  r = host_record();
  r.cpu.cores += 1;
  expect_ignored(record_to_json(r), "another core count");
  r = host_record();
  r.cpu.isa = r.cpu.isa | IsaSet{Isa::avx512vnni, Isa::i8mm};
  expect_ignored(record_to_json(r), "another ISA set");
  // Fewer features than the host: what an earlier lowbit detected on this CPU.
  r = host_record();
  for (int i = 0; i < kIsaCount; ++i)
    if (r.cpu.isa.has(Isa(i))) {
      r.cpu.isa.remove(Isa(i));
      break;
    }
  EXPECT_EQ(record_mismatch(r, host_signature()), "");
  r = host_record();
  r.lowbit_version = "9.9.0";
  expect_ignored(record_to_json(r), "another lowbit version");
  r = host_record();
  r.format = kTuningFormat + 1;
  expect_ignored(record_to_json(r), "another format");
  // A uarch-scope record (a built-in one) needs only the vendor and uarch.
  r = host_record();
  r.scope = "uarch";
  r.cpu.id.model += 1;
  r.cpu.cores += 7;
  EXPECT_EQ(record_mismatch(r, host_signature()), "");
  r.cpu.id.vendor = "SomeoneElse";
  EXPECT_NE(record_mismatch(r, host_signature()), "");
}

TEST(TuningRecord, AbsurdValuesAreIgnored) {
  const std::vector<std::pair<std::string, std::function<void(TuningRecord&)>>> edits = {
      {"negative dot", [](TuningRecord& r) { r.kernels[0].cost.dot[4] = -0.01f; }},
      {"NaN unpack", [](TuningRecord& r) { r.kernels[1].cost.unpack[2] = std::nanf(""); }},
      {"huge call", [](TuningRecord& r) { r.kernels[0].cost.call = 1e30f; }},
      {"infinite group", [](TuningRecord& r) { r.kernels[0].cost.group = INFINITY; }},
      {"zero bandwidth", [](TuningRecord& r) { r.bandwidth.dram[0] = 0.0; }},
      {"huge bandwidth", [](TuningRecord& r) { r.kernels[2].bandwidth.l2[0] = 1e9; }},
      {"negative task cost", [](TuningRecord& r) { r.task_cycles = -5; }},
      {"huge cache", [](TuningRecord& r) { r.caches.l2 = size_t(1) << 40; }},
      {"override rows", [](TuningRecord& r) { r.overrides[0].segments[1].second = 2; }},
      {"override bits", [](TuningRecord& r) { r.overrides[0].bits = 11; }},
      {"bad kernel name", [](TuningRecord& r) { r.kernels[0].name = "a b"; }},
      {"bad identity", [](TuningRecord& r) { r.kernels[0].identity = "xyz"; }},
      {"prefetch not in lines", [](TuningRecord& r) { r.kernels[0].prefetch_bytes = 100; }},
      {"prefetch too far", [](TuningRecord& r) { r.kernels[0].prefetch_bytes = int(kMaxPrefetchBytes) + 64; }},
  };
  for (const auto& [what, edit] : edits) {
    TuningRecord r = host_record();
    edit(r);
    const std::string text = record_to_json(r);
    try {
      parse_record(text);
      ADD_FAILURE() << what << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::corrupt_data) << what;
    }
    expect_ignored(text, what);
  }
}

// A record made before a kernel was added keeps its overrides where the new kernel cannot run
// (another registry fingerprint, every kernel the CPU runs measured as it is), not where it can.
TEST(TuningRecord, OverridesOutliveAKernelAddedForAnotherIsa) {
  TuningRecord r = host_record();
  r.registry = "fedcba9876543210";
  const Registry& reg = default_registry();
  const KernelDesc* foreign = nullptr;  // a kernel the host cannot run, left unmeasured
  for (const KernelDesc& kd : reg.kernels())
    if (!host_profile().isa.contains(kd.requires)) foreign = &kd;
  ASSERT_NE(foreign, nullptr);
  r.kernels.erase(std::find_if(r.kernels.begin(), r.kernels.end(),
                               [&](const KernelEntry& e) { return e.name == foreign->name; }));
  PackedHeader h;
  h.layout = &portable_layout();
  h.problem = {64, 128, 4, 32, false, false};
  const Tuning kept(std::make_shared<TuningRecord>(r), "test");
  EXPECT_NE(kept.find_override(reg, host_profile(), h, 5, 1), nullptr);
  ASSERT_TRUE(host_profile().isa.contains(reg.kernels().front().requires));
  r.kernels.erase(r.kernels.begin());  // a kernel the host runs, unmeasured
  const Tuning dropped(std::make_shared<TuningRecord>(r), "test");
  EXPECT_EQ(dropped.find_override(reg, host_profile(), h, 5, 1), nullptr);
}

// A record made before a variant of a measured kernel was added (same layout and mr; here the
// GFNI GEMV, registered after the plain one): the variant costs what its measured sibling does,
// on the record's scale, not the generic one, and since that never wins over the sibling
// registered before it, the overrides stay.
TEST(TuningRecord, AnUnmeasuredVariantTakesItsMeasuredSiblingsCost) {
  TuningRecord r = host_record();
  r.registry = "fedcba9876543210";
  const Registry& reg = default_registry();
  const KernelDesc& variant = *reg.kernel("qa8_qw_gemv_1x16c4__avx512vnnigfni");
  auto drop = [&](const char* name) {
    r.kernels.erase(std::find_if(r.kernels.begin(), r.kernels.end(), [&](const KernelEntry& e) { return e.name == name; }));
  };
  drop(variant.name);
  const Tuning t(std::make_shared<TuningRecord>(r), "test");
  const Tuning::KernelCostFrom c = t.kernel_cost(reg, variant, host_profile());
  EXPECT_NE(c.source.find("derived from qa8_qw_gemv_1x16c4__avx512vnni (test;"), std::string::npos) << c.source;
  const KernelEntry& sibling = *std::find_if(r.kernels.begin(), r.kernels.end(), [](const KernelEntry& e) {
    return e.name == std::string("qa8_qw_gemv_1x16c4__avx512vnni");
  });
  EXPECT_EQ(c.cost.dot[3], sibling.cost.dot[3]);
  EXPECT_NE(c.cost.dot[3], find_cost(generic_costs(), variant.name)->dot[3]);
  EXPECT_NE(c.bandwidth, nullptr);
  PackedHeader h;
  h.layout = &portable_layout();
  h.problem = {64, 128, 4, 32, false, false};
  EXPECT_NE(t.find_override(reg, host_profile(), h, 5, 1), nullptr);
  // Without its sibling measured, it is a kernel the record lacks: generic numbers, no overrides
  // (where the host runs it).
  drop("qa8_qw_gemv_1x16c4__avx512vnni");
  const Tuning none(std::make_shared<TuningRecord>(r), "test");
  EXPECT_EQ(none.kernel_cost(reg, variant, host_profile()).source, "generic");
  if (host_profile().isa.contains(variant.requires)) {
    EXPECT_EQ(none.find_override(reg, host_profile(), h, 5, 1), nullptr);
  }
}

TEST(TuningRecord, ChangedKernelsAndRegistryOnlyDropWhatTheyInvalidate) {
  TuningRecord r = host_record();
  const KernelDesc& first = default_registry().kernels().front();
  r.kernels[0].identity = "0123456789abcdef";  // measured on a kernel that has changed since
  r.registry = "fedcba9876543210";             // and with another candidate set
  const Tuning t(std::make_shared<TuningRecord>(r), "test");
  EXPECT_EQ(t.kernel_cost(default_registry(), first, host_profile()).source, "generic");
  const KernelDesc& second = default_registry().kernels()[1];
  EXPECT_EQ(t.kernel_cost(default_registry(), second, host_profile()).source, "test");
  PackedHeader h;
  h.layout = &portable_layout();
  h.problem = {64, 128, 4, 32, false, false};
  EXPECT_EQ(t.find_override(default_registry(), host_profile(), h, 5, 1), nullptr);
  // On a machine the record does not describe, nothing of it is used.
  const CpuProfile other = parse_profile_spec("arm64:neon;cores=3xcortex-a53");
  EXPECT_FALSE(t.applies_to(other));
  EXPECT_EQ(t.kernel_cost(default_registry(), second, other).source, "generic");
}

// Inside a model larger than L3 a layer's weights come from DRAM, however small the layer:
// with the zen3-dev record's numbers, 2048x2048 4-bit decode alone (L3-resident) runs on the
// GEMV that reads the column sums, in a 1 GiB working set on the streaming GEMV (a fifth fewer
// bytes from DRAM); a working set L3 holds plans as the weights alone. A plan override, timed
// on one weight alone, decides alone only.
TEST(TuningRecord, AModelLargerThanL3ReadsEachLayerFromDram) {
  const Registry& reg = default_registry();
  std::string_view text;
  for (const BuiltinRecord& b : builtin_records())
    if (std::string(b.file) == "zen3-dev.json") text = b.text;
  ASSERT_FALSE(text.empty());
  TuningRecord r = parse_record(text);
  r.scope = "uarch";  // any Zen 3, as the profile below
  r.overrides.push_back({"x86_avx2_n8k4s32_sums", 2048, 2048, 4, 32, 1, 2, {{"qa8_qw_gemm_4x8c4__avx2", 1}}, 4, 2048, 1.1});
  const Tuning t(std::make_shared<TuningRecord>(r), "built-in zen3-dev.json");
  const CpuProfile zen3 = parse_profile_spec("x86_64:avx2,fma,f16c;cores=2xzen3;l2=512K;l3=32M");
  PackedHeader h;
  h.layout = find_layout(layout_id::x86_avx2_n8k4s32_sums);
  h.problem = {2048, 2048, 4, 32, false, false};
  const size_t model_bytes = size_t(1) << 30;
  auto kernel = [](const ExecPlan& p) {
    return p.per_uarch[0].num_segments == 1 ? std::string(p.per_uarch[0].seg[0].kernel->name) : "a mix";
  };

  const ExecPlan alone = make_plan(reg, zen3, h, 1, 1, nullptr, false, &t);
  PlanExplanation ex;
  const ExecPlan model = make_plan(reg, zen3, h, 1, 1, &ex, false, &t, model_bytes);
  EXPECT_EQ(kernel(alone), "qa8_qw_gemv_1x8c4_sums__avx2");
  EXPECT_EQ(kernel(model), "qa8_qw_gemv_1x8c4__avx2");
  EXPECT_GT(model.per_uarch[0].est_ns, alone.per_uarch[0].est_ns);
  EXPECT_NE(model.key, alone.key);  // never found in each other's cache slot
  EXPECT_NE(format_plan(model, h, &ex).find("working set: 1024 MiB of packed weights read in turn (more than L3"),
            std::string::npos)
      << format_plan(model, h, &ex);
  const ExecPlan small_model = make_plan(reg, zen3, h, 1, 1, nullptr, false, &t, size_t(8) << 20);
  EXPECT_TRUE(same_plan(small_model, alone));
  EXPECT_EQ(small_model.key, alone.key);  // one threshold: a working set L3 holds is not streamed
  EXPECT_EQ(small_model.per_uarch[0].est_ns, alone.per_uarch[0].est_ns);

  PlanExplanation ex_alone2, ex_model2;
  const ExecPlan alone2 = make_plan(reg, zen3, h, 1, 2, &ex_alone2, false, &t);
  const ExecPlan model2 = make_plan(reg, zen3, h, 1, 2, &ex_model2, false, &t, model_bytes);
  EXPECT_EQ(kernel(alone2), "qa8_qw_gemm_4x8c4__avx2");
  EXPECT_NE(ex_alone2.override_note, "");
  EXPECT_EQ(kernel(model2), "qa8_qw_gemv_1x8c4__avx2");
  EXPECT_EQ(ex_model2.override_note, "");
  EXPECT_NE(ex_model2.working_set.find("the plan override of built-in zen3-dev.json for these weights is not used"),
            std::string::npos)
      << ex_model2.working_set;
  EXPECT_TRUE(same_plan(make_plan(reg, zen3, h, 1, 2, nullptr, false, &t, size_t(8) << 20), alone2));
}

// A kernel that prefetches its weights runs at the distance the record measured for it on this
// CPU, and explain says where the distance came from; other CPUs, a changed kernel and a kernel
// that does not prefetch keep the registry's.
TEST(TuningRecord, AMeasuredPrefetchDistanceReachesThePlan) {
  const Registry& reg = default_registry();
  const KernelDesc& gemv = *reg.kernel("qa8_qw_lut_gemv_1x32__avx2");
  const KernelDesc& gemm = *reg.kernel("qa8_qw_lut_gemm_4x32__avx2");
  ASSERT_GT(gemv.prefetch_bytes, 0u);
  ASSERT_EQ(gemm.prefetch_bytes, 0u);
  const CpuProfile zen3 = parse_profile_spec("x86_64:avx2,fma,f16c;cores=2xzen3");
  TuningRecord r = host_record();
  r.scope = "uarch";
  r.cpu.arch = Arch::x86_64;
  r.cpu.uarch = Uarch::zen3;
  for (KernelEntry& e : r.kernels) {
    if (e.name == gemv.name) e.prefetch_bytes = 512;
    if (e.name == gemm.name) e.prefetch_bytes = 1024;  // a kernel that does not prefetch ignores it
  }
  const Tuning t(std::make_shared<TuningRecord>(parse_record(record_to_json(r))), "file zen3.json");
  EXPECT_EQ(t.prefetch_distance(reg, gemv, zen3).bytes, 512u);
  EXPECT_EQ(t.prefetch_distance(reg, gemv, zen3).source, "file zen3.json");
  EXPECT_EQ(t.prefetch_distance(reg, gemm, zen3).bytes, 0u);
  EXPECT_EQ(t.prefetch_distance(reg, gemv, parse_profile_spec("x86_64:avx2,fma,f16c;cores=2xzen4")).bytes,
            gemv.prefetch_bytes);
  EXPECT_EQ(Tuning().prefetch_distance(reg, gemv, zen3).source, "registry default");
  // Without a record, a uarch with a measured generic distance runs it (select/generic_costs.cpp);
  // other uarchs and kernels without an entry keep the registry's.
  const KernelDesc& avx2_gemv = *reg.kernel("qa8_qw_gemv_1x8c4__avx2");
  const CpuProfile zen4 = parse_profile_spec("x86_64:avx2,fma,f16c;cores=2xzen4");
  ASSERT_GE(generic_prefetch_bytes(avx2_gemv.name, Uarch::zen4), 0);
  EXPECT_NE(uint32_t(generic_prefetch_bytes(avx2_gemv.name, Uarch::zen4)), avx2_gemv.prefetch_bytes);
  EXPECT_EQ(Tuning().prefetch_distance(reg, avx2_gemv, zen4).bytes,
            uint32_t(generic_prefetch_bytes(avx2_gemv.name, Uarch::zen4)));
  EXPECT_EQ(Tuning().prefetch_distance(reg, avx2_gemv, zen4).source, "generic for zen4");
  EXPECT_EQ(Tuning().prefetch_distance(reg, avx2_gemv, zen3).bytes, avx2_gemv.prefetch_bytes);
  EXPECT_EQ(generic_prefetch_bytes(gemv.name, Uarch::zen4), -1);

  PackedHeader h;
  h.layout = find_layout(layout_id::x86_avx2_lut_n32k4s32);
  h.problem = {4096, 4096, 1, 32, false, false};
  PlanExplanation ex;
  const ExecPlan p = make_plan(reg, zen3, h, 1, 1, &ex, false, &t);
  ASSERT_EQ(p.per_uarch[0].num_segments, 1);
  EXPECT_EQ(p.per_uarch[0].seg[0].kernel, &gemv);
  EXPECT_EQ(p.per_uarch[0].seg[0].prefetch_bytes, 512u);
  EXPECT_NE(format_plan(p, h, &ex).find("prefetches its weights ahead: qa8_qw_lut_gemv_1x32__avx2: 512 B (file zen3.json)"),
            std::string::npos)
      << format_plan(p, h, &ex);
  const ExecPlan q = make_plan(reg, zen3, h, 8, 1, nullptr, false, &t);  // the GEMM's: none
  EXPECT_EQ(q.per_uarch[0].seg[0].kernel, &gemm);
  EXPECT_EQ(q.per_uarch[0].seg[0].prefetch_bytes, 0u);

  for (KernelEntry& e : r.kernels)
    if (e.name == gemv.name) e.identity = "0123456789abcdef";  // measured on another kernel
  const Tuning changed(std::make_shared<TuningRecord>(r), "file zen3.json");
  EXPECT_EQ(changed.prefetch_distance(reg, gemv, zen3).bytes, gemv.prefetch_bytes);
}

TEST(TuningRecord, AnOverrideDecidesAndExplainSaysSo) {
  const TuningRecord r = host_record();
  const Tuning t(std::make_shared<TuningRecord>(r), "file override-test.json");
  PackedHeader h;
  h.layout = &portable_layout();
  h.problem = {64, 128, 4, 32, false, false};
  PlanExplanation ex;
  const ExecPlan p = make_plan(default_registry(), host_profile(), h, 5, 1, &ex, true, &t);
  EXPECT_EQ(p.row_tile, 8);
  EXPECT_EQ(p.col_tile, 2);
  ASSERT_EQ(p.per_uarch[0].num_segments, 2);
  EXPECT_STREQ(p.per_uarch[0].seg[0].kernel->name, "qa8_qw_gemm_4x1c1__scalar");
  EXPECT_STREQ(p.per_uarch[0].seg[1].kernel->name, "qa8_qw_gemm_1x1c1__scalar");
  EXPECT_NE(ex.override_note.find("override-test.json"), std::string::npos) << ex.override_note;
  EXPECT_NE(format_plan(p, h, &ex).find("decided by plan override from file override-test.json"), std::string::npos);
  // The model alone would not have chosen it; other m and threads are the model's.
  const Tuning no_overrides = [&] {
    TuningRecord r2 = r;
    r2.overrides.clear();
    return Tuning(std::make_shared<TuningRecord>(r2), "same record without overrides");
  }();
  EXPECT_FALSE(same_plan(make_plan(default_registry(), host_profile(), h, 5, 1, nullptr, true, &no_overrides), p));
  for (auto [m, threads] : {std::pair{5, 2}, std::pair{4, 1}}) {
    PlanExplanation e2;
    const ExecPlan q = make_plan(default_registry(), host_profile(), h, m, threads, &e2, true, &t);
    EXPECT_TRUE(e2.override_note.empty());
    EXPECT_TRUE(same_plan(q, make_plan(default_registry(), host_profile(), h, m, threads, nullptr, true, &no_overrides)));
  }
}

TEST(TuningRecord, LoadingARecordRetiresCachedPlans) {
  const WeightProblem p{64, 128, 4, 32, false, false};
  const test::Weights w = test::random_weights(p, 5);
  const PackedWeights pw = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr,
                                               nullptr, "portable");
  const test::Activations x = test::random_activations(5, p.k, 6);
  std::vector<float> y(size_t(5) * p.n);
  LinearOptions o;
  o.num_threads = 1;
  pw.linear(5, x.x, y.data(), o);  // cached under the tuning in use
  const ExecPlan* before = pw.impl().cache.find(plan_key(5, 1));
  ASSERT_NE(before, nullptr);
  ASSERT_EQ(lowbit_load_tuning(write_temp("override.json", record_to_json(host_record())).c_str()), LOWBIT_OK)
      << lowbit_last_error();
  EXPECT_EQ(pw.impl().cache.find(plan_key(5, 1)), nullptr) << "the old plan must not be found";
  std::vector<float> y2(y.size());
  pw.linear(5, x.x, y2.data(), o);
  const ExecPlan* after = pw.impl().cache.find(plan_key(5, 1));
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->row_tile, 8) << "the record's override";
  EXPECT_EQ(std::memcmp(y.data(), y2.data(), y.size() * sizeof(float)), 0) << "a record never changes results";
  EXPECT_EQ(lowbit_load_tuning(nullptr), LOWBIT_OK);
}

TEST(TuningRecord, CApiSaysWhyARecordIsRefused) {
  const std::shared_ptr<const Tuning> before = active_tuning();
  EXPECT_EQ(lowbit_load_tuning((g_dir + "/no-such-file.json").c_str()), LOWBIT_IO_ERROR);
  EXPECT_NE(std::string(lowbit_last_error()).find("no-such-file"), std::string::npos);
  const std::string text = record_to_json(host_record());
  EXPECT_EQ(lowbit_load_tuning(write_temp("cut.json", text.substr(0, text.size() / 2)).c_str()), LOWBIT_CORRUPT_DATA);
  TuningRecord other = host_record();
  other.cpu.id.stepping += 1;
  EXPECT_EQ(lowbit_load_tuning(write_temp("other.json", record_to_json(other)).c_str()), LOWBIT_UNSUPPORTED);
  EXPECT_NE(std::string(lowbit_last_error()).find("another CPU"), std::string::npos) << lowbit_last_error();
  EXPECT_EQ(active_tuning(), before) << "a refused record leaves the tuning in use";
  try {
    load_tuning(g_dir + "/cut.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::corrupt_data);
  }
}

TEST(TuningRecord, BuiltinRecordsAreValid) {
  for (const BuiltinRecord& b : builtin_records()) {
    const TuningRecord r = parse_record(b.text);
    EXPECT_FALSE(r.source.empty()) << b.file << ": a built-in record says where its numbers came from";
    EXPECT_EQ(r.lowbit_version.substr(0, 4), std::string(library_version()).substr(0, 4)) << b.file;
  }
}

// The development machine's own record wins over one for its whole micro-architecture, in
// either file order; a record for another CPU is skipped.
TEST(TuningRecord, ABuiltinRecordForThisCpuWinsOverOneForItsUarch) {
  TuningRecord mine = host_record(), kind = host_record(), other = host_record();
  mine.name = "mine";
  kind.name = "kind";
  kind.scope = "uarch";
  other.name = "other";
  other.cpu.id.stepping += 1;
  const std::string a = record_to_json(mine), b = record_to_json(kind), c = record_to_json(other);
  for (const auto& records : {std::vector<BuiltinRecord>{{"b", b}, {"a", a}, {"c", c}},
                              std::vector<BuiltinRecord>{{"c", c}, {"a", a}, {"b", b}}}) {
    const std::shared_ptr<const Tuning> t = builtin_tuning(records);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->record()->name, "mine");
  }
  const std::shared_ptr<const Tuning> t = builtin_tuning({{"c", c}, {"b", b}});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->record()->name, "kind");
  EXPECT_EQ(builtin_tuning({{"c", c}}), nullptr);
}

TEST(TuningRecord, NoRecordMeansGenericNumbers) {
  setenv("LOWBIT_TUNING", "none", 1);
  const std::shared_ptr<const Tuning> t = lookup_tuning();
  unsetenv("LOWBIT_TUNING");
  EXPECT_EQ(t->record(), nullptr);
  EXPECT_EQ(plans(*t), plans(Tuning()));
}

}  // namespace
}  // namespace lowbit
