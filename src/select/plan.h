// Run-time planning: which kernel(s) cover the m rows, the tiling and the thread split —
// per uarch, so each core of a heterogeneous CPU runs the kernel planned for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cpu/profile.h"
#include "format/header.h"
#include "registry/registry.h"
#include "select/cost_model.h"
#include "select/tuning.h"

namespace lowbit {

constexpr int kMaxUarchs = 4;    // per-uarch plans kept; further uarchs use index 0's plan
constexpr int kMaxSegments = 2;  // e.g. mr=4 tiles, then mr=1 for the remainder

struct Segment {
  const KernelDesc* kernel = nullptr;
  int row_begin = 0, rows = 0;  // rows [row_begin, row_begin+rows), in blocks of kernel->mr
  // UKernelArgs::prefetch_bytes of its calls: the tuning record's measured distance for the
  // kernel, else the registry's (KernelDesc::prefetch_bytes).
  uint32_t prefetch_bytes = 0;
};

struct UarchPlan {
  Uarch uarch = Uarch::unknown;
  int num_segments = 0;
  Segment seg[kMaxSegments];
  double est_ns = 0.0;
};

struct ExecPlan {
  uint64_t key = 0;
  int m = 0, threads = 1;
  int num_uarchs = 1;
  UarchPlan per_uarch[kMaxUarchs];
  int row_tile = 1;  // rows per task: a multiple of every segment's mr (or all rows)
  int col_tile = 1;  // columns per task: a multiple of the layout's nr
  // The uarch plan a worker on uarch index `i` runs.
  const UarchPlan& for_uarch(uint32_t i) const { return per_uarch[i < uint32_t(num_uarchs) ? i : 0]; }
};

// One line of an explanation: a kernel or a kernel mix, why it was (not) usable, its cost.
struct Candidate {
  std::string name;
  bool eligible = false;
  std::string reason;  // empty when eligible
  double cost_ns = 0.0;
  std::string source;  // a kernel's: where its cost came from (Tuning::kernel_cost)
};

struct PlanExplanation {
  std::vector<Candidate> kernels;  // every registered kernel, for uarch index 0
  std::vector<Candidate> mixes;    // every kernel mix considered, for uarch index 0
  std::string winner;
  std::string tuning;         // Tuning::origin() of the numbers
  std::string machine;        // where caches, bandwidth and threading numbers came from
  std::string override_note;  // non-empty when a plan override decided
  std::string working_set;    // non-empty when planned with a working set: its size, where it lives
  // Per winning kernel that prefetches its weights, for uarch index 0: how far ahead and where
  // the distance came from, e.g. "qa8_qw_gemv_1x8c4__avx2: 2048 B (registry default)".
  std::vector<std::string> prefetch;
};

// Why `kd` cannot run packed weights of `layout` and `p` on `isa` (empty string: it can).
// With require_code, a kernel not built into this binary is rejected too.
std::string kernel_rejection(const KernelDesc& kd, const LayoutDesc& layout,
                             const WeightProblem& p, IsaSet isa, bool require_code = true);

// Plans m rows with `threads` threads. Throws Error(unsupported) naming the layout and the
// missing ISA when no kernel of the registry can run these weights on this profile.
// require_code = false estimates for another machine (packing for a named target). Costs come
// from `tuning`, or the active one (active_tuning()) when it is nullptr. working_set: the bytes
// of packed weights read in turn with these (ops/live_weights.h; 0: these alone): the first
// pass over the weights reads from where that many bytes live (a model larger than L3: DRAM).
ExecPlan make_plan(const Registry& reg, const CpuProfile& prof, const PackedHeader& h, int m,
                   int threads, PlanExplanation* explain = nullptr, bool require_code = true,
                   const Tuning* tuning = nullptr, size_t working_set = 0);

// A plan that runs `kd` alone over all m rows with `threads` threads: row tile the rows
// rounded up to its mr, col_tile columns per tile (a multiple of the layout's nr), at the
// registry's prefetch distance. For the tests and benchmarks that check or time one kernel.
ExecPlan single_kernel_plan(const KernelDesc& kd, int m, int threads, int col_tile);

// Every plan make_plan chooses among (each kernel mix × each tiling), for a homogeneous
// machine, with its estimate in per_uarch[0].est_ns: what `lowbit regret` times.
struct PlanOption {
  ExecPlan plan;
  std::string name;
};
std::vector<PlanOption> plan_options(const Registry& reg, const CpuProfile& prof,
                                     const PackedHeader& h, int m, int threads,
                                     const Tuning* tuning = nullptr);

// What a plan (uarch 0) pays in cost-model units, per segment: kernel calls, block terms and
// LHS bytes re-read, summed over every task. The estimate is linear in the kernel coefficients
// given these (plus memory and scheduling), which is what fitting them to measured plans needs.
struct PlanTerms {
  const KernelDesc* kernel;
  double calls;
  CostTerms terms;
  double lhs_bytes;
  std::vector<double> narrow;  // narrow_term() for each of the `wide_cols` asked
};
std::vector<PlanTerms> plan_terms(const ExecPlan& plan, const PackedGeometry& g,
                                  const std::vector<int>& wide_cols = {});

// Whether two plans run the same kernels over the same rows with the same tiling (uarch 0).
bool same_plan(const ExecPlan& a, const ExecPlan& b);
// The same, whatever the tiling.
bool same_kernels(const ExecPlan& a, const ExecPlan& b);

// Lock-free on hits, allocation-free on hits; plans live as long as the cache.
class PlanCache {
 public:
  static constexpr int kSlots = 64;
  PlanCache();
  ~PlanCache();
  const ExecPlan* find(uint64_t key) const;
  // Stores a copy; returns the cached plan, or nullptr when the cache is full.
  const ExecPlan* insert(const ExecPlan& plan);

 private:
  std::atomic<const ExecPlan*> slots_[kSlots];
  std::mutex insert_mutex_;
};

// The PlanCache key of (m, threads) under the active tuning: a plan cached before
// set_active_tuning is not found after it (its slot stays until the weights are destroyed).
// `streamed`: planned with a working set larger than L3 (make_plan).
inline uint64_t plan_key(int m, int threads, bool streamed = false) {
  return (uint64_t(tuning_generation() & 0xFFF) << 52) | (uint64_t(streamed) << 51) |
         (uint64_t(uint32_t(m)) << 20) | uint32_t(threads);
}

}  // namespace lowbit
