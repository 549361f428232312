// Fitting the cost model to measurements (`lowbit tune`): small pure functions, tested on
// synthetic data with known answers (tests/test_fit.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "select/cost_model.h"
#include "select/kernel_cost.h"

namespace lowbit {

// x minimising Σ_i w_i² (a_i·x - y_i)² with x_j >= 0 wherever nonneg[j] (Lawson-Hanson active
// set). Columns are scaled to unit norm first, and a tiny ridge keeps collinear columns (a
// GEMV's per-value and per-row terms: it only ever computes one row) determined.
std::vector<double> least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& y,
                                  const std::vector<double>& w, const std::vector<bool>& nonneg);

// One timed kernel call: what the block cost in model terms, and how long it took.
struct KernelSample {
  int bits;          // weight bit width
  CostTerms terms;   // block_terms() of the block it computed
  int cols;          // columns of the call
  double per_narrow_col;  // narrow_term() per column past the last whole group (k × rows)
  double fixed;      // cycles the model charges for something else (the LHS re-read of a call)
  double cycles;     // measured (nominal 3 GHz cycles)
  int rows = 0, group = 0;  // what was timed, for reports only
};

struct KernelFit {
  KernelCost cost{};         // bit widths not measured take the nearest measured one's terms
  double worst_error = 0.0;  // max over samples of |predicted - measured| / measured
  int worst_sample = -1;     // its index
  double rms_error = 0.0;
  int samples = 0;
};

// A shared machine's slow phases (neighbours, a lower clock) only ever add time, to whichever
// samples were timed during them. The robust fit is an iteratively reweighted one: a sample
// whose relative error (measured - predicted) / measured is above `scale` counts with trust
// (scale / error)² in the squared error, so a few inflated samples pull the fit little; samples
// below the model keep full trust. The scale is kSlowResidual in the first round, then
// kSlowSpread times the RMS error of the samples below the model (the noise, which a slow phase
// does not reach) if that is larger, so that symmetric noise is left alone.
constexpr double kSlowResidual = 0.05;
constexpr double kSlowSpread = 3.0;
constexpr int kReweightings = 4;
double slow_sample_trust(double error, double scale);

enum class FitMode { least_squares, robust };

// Fit of a kernel's cost (call, group, group_row, narrow shared by every bit width; unpack and
// dot per bit width), all coefficients >= 0, minimising relative error (robust: as above). The
// group of columns the kernel works through (wide_cols) is the one of 2, 4, 8 or 16 panels of
// `nr` columns (or none) that explains the samples best.
KernelFit fit_kernel(const std::vector<KernelSample>& samples, int nr, FitMode mode = FitMode::robust);

// c with every coefficient at most what a tuning record may hold (kernel_cost.h): timings under
// emulation (qemu) or on a machine stalled mid-run can ask a fit for more, and `lowbit tune`
// must write a record it can read back.
KernelCost bounded_for_record(KernelCost c);

// What the cost model predicts for a sample.
double predict_cycles(const KernelCost& c, const KernelSample& s);

// The samples measured more than `above` (relative: 0.1 is 10 %) over what `cost` predicts,
// furthest first, at most `max` of them: the ones a slow phase may have inflated, worth timing
// again.
std::vector<size_t> slow_samples(const std::vector<KernelSample>& samples, const KernelCost& cost, double above,
                                 size_t max);

// Cache sizes from a read-bandwidth sweep (sizes ascending, bandwidth at each). Bandwidth, made
// non-increasing, falls most over a doubling of the working set where the last cache before
// DRAM ends; the first fall of at least 10 % below half of that size is the L2. A cache ends at
// the last size still above the geometric middle of the bandwidth on either side. With one
// step only, it is the L3 if `expect_l3` (the L2 step was lost in noise), else the L2. 0: not
// found.
struct CacheLevels {
  size_t l2 = 0, l3 = 0;
};
CacheLevels cache_levels(const std::vector<double>& sizes, const std::vector<double>& bandwidth, bool expect_l3);

// A software-prefetch distance and the median time of one DRAM-bound call at it.
struct PrefetchTiming {
  uint32_t bytes;
  double ns;
};
// The distance to record: the fastest one, unless the registry's (`current`, when timed) is
// within `margin` (relative: 0.02 is 2 %) of it, so that noise between near-equal distances
// does not move it.
uint32_t choose_prefetch(const std::vector<PrefetchTiming>& timings, uint32_t current, double margin);

}  // namespace lowbit
