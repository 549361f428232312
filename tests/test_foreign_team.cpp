// linear_on_team (ops/linear.h): a call's tasks on someone else's fork-join team, as the torch
// ops run them on torch's intra-op threads. Bit-exact against the reference at every team size,
// whoever takes the tasks; a late team is left out of the calling thread's next calls. Label
// "concurrency": also under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "lowbit/lowbit.hpp"
#include "ops/linear.h"
#include "test_util.h"

namespace lowbit {
namespace {

// A fork-join team of std::threads: body on the calling thread and on threads - 1 others;
// returns when all have returned. With late_helpers the others start only once the caller's body
// has returned, and then twice its time plus 1 ms later (a descheduled thread: late however
// slowly the machine, or an emulator, runs the caller).
struct ThreadTeam {
  int threads = 2;
  bool late_helpers = false;
  std::atomic<int> forks{0};

  ForeignTeam team() {
    ForeignTeam t;
    t.threads = threads;
    t.ctx = this;
    t.fork_join = [](void* ctx, void (*body)(void*), void* arg) {
      ThreadTeam& self = *static_cast<ThreadTeam*>(ctx);
      self.forks.fetch_add(1);
      std::atomic<int64_t> caller_ns{-1};
      std::vector<std::thread> helpers;
      for (int i = 1; i < self.threads; ++i)
        helpers.emplace_back([&] {
          if (self.late_helpers) {
            while (caller_ns.load() < 0) std::this_thread::yield();
            std::this_thread::sleep_for(std::chrono::nanoseconds(2 * caller_ns.load()) + std::chrono::milliseconds(1));
          }
          body(arg);
        });
      const auto t0 = std::chrono::steady_clock::now();
      body(arg);
      caller_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
      for (std::thread& h : helpers) h.join();
    };
    return t;
  }
};

struct Case {
  WeightProblem p;
  int m;
  bool clamp;
};

TEST(ForeignTeam, EveryTeamSizeIsBitExact) {
  const Case cases[] = {
      {{4096, 512, 4, 32, false, false}, 1, false},  // many column tasks
      {{200, 128, 3, 64, true, true}, 37, true},     // row tiles, a short last column tile
      {{96, 256, 1, 32, true, false}, 5, false},
      {{64, 128, 8, 128, false, true}, 130, true},
  };
  for (const Case& c : cases) {
    const test::Weights w = test::random_weights(c.p, 3);
    const PackedWeights packed = PackedWeights::pack(c.p.n, c.p.k, c.p.bits, c.p.group_size, w.q.data(),
                                                     w.scales.data(), w.zeros_ptr(), w.bias_ptr());
    test::Activations x = test::random_activations(c.m, c.p.k, 4);
    LinearOptions o;
    o.has_clamp = c.clamp;
    o.clamp_min = -0.5f;
    o.clamp_max = 0.75f;
    const std::vector<float> ref = test::reference(w, c.m, x.x, {c.clamp, o.clamp_min, o.clamp_max});
    for (int threads : {1, 2, 3, 5}) {
      SCOPED_TRACE("n=" + std::to_string(c.p.n) + " m=" + std::to_string(c.m) + " team of " + std::to_string(threads));
      ThreadTeam tt;
      tt.threads = threads;
      std::vector<float> y(size_t(c.m) * size_t(c.p.n), -1.0f);
      linear_on_team(packed, c.m, x.x, y.data(), o, tt.team());
      EXPECT_TRUE(test::bits_equal(y.data(), ref.data(), y.size())) << test::first_difference(y.data(), ref.data(), y.size());
    }
  }
}

TEST(ForeignTeam, ALateTeamIsLeftOutOfTheNextCallsThenAskedAgain) {
  const WeightProblem p{2048, 512, 4, 32, false, false};
  const test::Weights w = test::random_weights(p, 5);
  const PackedWeights packed = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr);
  test::Activations x = test::random_activations(1, p.k, 6);
  const std::vector<float> ref = test::reference(w, 1, x.x);
  std::vector<float> y(size_t(p.n));
  // Runs on a fresh thread: the backoff belongs to the calling thread (as an OpenMP team does).
  std::thread([&] {
    ThreadTeam tt;
    tt.late_helpers = true;
    const ForeignTeam team = tt.team();
    linear_on_team(packed, 1, x.x, y.data(), {}, team);
    EXPECT_TRUE(test::bits_equal(y.data(), ref.data(), y.size()));
    EXPECT_EQ(tt.forks.load(), 1);
    linear_on_team(packed, 1, x.x, y.data(), {}, team);  // left out of one call
    EXPECT_EQ(tt.forks.load(), 1);
    EXPECT_TRUE(test::bits_equal(y.data(), ref.data(), y.size()));
    linear_on_team(packed, 1, x.x, y.data(), {}, team);  // asked again: late again
    EXPECT_EQ(tt.forks.load(), 2);
    for (int i = 0; i < 2; ++i) linear_on_team(packed, 1, x.x, y.data(), {}, team);  // left out of two
    EXPECT_EQ(tt.forks.load(), 2);
    tt.late_helpers = false;
    linear_on_team(packed, 1, x.x, y.data(), {}, team);  // asked again
    EXPECT_EQ(tt.forks.load(), 3);
    EXPECT_TRUE(test::bits_equal(y.data(), ref.data(), y.size()));
  }).join();
}

TEST(ForeignTeam, ATeamThatRunsNothingIsAnInternalErrorNotAWrongResult) {
  // Work that every plan splits into tasks for the team (256 x 128 ran as one on Zen 5's record).
  const WeightProblem p{1024, 512, 4, 32, false, false};
  const test::Weights w = test::random_weights(p, 7);
  const PackedWeights packed = PackedWeights::pack(p.n, p.k, p.bits, p.group_size, w.q.data(), w.scales.data(), nullptr, nullptr);
  test::Activations x = test::random_activations(4, p.k, 8);
  std::vector<float> y(size_t(4) * size_t(p.n));
  ForeignTeam idle;
  idle.threads = 2;
  idle.fork_join = [](void*, void (*)(void*), void*) {};
  // The error linear_on_team(team) throws, its status, and a text its message names.
  auto expect_error = [&](const ForeignTeam& team, Status status, const std::string& names) {
    try {
      linear_on_team(packed, 4, x.x, y.data(), {}, team);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), status);
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  };
  // On a thread whose team was never late (the backoff is per calling thread).
  std::thread([&] { expect_error(idle, Status::internal, "before running the call's tasks"); }).join();
  ForeignTeam none;
  none.threads = 2;
  expect_error(none, Status::invalid_argument, "fork_join");
  ForeignTeam no_threads = idle;
  no_threads.threads = 0;
  expect_error(no_threads, Status::invalid_argument, "thread count 0");
}

}  // namespace
}  // namespace lowbit
