// The plan cache: a hit returns the same plan, takes no lock and allocates nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "format/layouts.h"
#include "select/plan.h"

// Counts allocations on this thread while armed.
static thread_local bool t_count = false;
static thread_local long t_allocs = 0;
void* operator new(size_t n) {
  if (t_count) ++t_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace lowbit {
namespace {

TEST(PlanCache, HitReturnsTheStoredPlanWithoutAllocating) {
  PlanCache cache;
  ExecPlan p;
  p.key = plan_key(7, 2);
  p.m = 7;
  const ExecPlan* stored = cache.insert(p);
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(cache.insert(p), stored) << "a second insert of the same key keeps the first";
  t_allocs = 0;
  t_count = true;
  const ExecPlan* hit = cache.find(plan_key(7, 2));
  const ExecPlan* miss = cache.find(plan_key(8, 2));
  t_count = false;
  EXPECT_EQ(hit, stored);
  EXPECT_EQ(miss, nullptr);
  EXPECT_EQ(t_allocs, 0);
}

TEST(PlanCache, FillsUpThenReportsFull) {
  PlanCache cache;
  for (int m = 1; m <= PlanCache::kSlots; ++m) {
    ExecPlan p;
    p.key = plan_key(m, 1);
    ASSERT_NE(cache.insert(p), nullptr) << m;
  }
  ExecPlan extra;
  extra.key = plan_key(PlanCache::kSlots + 1, 1);
  EXPECT_EQ(cache.insert(extra), nullptr);
  for (int m = 1; m <= PlanCache::kSlots; ++m) EXPECT_NE(cache.find(plan_key(m, 1)), nullptr) << m;
}

TEST(PlanCache, KeysSeparateMAndThreads) {
  EXPECT_NE(plan_key(1, 2), plan_key(2, 1));
  EXPECT_NE(plan_key(1 << 20, 1), plan_key(1, 1));
}

}  // namespace
}  // namespace lowbit
