#include "select/fit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace lowbit {

namespace {

// Solves the normal equations of the columns in `cols` (others are 0); scaled inputs.
std::vector<double> solve_subset(const std::vector<std::vector<double>>& a, const std::vector<double>& y,
                                 const std::vector<size_t>& cols, size_t n) {
  const size_t p = cols.size();
  std::vector<std::vector<double>> g(p, std::vector<double>(p + 1, 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t r = 0; r < p; ++r) {
      const double ar = a[i][cols[r]];
      for (size_t c = 0; c < p; ++c) g[r][c] += ar * a[i][cols[c]];
      g[r][p] += ar * y[i];
    }
  for (size_t r = 0; r < p; ++r) g[r][r] += 1e-9;  // unit-norm columns: a tiny ridge
  // Gaussian elimination with partial pivoting.
  for (size_t c = 0; c < p; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < p; ++r)
      if (std::fabs(g[r][c]) > std::fabs(g[piv][c])) piv = r;
    std::swap(g[c], g[piv]);
    for (size_t r = 0; r < p; ++r) {
      if (r == c || g[c][c] == 0.0) continue;
      const double f = g[r][c] / g[c][c];
      for (size_t k = c; k <= p; ++k) g[r][k] -= f * g[c][k];
    }
  }
  std::vector<double> x(n, 0.0);
  for (size_t r = 0; r < p; ++r) x[cols[r]] = g[r][r] != 0.0 ? g[r][p] / g[r][r] : 0.0;
  return x;
}

}  // namespace

std::vector<double> least_squares(const std::vector<std::vector<double>>& a_in, const std::vector<double>& y_in,
                                  const std::vector<double>& w, const std::vector<bool>& nonneg) {
  const size_t n = nonneg.size();
  // Weighted rows, unit-norm columns.
  std::vector<std::vector<double>> a = a_in;
  std::vector<double> y = y_in;
  for (size_t i = 0; i < a.size(); ++i) {
    for (double& v : a[i]) v *= w[i];
    y[i] *= w[i];
  }
  std::vector<double> scale(n, 1.0);
  for (size_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (const auto& row : a) s += row[j] * row[j];
    scale[j] = s > 0.0 ? std::sqrt(s) : 1.0;
    for (auto& row : a) row[j] /= scale[j];
  }
  // Lawson-Hanson: grow the set of free columns by the most promising one; when a constrained
  // coefficient would go negative, step back to the boundary and drop it.
  std::vector<bool> in_set(n, false);
  for (size_t j = 0; j < n; ++j) in_set[j] = !nonneg[j];
  auto members = [&] {
    std::vector<size_t> c;
    for (size_t j = 0; j < n; ++j)
      if (in_set[j]) c.push_back(j);
    return c;
  };
  std::vector<double> x = members().empty() ? std::vector<double>(n, 0.0) : solve_subset(a, y, members(), n);
  for (int outer = 0; outer < int(3 * n) + 10; ++outer) {
    std::vector<double> grad(n, 0.0);
    for (size_t i = 0; i < a.size(); ++i) {
      double r = y[i];
      for (size_t j = 0; j < n; ++j) r -= a[i][j] * x[j];
      for (size_t j = 0; j < n; ++j) grad[j] += a[i][j] * r;
    }
    size_t best = n;
    for (size_t j = 0; j < n; ++j)
      if (!in_set[j] && grad[j] > 1e-12 && (best == n || grad[j] > grad[best])) best = j;
    if (best == n) break;
    in_set[best] = true;
    for (int inner = 0; inner < int(3 * n) + 10; ++inner) {
      const std::vector<double> z = solve_subset(a, y, members(), n);
      double alpha = 1.0;
      for (size_t j = 0; j < n; ++j)
        if (in_set[j] && nonneg[j] && z[j] <= 0.0) alpha = std::min(alpha, x[j] / (x[j] - z[j]));
      for (size_t j = 0; j < n; ++j) x[j] += alpha * (z[j] - x[j]);
      if (alpha >= 1.0) break;
      for (size_t j = 0; j < n; ++j)
        if (in_set[j] && nonneg[j] && x[j] <= 1e-15) {
          in_set[j] = false;
          x[j] = 0.0;
        }
    }
  }
  for (size_t j = 0; j < n; ++j) x[j] /= scale[j];
  return x;
}

double predict_cycles(const KernelCost& c, const KernelSample& s) {
  const int b = std::clamp(s.bits, 1, kMaxBits);
  const double narrow = c.wide_cols > 0 ? s.per_narrow_col * double(s.cols % c.wide_cols) * c.narrow : 0.0;
  return s.fixed + c.call + s.terms.unpack * c.unpack[b] + s.terms.dot * c.dot[b] +
         s.terms.group * c.group + s.terms.group_row * c.group_row + narrow;
}

std::vector<size_t> slow_samples(const std::vector<KernelSample>& samples, const KernelCost& cost, double above,
                                 size_t max) {
  std::vector<std::pair<double, size_t>> slow;  // (measured / predicted, index)
  for (size_t i = 0; i < samples.size(); ++i) {
    const double ratio = samples[i].cycles / std::max(predict_cycles(cost, samples[i]), 1e-9);
    if (ratio > 1.0 + above) slow.push_back({ratio, i});
  }
  std::sort(slow.begin(), slow.end(), std::greater<>());
  std::vector<size_t> out;
  for (size_t i = 0; i < std::min(max, slow.size()); ++i) out.push_back(slow[i].second);
  return out;
}

KernelCost bounded_for_record(KernelCost c) {
  auto bound = [](float& v, double hi) { v = std::min(v, float(hi)); };
  for (int b = 0; b <= kMaxBits; ++b) {
    bound(c.unpack[b], kMaxCyclesPerValue);
    bound(c.dot[b], kMaxCyclesPerValue);
  }
  bound(c.narrow, kMaxCyclesPerValue);
  bound(c.call, kMaxCallCycles);
  bound(c.group, kMaxGroupCycles);
  bound(c.group_row, kMaxGroupCycles);
  return c;
}

namespace {

struct Candidate {
  KernelFit fit;
  double objective;  // trust-weighted mean squared relative error
};

// The fit for one choice of wide_cols (0: no narrow term), each sample's squared relative error
// weighed by its trust (1: fully).
Candidate fit_with(const std::vector<KernelSample>& samples, int wide_cols, const std::vector<double>& trust) {
  KernelFit f;
  f.samples = int(samples.size());
  // Columns: call, group, group_row, narrow, then (unpack, dot) per measured bit width.
  std::vector<int> col_of_bits(kMaxBits + 1, -1);
  size_t n = 4;
  for (const KernelSample& s : samples) {
    const int b = std::clamp(s.bits, 1, kMaxBits);
    if (col_of_bits[size_t(b)] < 0) {
      col_of_bits[size_t(b)] = int(n);
      n += 2;
    }
  }
  std::vector<std::vector<double>> a;
  std::vector<double> y, w;
  for (size_t i = 0; i < samples.size(); ++i) {
    const KernelSample& s = samples[i];
    std::vector<double> row(n, 0.0);
    row[0] = 1.0;
    row[1] = s.terms.group;
    row[2] = s.terms.group_row;
    row[3] = wide_cols > 0 ? s.per_narrow_col * double(s.cols % wide_cols) : 0.0;
    const size_t c = size_t(col_of_bits[size_t(std::clamp(s.bits, 1, kMaxBits))]);
    row[c] = s.terms.unpack;
    row[c + 1] = s.terms.dot;
    a.push_back(std::move(row));
    y.push_back(s.cycles - s.fixed);
    w.push_back(std::sqrt(trust[i]) / std::max(s.cycles, 1e-9));  // relative error
  }
  const std::vector<double> x = least_squares(a, y, w, std::vector<bool>(n, true));
  f.cost.call = float(x[0]);
  f.cost.group = float(x[1]);
  f.cost.group_row = float(x[2]);
  f.cost.narrow = float(x[3]);
  f.cost.wide_cols = x[3] > 0.0 ? wide_cols : 0;
  for (int b = 1; b <= kMaxBits; ++b) {
    // The nearest measured width (ties: the wider one) stands in for one not measured.
    int src = -1;
    for (int d = 0; d <= kMaxBits && src < 0; ++d)
      for (int cand : {b + d, b - d})
        if (src < 0 && cand >= 1 && cand <= kMaxBits && col_of_bits[size_t(cand)] >= 0) src = cand;
    const size_t c = size_t(col_of_bits[size_t(src)]);
    f.cost.unpack[b] = float(x[c]);
    f.cost.dot[b] = float(x[c + 1]);
  }
  f.cost.unpack[0] = f.cost.unpack[1];
  f.cost.dot[0] = f.cost.dot[1];
  f.cost = bounded_for_record(f.cost);  // the errors below are the bounded cost's
  double sq = 0.0, weighted = 0.0, trust_sum = 0.0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const KernelSample& s = samples[i];
    const double e = std::fabs(predict_cycles(f.cost, s) - s.cycles) / std::max(s.cycles, 1e-9);
    if (e >= f.worst_error) {
      f.worst_error = e;
      f.worst_sample = int(i);
    }
    sq += e * e;
    weighted += trust[i] * e * e;
    trust_sum += trust[i];
  }
  f.rms_error = std::sqrt(sq / double(samples.size()));
  return {f, weighted / std::max(trust_sum, 1e-300)};
}

// The best choice of wide_cols under the given trust.
KernelFit best_fit(const std::vector<KernelSample>& samples, int nr, const std::vector<double>& trust) {
  Candidate best = fit_with(samples, 0, trust);
  for (int panels : {2, 4, 8, 16}) {
    const Candidate c = fit_with(samples, panels * nr, trust);
    if (c.objective < best.objective) best = c;
  }
  return best.fit;
}

}  // namespace

double slow_sample_trust(double error, double scale) {
  return error > scale ? (scale / error) * (scale / error) : 1.0;
}

KernelFit fit_kernel(const std::vector<KernelSample>& samples, int nr, FitMode mode) {
  if (samples.empty()) return {};
  std::vector<double> trust(samples.size(), 1.0);
  KernelFit f = best_fit(samples, nr, trust);
  if (mode == FitMode::robust)
    for (int round = 0; round < kReweightings; ++round) {
      // The noise's scale, from the samples measured faster than the model: a slow phase never
      // makes a sample faster, so they are the honest ones. Not in the first round: the plain
      // fit is pulled up by the slow samples, which makes the others look far faster.
      std::vector<double> error(samples.size());
      double fast_sq = 0.0;
      int fast = 0;
      for (size_t i = 0; i < samples.size(); ++i) {
        error[i] = (samples[i].cycles - predict_cycles(f.cost, samples[i])) / std::max(samples[i].cycles, 1e-9);
        if (error[i] < 0.0) {
          fast_sq += error[i] * error[i];
          ++fast;
        }
      }
      const double spread = round == 0 ? 0.0 : kSlowSpread * std::sqrt(fast_sq / std::max(fast, 1));
      const double scale = std::max(kSlowResidual, spread);
      for (size_t i = 0; i < samples.size(); ++i) trust[i] = slow_sample_trust(error[i], scale);
      f = best_fit(samples, nr, trust);
    }
  return f;
}

CacheLevels cache_levels(const std::vector<double>& sizes, const std::vector<double>& bandwidth, bool expect_l3) {
  CacheLevels out;
  const size_t n = std::min(sizes.size(), bandwidth.size());
  if (n < 3) return out;
  // Bandwidth can only fall as the working set grows: a size that measured slower than a larger
  // one (a timer tick, a neighbour) is lifted to it.
  std::vector<double> bw(n);
  double envelope = 0.0;
  for (size_t i = n; i-- > 0;) bw[i] = envelope = std::max(envelope, bandwidth[i]);
  // A fall of at least `min_drop` over a doubling of the working set that ends at or before
  // `to`: the steepest, or the first; the cache ends at the last size still above the geometric
  // middle of the two sides. 0 when there is none.
  auto step = [&](double to, double min_drop, bool first) -> size_t {
    double steepest = 1.0 - min_drop;
    size_t at = n;
    for (size_t i = 0; i < n; ++i) {
      size_t j = i;
      while (j < n && sizes[j] < 2 * sizes[i] * 0.999) ++j;
      if (j >= n || sizes[j] > to) continue;
      if (bw[j] / bw[i] <= steepest) {
        steepest = bw[j] / bw[i];
        at = i;
        if (first) break;
      }
    }
    if (at == n) return 0;
    size_t j = at;
    while (j < n && sizes[j] < 2 * sizes[at] * 0.999) ++j;
    const double middle = std::sqrt(bw[at] * bw[j]);
    size_t last = at;
    while (last + 1 < n && bw[last + 1] >= middle) ++last;
    return size_t(sizes[last]);
  };
  // The last level before DRAM falls the most; the L2 is the first fall of 10 % below half of
  // it. A single step is the L3 when the machine should have one (the L2 step was lost in
  // noise), else the L2.
  const size_t outer = step(1e300, 0.1, false);
  if (outer == 0) return out;
  const size_t inner = step(double(outer) / 2, 0.1, true);
  if (inner != 0) {
    out.l2 = inner;
    out.l3 = outer;
  } else if (expect_l3) {
    out.l3 = outer;
  } else {
    out.l2 = outer;
  }
  return out;
}

uint32_t choose_prefetch(const std::vector<PrefetchTiming>& timings, uint32_t current, double margin) {
  uint32_t best = current;
  double best_ns = std::numeric_limits<double>::infinity(), current_ns = best_ns;
  for (const PrefetchTiming& t : timings) {
    if (t.ns < best_ns) best = t.bytes, best_ns = t.ns;
    if (t.bytes == current) current_ns = t.ns;
  }
  return current_ns <= best_ns * (1.0 + margin) ? current : best;
}

}  // namespace lowbit
