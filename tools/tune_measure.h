// What `lowbit tune` times on this machine: kernel calls on L2-resident blocks, reads of the
// memory at each cache level, the thread pool's per-call and per-task cost, and the planner's
// top candidates on model shapes. The fitting is in the library (select/fit.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cpu/profile.h"
#include "registry/registry.h"
#include "select/fit.h"
#include "select/tuning_record.h"

namespace lowbit::cli {

// How long to measure: --quick, the full run, or the test suite's smoke run.
struct TuneBudget {
  double min_call_ns;      // each timing runs a call repeatedly for at least this long
  int reps;                // medians of this many timings
  std::vector<int> bits;   // bit widths calibrated
  std::vector<int> groups;
  double sweep_max_bytes;  // largest working set of the cache sweep
  double sweep_step;       // ratio between its sizes
  bool dram;               // measure DRAM bandwidth (large buffers)
  int shape_reps;          // head-to-head reps per candidate (at least)
  double shape_case_ns;    // time budget per (shape, m, threads) case
  bool prefetch;           // time the prefetch distances (from DRAM; without `dram`, 1 MiB: the machinery only)
};
TuneBudget tune_budget(bool quick, bool smoke);

// Progress lines on stderr.
void progress(const std::string& line);

// Timed calls of each kernel alone (one thread): blocks of each row count it has code for, over
// several column counts, at each bit width and group size of the budget, every call of every
// kernel interleaved. The payload of the largest block stays under a quarter of `l2`. The calls
// stay ready, so that the ones a slow phase of the machine may have inflated can be timed again.
class KernelTimings {
 public:
  KernelTimings(const std::vector<const KernelDesc*>& kds, const TuneBudget& b, size_t l2);
  ~KernelTimings();
  // Times every call.
  void time_all();
  // Times again the calls of samples()[kernel][i] for each i in which[kernel].
  void retime(const std::vector<std::vector<size_t>>& which);
  // Per kernel, a sample per call: its fastest timing so far.
  std::vector<std::vector<KernelSample>> samples() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Read bandwidth of one thread over working sets from 64 KiB up (sizes and bytes per cycle).
struct Sweep {
  std::vector<double> sizes, bytes_per_cycle;
};
Sweep read_sweep(const TuneBudget& b);

// Bytes per cycle each of w = 1..threads workers reads at each level (L2: a quarter of L2 each,
// L3: half of L3 shared, DRAM: well over L3), either the memory itself (kd == nullptr: a read
// loop) or as `kd` reads its weights (one row, 4-bit, group 32) prefetching `prefetch_bytes`
// ahead (UKernelArgs::prefetch_bytes).
BandwidthTable level_bandwidth(const KernelDesc* kd, const CacheLevels& caches, int threads, const TuneBudget& b,
                               uint32_t prefetch_bytes = 0);

// One worker's decode from DRAM (`kd`, a kernel that prefetches its weights: one row at 4 and
// 6 bits, or 2 and 3 for a kernel of 1-3 bits, group 32, the weights well over L3; 1 MiB of them
// without b.dram) at each software-prefetch distance from none to 8 KiB, all interleaved; per
// distance the geomean of its widths' medians (choose_prefetch picks one).
std::vector<PrefetchTiming> prefetch_timings(const KernelDesc& kd, const CacheLevels& caches, const TuneBudget& b);

// Per parallel call of w = 1..threads workers (index w-1; 0 for one worker, which runs inline)
// and per task handed to a worker, cycles.
struct Threading {
  std::vector<double> dispatch_cycles;
  double task_cycles = 0.0;
};
Threading threading_cost(int threads, const TuneBudget& b);

// One (n, k, m, threads) case of --shapes: the model's plan and the planner's top candidates
// timed head to head; an override when another one wins by at least 3 %, confirmed head to head
// at once and again after the other cases.
struct ShapeCase {
  int n, k, bits, group, m, threads;
  std::string chosen, best;
  double speedup;        // t(chosen) / t(best)
  bool override_recorded;
  double speedup_again;  // the same, timed again after the other cases (0: not a winner)
};
std::vector<ShapeCase> measure_shapes(const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& ms,
                                      int threads, int bits, int group, const TuneBudget& b,
                                      std::vector<PlanOverride>* overrides);

}  // namespace lowbit::cli
