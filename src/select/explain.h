// Human-readable records of selection decisions (LOWBIT_LOG=select, `lowbit explain`).
#pragma once

#include <string>

#include "select/plan.h"
#include "select/select_layout.h"

namespace lowbit {

std::string format_layout_decision(const LayoutDecision& d, const WeightProblem& p,
                                   const CpuProfile& prof);
std::string format_plan(const ExecPlan& plan, const PackedHeader& h, const PlanExplanation* ex);

}  // namespace lowbit
