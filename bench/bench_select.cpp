// Selection overhead: a plan-cache hit (target <= 50 ns) and a fresh plan (target <= 50 us),
// and the whole per-call overhead of linear() on a tiny layer.
#include <benchmark/benchmark.h>

#include <vector>

#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/linear.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "select/select_layout.h"

namespace lowbit {
namespace {

PackedHeader llama_header() {
  const WeightProblem p{4096, 4096, 4, 32, false, false};
  PackedHeader h;
  h.layout = select_layout(default_registry(), host_profile(), p).winner;
  h.problem = p;
  return h;
}

void BM_PlanCacheHit(benchmark::State& state) {
  const PackedHeader h = llama_header();
  PlanCache cache;
  for (int m : {1, 4, 16, 64, 128}) cache.insert(make_plan(default_registry(), host_profile(), h, m, 2));
  int i = 0;
  static const int kMs[] = {1, 4, 16, 64, 128};
  for (auto _ : state) {
    benchmark::DoNotOptimize(cache.find(plan_key(kMs[i], 2)));
    i = (i + 1) % 5;
  }
}
BENCHMARK(BM_PlanCacheHit);

void BM_FirstPlan(benchmark::State& state) {
  const PackedHeader h = llama_header();
  const int m = int(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(make_plan(default_registry(), host_profile(), h, m, 2));
}
BENCHMARK(BM_FirstPlan)->Arg(1)->Arg(7)->Arg(128)->Unit(benchmark::kMicrosecond);

void BM_SelectLayout(benchmark::State& state) {
  const WeightProblem p{4096, 4096, 4, 32, false, false};
  for (auto _ : state) benchmark::DoNotOptimize(select_layout(default_registry(), host_profile(), p).winner);
}
BENCHMARK(BM_SelectLayout)->Unit(benchmark::kMicrosecond);

// linear() on a layer small enough that the fixed per-call cost shows.
void BM_LinearCallOverhead(benchmark::State& state) {
  const int n = 16, k = 64;
  std::vector<int8_t> q(size_t(n) * k, 1);
  std::vector<float> s(size_t(n) * (k / 32), 0.5f), x(k, 1.0f), y(n);
  const PackedWeights w = PackedWeights::pack(n, k, 4, 32, q.data(), s.data(), nullptr, nullptr);
  LinearOptions o;
  o.num_threads = 1;
  for (auto _ : state) w.linear(1, x.data(), y.data(), o);
}
BENCHMARK(BM_LinearCallOverhead);

}  // namespace
}  // namespace lowbit

BENCHMARK_MAIN();
