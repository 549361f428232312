// 16 threads planning and running different shapes at once, sharing packed weights and the
// process-wide pools: results stay exact (and TSan stays quiet: label "concurrency").
#include <gtest/gtest.h>

#include <thread>

#include "lowbit/lowbit.hpp"
#include "test_util.h"

namespace lowbit {
namespace {

TEST(Concurrency, SixteenThreadsPlanAndRunDifferentShapes) {
  struct Shape {
    WeightProblem p;
    test::Weights w;
    std::unique_ptr<PackedWeights> packed;
  };
  std::vector<Shape> shapes;
  const WeightProblem problems[] = {{64, 128, 4, 32, false, true},
                                    {33, 256, 3, 64, true, false},
                                    {100, 64, 8, 16, true, true}};
  for (const WeightProblem& p : problems) {
    Shape s{p, test::random_weights(p, uint32_t(p.n)), nullptr};
    s.packed = std::make_unique<PackedWeights>(PackedWeights::pack(
        p.n, p.k, p.bits, p.group_size, s.w.q.data(), s.w.scales.data(), s.w.zeros_ptr(), s.w.bias_ptr()));
    shapes.push_back(std::move(s));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int it = 0; it < 6; ++it) {
        const Shape& s = shapes[size_t(t + it) % shapes.size()];
        const int m = 1 + (t * 7 + it * 3) % 19;  // many distinct m: fresh plans race with hits
        test::Activations x = test::random_activations(m, s.p.k, uint32_t(t * 100 + it));
        std::vector<float> y(size_t(m) * s.p.n);
        LinearOptions o;
        o.num_threads = 1 + (t + it) % 3;
        s.packed->linear(m, x.x, y.data(), o);
        if (!test::bits_equal(y.data(), test::reference(s.w, m, x.x).data(), y.size())) ++mismatches;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace lowbit
