// Tuning records (LOWBIT_TUNING, the user's cache, lowbit_load_tuning): bytes to parse_record,
// as given and with the checksum recomputed (so mutations reach the fields behind it). An
// accepted record must round-trip record_to_json, and the planner must work with its numbers:
// it is made to apply to this machine and plans a few shapes, m and thread counts.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cpu/profile.h"
#include "format/packed_weights.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "select/select_layout.h"
#include "select/tuning.h"
#include "select/tuning_record.h"
#include "util/error.h"

namespace {

void use(const lowbit::TuningRecord& parsed) {
  const std::string json = lowbit::record_to_json(parsed);
  if (lowbit::record_to_json(lowbit::parse_record(json)) != json) std::abort();

  auto rec = std::make_shared<lowbit::TuningRecord>(parsed);
  const lowbit::CpuProfile& host = lowbit::host_profile();
  rec->cpu = lowbit::host_signature();
  rec->registry = lowbit::default_registry().fingerprint();  // its overrides are considered too
  (void)lowbit::record_mismatch(*rec, rec->cpu);
  const lowbit::Tuning tuning(rec, "fuzz");
  for (const lowbit::WeightProblem& p : {lowbit::WeightProblem{24, 64, 4, 32, true, true},
                                         lowbit::WeightProblem{256, 512, 3, 128, false, false}}) {
    const lowbit::LayoutDecision d = lowbit::select_layout(lowbit::default_registry(), host, p, &tuning);
    lowbit::PackedHeader h;
    h.layout = d.winner;
    h.problem = p;
    for (int m : {1, 5, 64})
      for (int threads : {1, 2}) {
        lowbit::PlanExplanation ex;
        const lowbit::ExecPlan plan = lowbit::make_plan(lowbit::default_registry(), host, h, m, threads, &ex, true, &tuning);
        if (plan.row_tile < 1 || plan.col_tile < 1 || plan.per_uarch[0].num_segments < 1) std::abort();
      }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const std::string& t : {text, lowbit::with_valid_checksum(text)}) {
    lowbit::TuningRecord r;
    try {
      r = lowbit::parse_record(t);
    } catch (const lowbit::Error&) {
      continue;  // rejected, with a message: what a bad record must do
    }
    use(r);
  }
  return 0;
}
