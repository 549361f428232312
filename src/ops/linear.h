// Running the operation: plan (cached), pack activations, split tasks over lowbit's thread
// pool (ops/thread_pool.h: a late worker does not hold the call) and call each thread's kernel
// for its own uarch.
#pragma once

#include <atomic>
#include <memory>

#include "cpu/profile.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/thread_pool.h"
#include "registry/registry.h"
#include "select/plan.h"

namespace lowbit {

struct PackedWeights::Impl {
  PackedBuffer buf;
  mutable PlanCache cache;
  // What a call's workers hold to keep the bytes alive while they are late past its return:
  // the Impl itself when it owns them. A view's bytes are the caller's, so its workers hold a
  // lease instead, and destroying the last copy of the view waits until they have let it go:
  // the caller may free the bytes right after, while its calls never wait.
  void make_view_lease();
  const std::shared_ptr<const void>& view_lease() const { return view_lease_; }  // null: owned
  ~Impl();

 private:
  std::shared_ptr<const void> view_lease_;
  std::atomic<bool> view_lease_released_{false};
};

// PackedWeights::linear, with `bytes_owner` kept alive for workers still late when the call
// returns instead of the Impl or its view lease: for callers whose view's bytes belong to
// something else that may free them (a PyTorch tensor's storage).
void linear_keeping(const PackedWeights& w, std::shared_ptr<const void> bytes_owner, int m, const float* x,
                    float* y, const LinearOptions& options);

// Someone else's threads for one call (PyTorch's intra-op team): fork_join(ctx, body, arg) runs
// body(arg) on each of the team's `threads` threads, the calling one among them, and returns
// once every one has returned (an OpenMP region). Such a call returns only when the team's last
// thread has left it: lowbit's own pool does not wait for a late worker, a team does.
struct ForeignTeam {
  int threads = 1;
  void (*fork_join)(void* ctx, void (*body)(void*), void* arg) = nullptr;
  void* ctx = nullptr;
};

// PackedWeights::linear with the tasks on `team` instead of lowbit's pool. Tasks are claimed one
// at a time by whichever thread is free, so a thread that starts late gets less work, not the
// same share; and a team that kept the caller waiting longer than half its own work (late: a
// thread asleep or descheduled) is left out of this thread's next calls, twice as many each
// time up to 64 (16 calls in time halve that), which then run on the calling thread alone.
// options.num_threads is ignored (team.threads plans).
void linear_on_team(const PackedWeights& w, int m, const float* x, float* y, const LinearOptions& options,
                    const ForeignTeam& team);

// Where a worker learns its uarch index. The default asks the calling core
// (cpu/current_core.h); tests inject their own to simulate a heterogeneous machine.
struct UarchSource {
  uint32_t (*fn)(void* ctx) = nullptr;
  void* ctx = nullptr;
};

struct RunContext {
  const Registry* registry;
  const CpuProfile* profile;
  PlanCache* cache = nullptr;   // nullptr: plan every call
  ThreadPool* pool = nullptr;   // nullptr: the process-wide pool for `threads`
  UarchSource uarch_source;
  const ForeignTeam* team = nullptr;  // not nullptr: the tasks run on it, not on a pool
};

// Validates the arguments (Error(invalid_argument) naming the bad one) and runs; `owner` as
// for execute_plan.
void run_linear(const RunContext& ctx, const PackedBuffer& w, int m, const float* x, float* y,
                const LinearOptions& opt, std::shared_ptr<const void> owner = nullptr);

// The plan run_linear makes for a call of m rows on `threads` threads: planned with the
// process's working set (ops/live_weights.h), under the cache key that says so. The tools that
// report or run lowbit_linear's plan take it from here.
ExecPlan call_plan(const Registry& reg, const CpuProfile& prof, const PackedHeader& h, int m, int threads,
                   PlanExplanation* explain = nullptr);

// Executes an existing plan (no validation): used by run_linear and the regret tool.
// With a team (not nullptr), on it (linear_on_team), and `pool` and `owner` are not used.
// With an `owner` that keeps `w` alive, the call returns as soon as y is complete: a worker
// still late then keeps a reference to `owner` (and copies of the plan and the packed
// activations) and never writes y; it may also still ask `uarch_source` and `profile` for its
// core, so those must live as long as the process (host_profile() does). Without an owner,
// the call also waits until its workers have left.
void execute_plan(const ExecPlan& plan, const CpuProfile& profile, const PackedBuffer& w, int m,
                  const float* x, float* y, const LinearOptions& opt, ThreadPool* pool,
                  UarchSource uarch_source, std::shared_ptr<const void> owner = nullptr,
                  const ForeignTeam* team = nullptr);

// True when LOWBIT_LOG names "select": fresh decisions are printed to stderr.
bool log_select();

}  // namespace lowbit
