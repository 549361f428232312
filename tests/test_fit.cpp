// The fitting behind `lowbit tune`: pure functions, checked on synthetic measurements made from
// known coefficients (with and without noise).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "format/layouts.h"
#include "registry/registry.h"
#include "select/fit.h"
#include "select/tuning_record.h"

namespace lowbit {
namespace {

TEST(LeastSquares, RecoversAnExactSolutionAndKeepsCoefficientsNonNegative) {
  // y = 2 a + 3 b, exactly.
  std::vector<std::vector<double>> a = {{1, 0}, {0, 1}, {1, 1}, {2, 1}};
  std::vector<double> y = {2, 3, 5, 7}, w(4, 1.0);
  const std::vector<double> x = least_squares(a, y, w, {true, true});
  EXPECT_NEAR(x[0], 2.0, 1e-6);
  EXPECT_NEAR(x[1], 3.0, 1e-6);
  // The unconstrained optimum has b < 0: b is held at 0 and a takes the rest.
  a = {{1, 1}, {2, 1}, {3, 1}};
  y = {1, 2, 3};
  y[0] -= 0.5, y[1] -= 0.5, y[2] -= 0.5;  // y = x - 0.5: intercept -0.5
  const std::vector<double> z = least_squares(a, y, {1, 1, 1}, {true, true});
  EXPECT_EQ(z[1], 0.0);
  EXPECT_GT(z[0], 0.0);
}

void stand_in(const GemmShape&, const UKernelArgs&) {}

// A 4-row kernel with 1-, 2- and 4-row code (and 3-row code at 4 bits), and what it "really"
// costs.
const KernelDesc kGemm{"gemm_4x8", 2, IsaSet{}, 4, {4, 4}, kAllBits, true, true, row_counts({1, 2, 4}),
                       bits_mask({4}), stand_in};

KernelCost true_cost() {
  KernelCost c = uniform_cost(0.0, 0.0, 320.0f, 2.5f, 0.45f);
  c.narrow = 0.03f;  // calls of fewer than 32 columns run a slower loop for the rest
  c.wide_cols = 32;
  for (int b = 1; b <= kMaxBits; ++b) {
    c.unpack[b] = 0.02f + 0.006f * float(std::abs(b - 4));  // other widths unpack slower
    c.dot[b] = 0.04f + (b == 8 ? 0.01f : 0.0f);
  }
  return c;
}

std::vector<KernelSample> samples(const KernelCost& c, double noise, std::vector<int> bits = {1, 2, 3, 4, 5, 6, 7, 8}) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<KernelSample> out;
  for (int b : bits)
    for (size_t group : {32, 128})
      for (size_t rows : {1, 2, 3, 4})
        for (size_t cols : {8, 16, 64, 256}) {
          KernelSample s;
          s.bits = b;
          s.terms = block_terms(kGemm, {rows, cols, 1024, group, b});
          s.cols = int(cols);
          s.per_narrow_col = 1024.0 * effective_rows(kGemm, rows, b);
          s.fixed = 256.0;
          s.cycles = predict_cycles(c, s) * (1.0 + u(rng));
          out.push_back(s);
        }
  return out;
}

TEST(FitKernel, RecoversKnownCoefficientsExactly) {
  const KernelCost want = true_cost();
  const KernelFit f = fit_kernel(samples(want, 0.0), 8);
  EXPECT_EQ(f.samples, 8 * 2 * 4 * 4);
  EXPECT_LT(f.worst_error, 1e-6);
  EXPECT_EQ(f.cost.wide_cols, 32);
  EXPECT_NEAR(f.cost.narrow, want.narrow, 1e-3 * want.narrow);
  EXPECT_NEAR(f.cost.call, want.call, 1e-3 * want.call);
  EXPECT_NEAR(f.cost.group, want.group, 1e-3 * want.group);
  EXPECT_NEAR(f.cost.group_row, want.group_row, 1e-3 * want.group_row);
  for (int b = 1; b <= kMaxBits; ++b) {
    EXPECT_NEAR(f.cost.unpack[b], want.unpack[b], 1e-3 * want.unpack[b]) << b;
    EXPECT_NEAR(f.cost.dot[b], want.dot[b], 1e-3 * want.dot[b]) << b;
  }
}

TEST(FitKernel, ReportsHowFarOffItIsWithNoise) {
  const KernelCost want = true_cost();
  const std::vector<KernelSample> noisy = samples(want, 0.05);
  const KernelFit f = fit_kernel(noisy, 8);
  // The worst error is about the noise: it says the fit cannot explain ±5 %.
  EXPECT_GT(f.worst_error, 0.02);
  EXPECT_LT(f.worst_error, 0.12);
  EXPECT_GT(f.rms_error, 0.005);
  EXPECT_LT(f.rms_error, f.worst_error);
  // It says which sample that is (what `lowbit tune` prints).
  ASSERT_GE(f.worst_sample, 0);
  const KernelSample& w = noisy[size_t(f.worst_sample)];
  EXPECT_NEAR(std::fabs(predict_cycles(f.cost, w) - w.cycles) / w.cycles, f.worst_error, 1e-12);
  // ...and it still predicts the noise-free times closely.
  for (const KernelSample& s : samples(want, 0.0))
    EXPECT_NEAR(predict_cycles(f.cost, s), s.cycles, 0.04 * s.cycles) << "bits " << s.bits;
}

// Timings no CPU gives (qemu emulating every instruction, a machine stalled mid-run) may ask
// for coefficients above what a record may hold; the fit stays inside, so `lowbit tune` writes
// a record its reader takes back.
TEST(FitKernel, StaysInsideWhatARecordMayHold) {
  KernelCost absurd = true_cost();
  absurd.narrow = 40.0f * float(kMaxCyclesPerValue);
  absurd.call = 8.0f * float(kMaxCallCycles);
  for (int b = 1; b <= kMaxBits; ++b) absurd.dot[b] = 3.0f * float(kMaxCyclesPerValue);
  const KernelFit f = fit_kernel(samples(absurd, 0.0), 8);
  EXPECT_EQ(f.cost.narrow, float(kMaxCyclesPerValue));
  EXPECT_EQ(f.cost.call, float(kMaxCallCycles));
  for (int b = 1; b <= kMaxBits; ++b) EXPECT_LE(f.cost.dot[b], float(kMaxCyclesPerValue)) << b;
  EXPECT_GT(f.worst_error, 0.1);  // the bounded cost's errors, not the unbounded one's
  TuningRecord r = record_for_this_machine("bounds");
  KernelEntry e;
  e.name = kGemm.name;
  e.identity = "0123456789abcdef";
  e.cost = f.cost;
  e.fit_error = std::min(f.worst_error, kMaxFitError);
  r.kernels.push_back(e);
  const std::string text = record_to_json(r);
  EXPECT_EQ(record_to_json(parse_record(text)), text);
}

TEST(FitKernel, BitWidthsNotMeasuredTakeTheNearestMeasured) {
  const KernelFit f = fit_kernel(samples(true_cost(), 0.0, {2, 4, 8}), 8);
  EXPECT_EQ(f.cost.dot[1], f.cost.dot[2]);
  EXPECT_EQ(f.cost.unpack[3], f.cost.unpack[4]);  // tie: the wider
  EXPECT_EQ(f.cost.unpack[6], f.cost.unpack[8]);
  EXPECT_NE(f.cost.unpack[2], f.cost.unpack[4]);
}

// The largest relative error of `got`'s predictions over the noise-free samples of `want`.
double prediction_error(const KernelCost& got, const KernelCost& want) {
  double worst = 0.0;
  for (const KernelSample& s : samples(want, 0.0))
    worst = std::max(worst, std::fabs(predict_cycles(got, s) - s.cycles) / s.cycles);
  return worst;
}

// `v` with about `share` of its samples timed 1.3-1.6x slower (a slow phase of the machine);
// which ones in `slowed`.
std::vector<KernelSample> slow_phase(std::vector<KernelSample> v, double share, std::vector<size_t>* slowed) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0), by(1.3, 1.6);
  for (size_t i = 0; i < v.size(); ++i)
    if (u(rng) < share) {
      v[i].cycles *= by(rng);
      slowed->push_back(i);
    }
  return v;
}

TEST(FitKernel, TheRobustFitIsNotPulledBySamplesASlowPhaseInflated) {
  const KernelCost want = true_cost();
  for (double share : {0.1, 0.3}) {
    std::vector<size_t> slowed;
    const std::vector<KernelSample> v = slow_phase(samples(want, 0.02), share, &slowed);
    ASSERT_GT(slowed.size(), size_t(share * 0.7 * double(v.size())));
    const KernelFit plain = fit_kernel(v, 8, FitMode::least_squares);
    const KernelFit robust = fit_kernel(v, 8, FitMode::robust);
    const double e_plain = prediction_error(plain.cost, want), e_robust = prediction_error(robust.cost, want);
    // The plain fit is off by the inflation spread over everything; the robust one is about as
    // close as with the ±2 % noise alone (1.2 %).
    EXPECT_GT(e_plain, 0.08) << share;
    EXPECT_LT(e_robust, share < 0.2 ? 0.02 : 0.04) << share;
    EXPECT_LT(e_robust, e_plain / 4) << share;
    EXPECT_EQ(robust.cost.wide_cols, want.wide_cols) << share;
    if (share < 0.2) {
      // Its coefficients too (the plain fit's call, group, group_row and unpack[4] are 14-30 %
      // off here).
      EXPECT_NEAR(robust.cost.call, want.call, 0.05 * want.call);
      EXPECT_NEAR(robust.cost.group, want.group, 0.05 * want.group);
      EXPECT_NEAR(robust.cost.group_row, want.group_row, 0.05 * want.group_row);
      EXPECT_NEAR(robust.cost.unpack[4], want.unpack[4], 0.05 * want.unpack[4]);
      EXPECT_NEAR(robust.cost.dot[4], want.dot[4], 0.05 * want.dot[4]);
    }
  }
}

TEST(FitKernel, TheRobustFitLeavesUnbiasedNoiseAlone) {
  // Symmetric noise, uniform and normal, as wide as the fit errors `lowbit tune` reports: the
  // samples above the model are noise like those below it, and are not discounted.
  const KernelCost want = true_cost();
  std::vector<std::vector<KernelSample>> noisy = {samples(want, 0.02), samples(want, 0.05)};
  for (double sigma : {0.03, 0.05}) {
    std::vector<KernelSample> v = samples(want, 0.0);
    std::mt19937 rng(5);
    std::normal_distribution<double> g(0.0, sigma);
    for (KernelSample& s : v) s.cycles *= 1.0 + g(rng);
    noisy.push_back(v);
  }
  for (size_t i = 0; i < noisy.size(); ++i) {
    const double e_plain = prediction_error(fit_kernel(noisy[i], 8, FitMode::least_squares).cost, want);
    const double e_robust = prediction_error(fit_kernel(noisy[i], 8, FitMode::robust).cost, want);
    EXPECT_LE(e_robust, e_plain * 1.01) << i;
  }
}

TEST(FitKernel, SlowSamplesAreTheOnesFarAboveTheFit) {
  std::vector<size_t> slowed;
  const std::vector<KernelSample> v = slow_phase(samples(true_cost(), 0.02), 0.1, &slowed);
  const KernelFit f = fit_kernel(v, 8);
  // Every inflated sample is over 10 % above the robust fit, and no other one is.
  std::vector<size_t> found = slow_samples(v, f.cost, 0.10, v.size());
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, slowed);
  // At most `max`, furthest first.
  const std::vector<size_t> three = slow_samples(v, f.cost, 0.10, 3);
  ASSERT_EQ(three.size(), 3u);
  auto ratio = [&](size_t i) { return v[i].cycles / predict_cycles(f.cost, v[i]); };
  EXPECT_GE(ratio(three[0]), ratio(three[1]));
  EXPECT_GE(ratio(three[1]), ratio(three[2]));
  for (size_t i : slowed)
    if (std::find(three.begin(), three.end(), i) == three.end()) {
      EXPECT_LE(ratio(i), ratio(three[2]));
    }
  EXPECT_TRUE(slow_samples(samples(true_cost(), 0.0), true_cost(), 0.10, v.size()).empty());
}

TEST(FitKernel, SlowSampleTrust) {
  EXPECT_EQ(slow_sample_trust(-0.5, 0.05), 1.0);  // faster than the model: fully trusted
  EXPECT_EQ(slow_sample_trust(0.05, 0.05), 1.0);
  EXPECT_DOUBLE_EQ(slow_sample_trust(0.10, 0.05), 0.25);
  EXPECT_DOUBLE_EQ(slow_sample_trust(0.25, 0.05), 0.04);
}

std::vector<double> sweep_sizes() {
  std::vector<double> s;
  for (double x = 64 * 1024; x <= 256.0 * 1024 * 1024; x *= 2) s.push_back(x);
  return s;
}

TEST(CacheLevels, FindsWhereBandwidthStepsDown) {
  // 512 KiB L2 at 40 bytes/cycle, 32 MiB L3 at 22, DRAM at 8; a working set of twice a cache
  // mostly misses it (25, 12); ±4 % noise.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.04, 0.04);
  std::vector<double> bw;
  for (double s : sweep_sizes()) {
    double b = s <= 512 * 1024 ? 40 : s <= 1024 * 1024 ? 25 : s <= 32.0 * 1024 * 1024 ? 22 : s <= 64.0 * 1024 * 1024 ? 12 : 8;
    bw.push_back(b * (1 + u(rng)));
  }
  const CacheLevels c = cache_levels(sweep_sizes(), bw, true);
  EXPECT_EQ(c.l2, 512u * 1024);
  EXPECT_EQ(c.l3, 32u * 1024 * 1024);
  // The smallest sizes measured slow (seen on a busy machine): still the same caches.
  bw[0] = bw[1] = 14;
  const CacheLevels d = cache_levels(sweep_sizes(), bw, true);
  EXPECT_EQ(d.l2, 512u * 1024);
  EXPECT_EQ(d.l3, 32u * 1024 * 1024);
}

TEST(CacheLevels, ASweepMeasuredOnABusyVm) {
  // `lowbit tune --quick` on the 2-core Zen 3 VM (512 KiB L2; the 32 MiB L3 is shared with the
  // host's other guests) while other builds ran: KiB, bytes per cycle. Not monotone, and DRAM
  // has two levels of its own (TLB reach).
  const double kib[] = {64, 90, 128, 181, 256, 362, 512, 724, 1024, 1448, 2047, 2896, 4095, 5792, 8192,
                        11585, 16383, 23170, 32767, 46340, 65536, 92681, 131072};
  const double bw[] = {16.2, 23.5, 28.1, 28.2, 28.2, 25.0, 23.0, 18.0, 16.7, 18.5, 20.5, 22.2, 21.8, 18.7,
                       18.4, 14.3, 4.5, 4.9, 4.2, 3.8, 2.4, 2.1, 2.4};
  std::vector<double> sizes, b(std::begin(bw), std::end(bw));
  for (double k : kib) sizes.push_back(k * 1024);
  const CacheLevels c = cache_levels(sizes, b, true);
  EXPECT_GE(c.l2, 256u * 1024);
  EXPECT_LE(c.l2, 512u * 1024);
  EXPECT_GE(c.l3, 8u << 20);
  EXPECT_LE(c.l3, 16u << 20);
}

TEST(CacheLevels, OneStepIsTheL2OrTheL3) {
  std::vector<double> bw;
  for (double s : sweep_sizes()) bw.push_back(s <= 1024 * 1024 ? 30 : 6);
  const CacheLevels c = cache_levels(sweep_sizes(), bw, false);
  EXPECT_EQ(c.l2, 1024u * 1024);
  EXPECT_EQ(c.l3, 0u);
  // On a machine that has an L3, one step is its end: the L2's was not seen.
  const CacheLevels d = cache_levels(sweep_sizes(), bw, true);
  EXPECT_EQ(d.l2, 0u);
  EXPECT_EQ(d.l3, 1024u * 1024);
}

}  // namespace
// The prefetch distance `lowbit tune` records: the fastest, unless the registry's is within
// the margin of it.
TEST(ChoosePrefetch, TheFastestUnlessTheCurrentOneIsAsFast) {
  const std::vector<PrefetchTiming> t = {{0, 1300.0}, {1024, 1100.0}, {2048, 1050.0}, {4096, 1000.0}};
  EXPECT_EQ(choose_prefetch(t, 2048, 0.02), 4096u);  // 5 % faster
  EXPECT_EQ(choose_prefetch(t, 2048, 0.06), 2048u);  // within the margin
  EXPECT_EQ(choose_prefetch(t, 4096, 0.02), 4096u);
  EXPECT_EQ(choose_prefetch(t, 8192, 0.02), 4096u);  // the current one not timed
  EXPECT_EQ(choose_prefetch({{0, 900.0}, {2048, 1000.0}}, 2048, 0.02), 0u);  // none at all
  EXPECT_EQ(choose_prefetch({}, 2048, 0.02), 2048u);
}

}  // namespace lowbit
