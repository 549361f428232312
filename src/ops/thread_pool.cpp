#include "ops/thread_pool.h"

#include <atomic>
#include <mutex>

#include "util/error.h"

namespace lowbit {

namespace {

// Lock-free once created: linear() looks its pool up on every call.
struct Pools {
  std::mutex create_mutex;
  std::atomic<pthreadpool_t> by_count[kMaxThreads + 1] = {};
  ~Pools() {
    for (auto& p : by_count)
      if (pthreadpool_t pool = p.load()) pthreadpool_destroy(pool);
  }
};

Pools& pools() {
  static Pools p;
  return p;
}

}  // namespace

pthreadpool_t pool_for_threads(int threads) {
  if (threads <= 1) return nullptr;
  if (threads > kMaxThreads) fail(Status::invalid_argument, "num_threads ", threads, " exceeds ", kMaxThreads);
  Pools& ps = pools();
  std::atomic<pthreadpool_t>& slot = ps.by_count[threads];
  if (pthreadpool_t p = slot.load(std::memory_order_acquire)) return p;
  std::lock_guard<std::mutex> lock(ps.create_mutex);
  if (pthreadpool_t p = slot.load(std::memory_order_acquire)) return p;
  pthreadpool_t p = pthreadpool_create(size_t(threads));
  if (p == nullptr) fail(Status::out_of_memory, "cannot create a pool of ", threads, " threads");
  slot.store(p, std::memory_order_release);
  return p;
}

}  // namespace lowbit
