// Tuning: costs as data looked up by kernel name (the generic table, records), the fallback for
// a kernel nobody measured, tuning records (parse, validate, look up) and plan overrides.
#include <gtest/gtest.h>

#include <string>

#include "format/layouts.h"
#include "registry/registry.h"
#include "select/cost_model.h"
#include "select/plan.h"
#include "select/select_layout.h"
#include "select/tuning.h"
#include "test_util.h"

namespace lowbit {
namespace {

void stand_in(const GemmShape&, const UKernelArgs&) {}

TEST(GenericCosts, EveryBuiltinKernelHasAnEntry) {
  const Tuning generic;
  for (const KernelDesc& kd : default_registry().kernels())
    EXPECT_EQ(generic.kernel_cost(default_registry(), kd).source, "generic") << kd.name;
}

TEST(GenericCosts, ComputeCyclesIsTheWeightedSumOfItsTerms) {
  const KernelDesc& kd = *default_registry().kernel("qa8_qw_gemm_4x8c4__avx2");
  const KernelCost c = *find_cost(generic_costs(), kd.name);
  for (size_t rows : {1, 2, 3, 4}) {
    const BlockShape b{rows, 64, 512, 32, 4};
    const CostTerms t = block_terms(kd, b);
    const double sum = t.unpack * c.unpack[4] + t.dot * c.dot[4] + t.group * c.group + t.group_row * c.group_row;
    EXPECT_NEAR(compute_cycles(kd, c, Uarch::zen3, b), sum, 1e-9 * sum) << rows;
    EXPECT_EQ(t.dot, t.unpack * effective_rows(kd, rows));
  }
}

// A kernel added to the registry without a cost entry anywhere still plans: it borrows a
// sibling's cost and says so.
TEST(GenericCosts, AKernelWithoutAnEntryBorrowsFromASibling) {
  const LayoutDesc& l = *find_layout("x86_avx2_n8k4s32_sums");
  const IsaSet avx2{Isa::avx2, Isa::fma, Isa::f16c};
  const Registry reg({{"qa8_qw_gemv_1x8c4__avx2", l.id, avx2, 1, {1, 4}, kAllBits, true, true, kEveryRowCount, stand_in},
                      {"qa8_qw_gemm_4x8c4__avx2", l.id, avx2, 4, {4, 4}, kAllBits, true, true, row_counts({2, 4}), stand_in},
                      {"new_8x8c4__avx2", l.id, avx2, 8, {8, 4}, kAllBits, true, true, row_counts({8}), stand_in},
                      {"new_1x1c1__scalar", portable_layout().id, {}, 1, {1, 1}, kAllBits, true, true, kEveryRowCount, stand_in}},
                     {&portable_layout(), &l});
  const Tuning generic;
  const Tuning::KernelCostFrom c = generic.kernel_cost(reg, *reg.kernel("new_8x8c4__avx2"));
  EXPECT_NE(c.source.find("derived from qa8_qw_gemm_4x8c4__avx2"), std::string::npos) << c.source;
  EXPECT_EQ(c.cost.dot[4], find_cost(generic_costs(), "qa8_qw_gemm_4x8c4__avx2")->dot[4]);
  const Tuning::KernelCostFrom d = generic.kernel_cost(reg, *reg.kernel("new_1x1c1__scalar"));
  EXPECT_NE(d.source.find("conservative default"), std::string::npos) << d.source;
  PackedHeader h;
  h.layout = &l;
  h.problem = {256, 512, 4, 32, false, false};
  PlanExplanation ex;
  for (int m : {1, 3, 8, 17, 64})
    EXPECT_NO_THROW(make_plan(reg, parse_profile_spec("x86_64:avx2,fma,f16c;cores=2xzen3"), h, m, 2, &ex, true, &generic));
}

}  // namespace
}  // namespace lowbit
