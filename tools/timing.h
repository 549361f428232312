// Timing for the CLI's measurements: contenders run in one process and are compared by their
// medians, interleaved (A B A B ...) when each uses one thread, because these machines are
// shared and noisy.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
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

// A pause after a multi-threaded contender: OpenBLAS, oneDNN's OpenMP and thread pools keep
// their workers spinning for a while after a call, and on a machine with few cores a spinning
// pool steals the cores of whoever runs next.
inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }

// Median nanoseconds per call of each contender, timed one contender after another (a warm-up
// call, then all reps), after a pause (settle). Interleaving would time the contention.
inline std::vector<double> settled_medians(const std::vector<std::function<void()>>& fns, int reps) {
  std::vector<double> out;
  for (const auto& f : fns) {
    settle();
    out.push_back(interleaved_medians({f}, reps)[0]);  // one contender: warm-up, then reps
  }
  return out;
}

// Contenders that may use several threads each (lowbit vs the baselines): one thread each can
// share the noise by interleaving; several cannot (see settled_medians).
inline std::vector<double> contender_medians(const std::vector<std::function<void()>>& fns, int reps,
                                             int threads) {
  return threads > 1 ? settled_medians(fns, reps) : interleaved_medians(fns, reps);
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
