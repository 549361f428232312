// Running the operation: plan (cached), pack activations, split tasks over a thread pool and
// call each worker's kernel for its own uarch.
#pragma once

#include <pthreadpool.h>

#include "cpu/profile.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "registry/registry.h"
#include "select/plan.h"

namespace lowbit {

struct PackedWeights::Impl {
  PackedBuffer buf;
  mutable PlanCache cache;
};

// Where a worker learns its uarch index. The default asks the calling core
// (cpu/current_core.h); tests inject their own to simulate a heterogeneous machine.
struct UarchSource {
  uint32_t (*fn)(void* ctx, uint32_t pool_uarch_index) = nullptr;
  void* ctx = nullptr;
};

struct RunContext {
  const Registry* registry;
  const CpuProfile* profile;
  PlanCache* cache = nullptr;   // nullptr: plan every call
  pthreadpool_t pool = nullptr; // nullptr: a process-wide pool for `threads`
  UarchSource uarch_source;
};

// Validates the arguments (Error(invalid_argument) naming the bad one) and runs.
void run_linear(const RunContext& ctx, const PackedBuffer& w, int m, const float* x, float* y,
                const LinearOptions& opt);

// Executes an existing plan (no validation): used by run_linear and the regret tool.
void execute_plan(const ExecPlan& plan, const CpuProfile& profile, const PackedBuffer& w, int m,
                  const float* x, float* y, const LinearOptions& opt, pthreadpool_t pool,
                  UarchSource uarch_source);

// True when LOWBIT_LOG names "select": fresh decisions are printed to stderr.
bool log_select();

}  // namespace lowbit
