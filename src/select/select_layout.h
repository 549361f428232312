// Pack-time choice of a layout for a problem on a target (DESIGN §5.1).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cpu/profile.h"
#include "format/problem.h"
#include "registry/registry.h"
#include "select/plan.h"

namespace lowbit {

// The profile a packing target stands for: "" (this CPU: host_profile()), "portable",
// "x86-avx2", "x86-avxvnni", "x86-avx512vnni", "aarch64-neon", "aarch64-dotprod",
// "aarch64-i8mm" (uarch unknown: the big-core costs), or a CPU spec as parse_profile_spec()
// reads it ("arm64:neon,dotprod;cores=4xcortex-a55,4xcortex-a76": per-uarch costs, so a
// big.LITTLE plan shows each core type's kernels). Throws Error(invalid_argument) for an
// unknown name or a malformed spec.
CpuProfile target_profile(std::string_view target);
const std::vector<std::string>& target_names();

struct LayoutDecision {
  const LayoutDesc* winner = nullptr;
  std::vector<Candidate> candidates;  // every layout; cost = score (1.0 = best at every m)
};

// Picks the layout whose kernels are expected fastest on `prof` for decode (m=1) and
// prefill (m=16, 128), as the geometric mean of each layout's time relative to the best;
// n and k take part through the cost model. Throws Error(unsupported) when no layout can
// run the problem there. Costs come from `tuning` (nullptr: the active one).
LayoutDecision select_layout(const Registry& reg, const CpuProfile& prof, const WeightProblem& p,
                             const Tuning* tuning = nullptr);

}  // namespace lowbit
