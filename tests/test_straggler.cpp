// A late worker does not hold the call (ops/thread_pool.h): a worker stalled mid-task
// (WorkerHoldForTesting blocks it, as the OS does when it deschedules one) leaves the call to finish
// without it, bit-exact; once it resumes it never writes y and reads only what it still holds
// (the weights and activations are freed by the user meanwhile: ASan). Label "concurrency":
// also under TSan.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <thread>

#include "lowbit/lowbit.h"
#include "lowbit/lowbit.hpp"
#include "ops/thread_pool.h"
#include "util/aligned.h"
#include "test_util.h"

namespace lowbit {
namespace {

using Hold = WorkerHoldForTesting;

class Straggler : public ::testing::Test {
 protected:
  void TearDown() override { Hold::stop(); }

  // Runs `call` until a worker is stalled in one of them (for at most 60 s: on a busy machine
  // a worker may be left out of many calls, ops/thread_pool.cpp kMaxBackoff).
  static void call_until_a_worker_stalls(const std::function<void()>& call) {
    Hold::arm();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!Hold::holding() && std::chrono::steady_clock::now() < deadline) call();
    ASSERT_TRUE(Hold::holding()) << "no worker took a task in 60 s";
  }

  // Releases the stalled worker and waits until it took a task of another call: it has left
  // the stalled call's job by then (its reads of the weights included).
  static void release_and_wait_for_the_worker() {
    const uint64_t before = Hold::tasks_taken();
    Hold::release();
    const WeightProblem p{4096, 1024, 4, 32, false, false};  // calls long enough to join
    const test::Weights w = test::random_weights(p, 9);
    const PackedWeights other = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr);
    test::Activations x = test::random_activations(1, p.k, 10);
    std::vector<float> y(size_t(p.n));
    LinearOptions o;
    o.num_threads = 2;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (Hold::tasks_taken() == before && std::chrono::steady_clock::now() < deadline)
      other.linear(1, x.x, y.data(), o);
    ASSERT_GT(Hold::tasks_taken(), before) << "the stalled worker never came back";
    EXPECT_FALSE(Hold::timed_out());
  }
};

struct Case {
  WeightProblem p;
  int m;
  bool clamp;
};

const Case kCases[] = {
    {{4096, 512, 4, 32, false, false}, 1, false},  // many column tasks
    {{200, 128, 3, 64, true, true}, 37, true},     // row tiles, a short last column tile
};

TEST_F(Straggler, CallFinishesWithoutTheStalledWorkerWhichThenNeverWritesY) {
  for (const Case& c : kCases) {
    SCOPED_TRACE("n=" + std::to_string(c.p.n) + " m=" + std::to_string(c.m));
    const test::Weights w = test::random_weights(c.p, 3);
    auto packed = std::make_unique<PackedWeights>(PackedWeights::pack(
        c.p.n, c.p.k, c.p.bits, c.p.group_size, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr()));
    test::Activations x = test::random_activations(c.m, c.p.k, 4);
    LinearOptions o;
    o.num_threads = 2;
    o.has_clamp = c.clamp;
    o.clamp_min = -0.5f;
    o.clamp_max = 0.5f;
    const std::vector<float> ref = test::reference(w, c.m, x.x, c.clamp ? ClampRange{true, -0.5f, 0.5f} : ClampRange{});
    std::vector<float> y(ref.size());
    call_until_a_worker_stalls([&] { packed->linear(c.m, x.x, y.data(), o); });
    // The call returned while its worker is still stalled in it, with y complete.
    EXPECT_TRUE(test::bits_equal(y.data(), ref.data(), y.size())) << test::first_difference(y.data(), ref.data(), y.size());
    // The weights go away under the late worker (it holds its own reference), the activations
    // too (only the calling thread reads them), and y is the user's again: the worker, once
    // resumed, computes its task, loses the claim and leaves.
    packed.reset();
    x = test::Activations{};
    std::fill(y.begin(), y.end(), 1234.5f);
    release_and_wait_for_the_worker();
    EXPECT_EQ(std::count(y.begin(), y.end(), 1234.5f), long(y.size())) << "a late worker wrote y";
  }
}

TEST_F(Straggler, CApiFreesWeightsRightAfterACallWithAStraggler) {
  // Large enough that every plan splits it (a 1024x512 call can be planned as one task, which
  // no worker ever takes).
  const WeightProblem p{4096, 1024, 4, 32, false, true};
  const test::Weights w = test::random_weights(p, 5);
  lowbit_packed_weights* packed = nullptr;
  ASSERT_EQ(lowbit_pack_weights(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr,
                                w.bias_ptr(), nullptr, &packed), LOWBIT_OK);
  test::Activations x = test::random_activations(1, p.k, 6);
  const std::vector<float> ref = test::reference(w, 1, x.x);
  std::vector<float> y(ref.size());
  lowbit_linear_options o = {0, 0.0f, 0.0f, 2};
  call_until_a_worker_stalls([&] { ASSERT_EQ(lowbit_linear(packed, 1, x.x, y.data(), &o), LOWBIT_OK); });
  EXPECT_TRUE(test::bits_equal(y.data(), ref.data(), y.size()));
  lowbit_free(packed);
  release_and_wait_for_the_worker();
}

// A view reads the caller's memory in place. Its calls return without a stalled worker too;
// destroying the view is what waits for the worker, so the caller may free the bytes after it.
TEST_F(Straggler, ViewCallsDoNotWaitForTheStalledWorkerDestroyingTheViewDoes) {
  const WeightProblem p{4096, 1024, 4, 32, false, true};
  const test::Weights w = test::random_weights(p, 11);
  const PackedWeights owned = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(),
                                                  nullptr, w.bias_ptr());
  auto bytes = std::make_unique<AlignedBuffer>(owned.size());
  std::memcpy(bytes->data(), owned.data(), owned.size());
  auto view = std::make_unique<PackedWeights>(PackedWeights::view(bytes->data(), bytes->size()));
  const test::Activations x = test::random_activations(1, p.k, 12);
  const std::vector<float> ref = test::reference(w, 1, x.x);
  std::vector<float> y(ref.size());
  LinearOptions o;
  o.num_threads = 2;
  call_until_a_worker_stalls([&] { view->linear(1, x.x, y.data(), o); });
  EXPECT_TRUE(test::bits_equal(y.data(), ref.data(), y.size())) << test::first_difference(y.data(), ref.data(), y.size());

  std::atomic<bool> destroyed{false};
  bool worker_held_when_destroyed = true;
  std::thread destroyer([&] {
    view.reset();
    worker_held_when_destroyed = Hold::holding();
    bytes.reset();  // the caller's memory goes: under ASan, a worker still reading it is an error
    destroyed.store(true);
  });
  // A destructor that does not wait returns at once; give it a second to show that (correct
  // code waits however long this takes).
  for (int i = 0; i < 100 && !destroyed.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(destroyed.load()) << "the view was destroyed while its stalled worker still read it";
  release_and_wait_for_the_worker();
  destroyer.join();
  EXPECT_FALSE(worker_held_when_destroyed);
}

// Workers stalled at random (more threads than cores, so the OS deschedules them too): every
// result is exact, whoever computed and committed each task.
TEST_F(Straggler, RandomStallsKeepEveryResultExact) {
  set_worker_task_hook_for_testing([](uint32_t task) {
    thread_local std::mt19937 rng(task);
    if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
  });
  const WeightProblem p{300, 192, 5, 32, true, true};
  const test::Weights w = test::random_weights(p, 7);
  const PackedWeights packed = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(),
                                                   w.zeros_ptr(), w.bias_ptr());
  const int ms[] = {1, 10, 19};
  std::vector<test::Activations> xs;
  std::vector<std::vector<float>> refs;
  for (int m : ms) {
    xs.push_back(test::random_activations(m, p.k, uint32_t(100 + m)));
    refs.push_back(test::reference(w, m, xs.back().x));
  }
  int mismatches = 0;
  for (int i = 0; i < 150; ++i) {
    const int m = ms[i % 3];
    std::vector<float> y(size_t(m) * p.n, std::numeric_limits<float>::quiet_NaN());
    LinearOptions o;
    o.num_threads = 2 + i / 3 % 3;
    packed.linear(m, xs[size_t(i % 3)].x, y.data(), o);
    if (!test::bits_equal(y.data(), refs[size_t(i % 3)].data(), y.size())) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace lowbit
