// Timing for the CLI's measurements: contenders run interleaved (A B A B ...) in one process
// and are compared by their medians, because these machines are shared and noisy.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace lowbit::cli {

inline double now_ns() {
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch()).count());
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median nanoseconds per call of each contender; one warm-up call each first.
inline std::vector<double> interleaved_medians(const std::vector<std::function<void()>>& fns, int reps) {
  std::vector<std::vector<double>> t(fns.size());
  for (const auto& f : fns) f();
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < fns.size(); ++i) {
      const double t0 = now_ns();
      fns[i]();
      t[i].push_back(now_ns() - t0);
    }
  std::vector<double> out;
  for (auto& v : t) out.push_back(median(v));
  return out;
}

// Runs `fn` until at least `min_ns` passed (at least once) and returns the mean per call:
// for calls too short to time one by one.
inline double mean_ns_per_call(const std::function<void()>& fn, double min_ns) {
  int calls = 0;
  const double t0 = now_ns();
  double t = t0;
  while (calls == 0 || t - t0 < min_ns) {
    fn();
    ++calls;
    t = now_ns();
  }
  return (t - t0) / calls;
}

}  // namespace lowbit::cli
