// Shared pieces of the commands' output: profiles, candidates and kernels as JSON or text.
#pragma once

#include <string>
#include <vector>

#include "cpu/profile.h"
#include "json.h"
#include "registry/registry.h"
#include "select/plan.h"

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

// Prints a table with a header row and aligned columns.
void print_table(const std::vector<std::vector<std::string>>& rows);
std::string fmt(double v, int decimals);

}  // namespace lowbit::cli
