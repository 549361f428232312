// Plans made while tuning records are loaded from another thread: every result stays exact, and
// TSan (label "concurrency") sees no race between the planner reading the active tuning and
// lowbit_load_tuning replacing it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "lowbit/lowbit.h"
#include "lowbit/lowbit.hpp"
#include "registry/registry.h"
#include "select/tuning.h"
#include "test_util.h"

namespace lowbit {
namespace {

TEST(Concurrency, PlansWhileATuningRecordLoads) {
  const test::TempDir tmp("lowbit_test_tuning_conc");
  const std::string dir = tmp.path();
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  // A record for this machine whose numbers differ from the generic ones (other caches,
  // bandwidth, thread costs), so plans made under it differ too.
  TuningRecord r = record_for_this_machine("concurrency");
  r.source = "tests/test_tuning_concurrency.cpp";
  r.caches = {32 * 1024, 256 * 1024, 4u << 20};
  r.bandwidth = {{20.0, 20.0}, {8.0, 7.0}, {2.0, 1.5}};
  r.task_cycles = 5000.0;
  const std::string path = dir + "/record.json";
  std::ofstream(path) << record_to_json(r);

  const WeightProblem problems[] = {{96, 128, 4, 32, false, true}, {40, 256, 3, 64, true, false}};
  std::vector<test::Weights> ws;
  std::vector<std::unique_ptr<PackedWeights>> packed;
  for (const WeightProblem& p : problems) {
    ws.push_back(test::random_weights(p, uint32_t(p.n)));
    const test::Weights& w = ws.back();
    packed.push_back(std::make_unique<PackedWeights>(
        PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr())));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> loads{0}, mismatches{0};
  std::thread loader([&] {
    for (int i = 0; !stop.load(); ++i) {
      EXPECT_EQ(lowbit_load_tuning(i % 2 ? nullptr : path.c_str()), LOWBIT_OK) << lowbit_last_error();
      ++loads;
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (int it = 0; it < 12; ++it) {
        const size_t s = size_t(t + it) % ws.size();
        const int m = 1 + (t * 5 + it * 3) % 11;
        const test::Activations x = test::random_activations(m, ws[s].p.k, uint32_t(t * 50 + it));
        std::vector<float> y(size_t(m) * ws[s].p.n);
        LinearOptions o;
        o.num_threads = 1 + it % 2;
        packed[s]->linear(m, x.x, y.data(), o);
        if (!test::bits_equal(y.data(), test::reference(ws[s], m, x.x).data(), y.size())) ++mismatches;
      }
    });
  for (auto& w : workers) w.join();
  while (loads.load() < 4) std::this_thread::yield();
  stop = true;
  loader.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(lowbit_load_tuning(nullptr), LOWBIT_OK);
}

}  // namespace
}  // namespace lowbit
