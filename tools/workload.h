// Random weights and activations for the commands that time things.
#pragma once

#include <cstdint>
#include <vector>

#include "format/problem.h"

namespace lowbit::cli {

// Fast deterministic pseudo-random floats in [-a, a).
inline std::vector<float> random_floats(size_t count, uint64_t seed, float a) {
  std::vector<float> v(count);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = (float(s >> 40) / float(1 << 24) * 2.0f - 1.0f) * a;
  }
  return v;
}

struct Workload {
  WeightProblem problem;
  std::vector<int8_t> q;
  std::vector<float> scales, x;
};

// Weights over the whole bit range with bf16-exact scales, and `rows` activation rows.
inline Workload make_workload(const WeightProblem& p, int rows, uint64_t seed) {
  Workload w;
  w.problem = p;
  const std::vector<float> r = random_floats(size_t(p.n) * p.k, seed, 1.0f);
  const int half = 1 << (p.bits - 1);
  w.q.resize(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    int v = int((r[i] + 1.0f) * half) - half;
    w.q[i] = int8_t(v < -half ? -half : v > half - 1 ? half - 1 : v);
  }
  w.scales.assign(size_t(p.n) * p.groups(), 0.0078125f);
  w.x = random_floats(size_t(rows) * p.k, seed + 1, 1.0f);
  return w;
}

}  // namespace lowbit::cli
