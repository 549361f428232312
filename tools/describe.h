// Shared pieces of the commands' output: profiles, candidates and kernels as JSON or text.
#pragma once

#include <string>
#include <vector>

#include "cpu/profile.h"
#include "json.h"
#include "lowbit/lowbit.hpp"
#include "registry/registry.h"
#include "select/plan.h"
#include "select/select_layout.h"

namespace lowbit::cli {

std::string isa_string(IsaSet s);  // "avx2+fma", or "scalar" when empty
void profile_json(Json& j, const CpuProfile& p);
// The "isa" and "cores" members of an object (inside "profile", and at the top of `info`).
void isa_and_cores_json(Json& j, const CpuProfile& p);
std::string profile_text(const CpuProfile& p);
void candidates_json(Json& j, const std::vector<Candidate>& cs);
// The kernels of the plan's first uarch (and every uarch when they differ).
void plan_kernels_json(Json& j, const ExecPlan& plan);
std::string plan_kernels_text(const ExecPlan& plan);

// The reports of `lowbit info`, `lowbit explain` and `lowbit inspect` (schemas in docs/cli.md);
// the Python package returns the same JSON as dicts (python/module.cpp).
std::string info_json();
bool kernel_runs_here(const KernelDesc& k);  // compiled in, and this CPU has its ISA

struct Explanation {  // everything `lowbit explain` reports
  WeightProblem problem;
  int m = 0, threads = 0;
  std::string target;  // "" = this CPU
  CpuProfile profile;
  LayoutDecision layout;
  PackedHeader header;
  ExecPlan plan;
  PlanExplanation plan_candidates;
  size_t working_set = 0;  // bytes of packed weights read in turn (make_plan; 0: these alone)
};
// Validates the problem and m (Error(invalid_argument)); threads <= 0: the target's threads.
// working_set as for make_plan: what the plan of a call inside a model of that many bytes is.
Explanation explain(const WeightProblem& p, int m, int threads, const std::string& target,
                    size_t working_set = 0);
std::string explanation_json(const Explanation& e);
std::string explanation_text(const Explanation& e);

// The members of `lowbit inspect --json` after "file" and "valid", into an open object.
void packed_info_json(Json& j, const PackedInfo& i);

// Prints a table with a header row and aligned columns.
void print_table(const std::vector<std::vector<std::string>>& rows);
std::string fmt(double v, int decimals);

}  // namespace lowbit::cli
