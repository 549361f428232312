#include "ops/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>

#include "util/aligned.h"
#include "util/error.h"

namespace lowbit {

namespace {

constexpr uint32_t kClaimed = 1;   // a thread computes the task into the output, or commits it
constexpr uint32_t kRescuing = 2;  // a thread out of work re-executes it into scratch
constexpr uint32_t kFlags = kClaimed | kRescuing;

// How long an idle worker waits for the next call before it sleeps: calls of a model's layers
// follow each other within microseconds; a futex wake-up costs tens. It spins for the first
// kSpinNs, then yields the core between looks (to the calling thread, when the scheduler put
// both on one core, or to other programs).
constexpr uint64_t kSpinNs = 50'000;
constexpr uint64_t kWaitNs = 1'000'000;

// A worker late in a call (one of its tasks had to be rescued, or it was awake but took no task:
// a sleeping one may well need longer to wake than the call lasts) is left out of the next calls, twice as many each time it is late again, up to this many. On a machine
// busy with other work a worker is late most of the time; left out, it goes to sleep instead
// of taking CPU from the calling thread, so a call with T threads is never slower than with one.
constexpr int kMaxBackoff = 64;

// A task is re-executed once it is 1.5x the rescuer's mean task time late, and not sooner than
// this: a descheduled worker is late by milliseconds, while a worker that only got a cold cache
// or an interrupt is late by microseconds and would be re-executed (and left out) for nothing.
constexpr double kMinPatienceNs = 20'000;


std::atomic<void (*)(uint32_t)> g_worker_task_hook{nullptr};

// This thread's scratch for tasks computed off the output. Only its own thread ever uses it,
// so a late worker's scratch is never reused under it.
float* scratch(size_t floats) {
  thread_local AlignedBuffer buf;
  if (buf.size() < floats * sizeof(float)) buf.resize(floats * sizeof(float));
  return reinterpret_cast<float*>(buf.data());
}

}  // namespace

// Mean duration of the tasks this thread ran in the current call.
struct ThreadPool::TaskTimes {
  double sum_ns = 0;
  int count = 0;
  double mean_or(double fallback) const { return count ? sum_ns / count : fallback; }
};

struct ThreadPool::Worker {
  // The next job to join, with a reference. A worker still busy with an earlier call (a late
  // one) takes it when done; a call replaces a job its worker has not taken yet.
  alignas(64) std::atomic<TaskJob*> next{nullptr};
  std::atomic<bool> sleeping{false};
  std::atomic<int> skip{0}, backoff{0};  // calls left out of, and the current backoff
  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;
};

// ---- TaskJob: the per-call state the pool keeps in each job -------------------------------

TaskJob::~TaskJob() = default;

void TaskJob::release(TaskJob* job) {
  if (job->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete job;
}

void TaskJob::reserve(uint32_t num_tasks, int participants) {
  if (num_tasks > task_capacity_) {
    tasks_.reset(new Task[num_tasks]);  // state 0: epoch 0, which no call uses
    task_capacity_ = num_tasks;
  }
  if (participants > range_capacity_) {
    ranges_.reset(new Range[size_t(participants)]);
    range_capacity_ = participants;
  }
}

void TaskJob::reset(uint32_t num_tasks, int participants) {
  reserve(num_tasks, participants);
  epoch_ += 1u << 2;
  if (epoch_ == 0) epoch_ = 1u << 2;
  num_tasks_ = num_tasks;
  num_ranges_ = participants;
  call_start_ns_ = steady_now_ns();
  for (int p = 0; p < participants; ++p) {
    const uint32_t begin = uint32_t(uint64_t(num_tasks) * uint32_t(p) / uint32_t(participants));
    const uint32_t end = uint32_t(uint64_t(num_tasks) * uint32_t(p + 1) / uint32_t(participants));
    ranges_[p].left.store(int32_t(end - begin), std::memory_order_relaxed);
    ranges_[p].front.store(begin, std::memory_order_relaxed);
    ranges_[p].back.store(end, std::memory_order_relaxed);
    ranges_[p].committed.store(0, std::memory_order_relaxed);
    ranges_[p].rescued.store(false, std::memory_order_relaxed);
  }
}

bool TaskJob::take(int p, uint32_t* t) {
  Range& own = ranges_[p];
  if (own.left.fetch_sub(1, std::memory_order_relaxed) > 0) {
    *t = own.front.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  for (int i = 1; i < num_ranges_; ++i) {
    Range& other = ranges_[(p + i) % num_ranges_];
    if (other.left.load(std::memory_order_relaxed) <= 0) continue;
    if (other.left.fetch_sub(1, std::memory_order_relaxed) > 0) {
      *t = other.back.fetch_sub(1, std::memory_order_relaxed) - 1;
      return true;
    }
  }
  return false;
}

uint32_t TaskJob::flags(uint32_t t) const {
  const uint32_t s = tasks_[t].state.load(std::memory_order_acquire);
  return (s & ~kFlags) == epoch_ ? s & kFlags : 0;
}

bool TaskJob::committed(uint32_t t) const { return (flags(t) & kClaimed) != 0; }

bool TaskJob::set_flag(uint32_t t, uint32_t flag) {
  std::atomic<uint32_t>& state = tasks_[t].state;
  uint32_t s = state.load(std::memory_order_relaxed);
  for (;;) {
    const uint32_t now = (s & ~kFlags) == epoch_ ? s : epoch_;
    if (now & flag) return false;
    if (state.compare_exchange_weak(s, now | flag, std::memory_order_acq_rel, std::memory_order_relaxed))
      return true;
  }
}

bool TaskJob::all_committed() const {
  uint32_t n = 0;
  for (int p = 0; p < num_ranges_; ++p) n += ranges_[p].committed.load(std::memory_order_acquire);
  return n == num_tasks_;
}

// ---- ThreadPool -----------------------------------------------------------------------------

ThreadPool::ThreadPool(int threads) : num_workers_(std::max(threads, 1) - 1) {
  workers_.reset(new Worker[size_t(num_workers_)]);
  for (int i = 0; i < num_workers_; ++i) workers_[i].thread = std::thread([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  for (int i = 0; i < num_workers_; ++i) {
    { std::lock_guard<std::mutex> lock(workers_[i].mutex); }
    workers_[i].wake.notify_one();
  }
  for (int i = 0; i < num_workers_; ++i) workers_[i].thread.join();
}

void ThreadPool::commit_if_first(TaskJob& j, int p, uint32_t t, const float* s) {
  if (!j.set_flag(t, kClaimed)) return;
  j.commit(t, s);
  const int taker = j.tasks_[t].taker.load(std::memory_order_relaxed);
  if (taker != p) j.ranges_[taker].rescued.store(true, std::memory_order_relaxed);
  j.ranges_[p].committed.fetch_add(1, std::memory_order_release);
}

void ThreadPool::take_tasks(TaskJob& j, int p, TaskTimes& times) {
  uint64_t t0 = steady_now_ns();
  for (uint32_t t; j.take(p, &t);) {
    j.tasks_[t].started_ns.store(t0, std::memory_order_relaxed);
    j.tasks_[t].taker.store(p, std::memory_order_relaxed);
    if (p == 0) {
      if (j.set_flag(t, kClaimed)) {
        j.run(t, nullptr, false);
        j.ranges_[0].committed.fetch_add(1, std::memory_order_release);
      }
    } else {
      if (auto hook = g_worker_task_hook.load(std::memory_order_relaxed)) hook(t);
      float* s = scratch(j.scratch_floats(t));
      if (j.run(t, s, false)) commit_if_first(j, p, t, s);
    }
    const uint64_t t1 = steady_now_ns();
    times.sum_ns += double(t1 - t0);
    ++times.count;
    t0 = t1;
  }
}

void ThreadPool::rescue_late_tasks(TaskJob& j, int p, const TaskTimes& times) {
  const uint64_t idle_since = steady_now_ns();
  const uint64_t patience = uint64_t(std::max(1.5 * times.mean_or(j.expected_task_ns), kMinPatienceNs));
  uint64_t next_scan = idle_since;
  for (;;) {
    if (p == 0 && j.all_committed()) return;
    const uint64_t now = steady_now_ns();
    if (now < next_scan) {
      cpu_relax();
      continue;
    }
    // Every task is taken. Of those not claimed yet (their workers are still computing them),
    // the one taken longest ago that nobody rescues yet.
    bool pending = false;
    uint32_t pick = j.num_tasks_;
    uint64_t oldest = std::numeric_limits<uint64_t>::max();
    for (uint32_t t = 0; t < j.num_tasks_; ++t) {
      const uint32_t f = j.flags(t);
      if (f & kClaimed) continue;
      pending = true;
      const uint64_t started = j.tasks_[t].started_ns.load(std::memory_order_relaxed);
      const uint64_t since = started >= j.call_start_ns_ ? started : idle_since;
      if (!(f & kRescuing) && since < oldest) {
        oldest = since;
        pick = t;
      }
    }
    // A worker leaves once every task is claimed: the claimers finish them.
    if (!pending && p != 0) return;
    if (pick == j.num_tasks_ || now - std::min(now, oldest) < patience) {
      next_scan = pick == j.num_tasks_ ? now + patience / 4 : oldest + patience;
      continue;
    }
    if (!j.set_flag(pick, kRescuing)) continue;
    float* s = scratch(j.scratch_floats(pick));
    if (j.run(pick, s, true)) commit_if_first(j, p, pick, s);
  }
}

void ThreadPool::leave(TaskJob& j) {
  if (j.active_.fetch_sub(1, std::memory_order_acq_rel) == 1) j.on_last_out();
}

void ThreadPool::run(TaskJob& job, uint32_t num_tasks, bool wait_for_workers) {
  // Hand the job to as many workers as it has tasks to share (one reference each), leaving
  // out those that were late lately.
  const int wanted = int(std::min(uint32_t(num_workers_), num_tasks > 0 ? num_tasks - 1 : 0));
  int helpers = 0;
  job.reserve(num_tasks, wanted + 1);
  for (int i = 0; i < num_workers_ && helpers < wanted; ++i) {
    Worker& w = workers_[i];
    if (w.skip.load(std::memory_order_relaxed) > 0) {
      w.skip.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    job.ranges_[++helpers].worker = i;
  }
  job.reset(num_tasks, helpers + 1);
  job.active_.store(1 + helpers, std::memory_order_relaxed);
  job.refs_.fetch_add(helpers, std::memory_order_relaxed);
  for (int p = 1; p <= helpers; ++p) {
    Worker& w = workers_[job.ranges_[p].worker];
    if (TaskJob* stale = w.next.exchange(&job, std::memory_order_seq_cst)) {
      leave(*stale);
      TaskJob::release(stale);
    }
    job.ranges_[p].woken = w.sleeping.load(std::memory_order_seq_cst);
    if (job.ranges_[p].woken) {
      { std::lock_guard<std::mutex> lock(w.mutex); }
      w.wake.notify_one();
    }
  }
  job.prologue();
  TaskTimes times;
  take_tasks(job, 0, times);
  rescue_late_tasks(job, 0, times);
  for (int p = 1; p <= helpers; ++p) {
    Worker& w = workers_[job.ranges_[p].worker];
    const bool late = job.ranges_[p].rescued.load(std::memory_order_relaxed) ||
                      (job.ranges_[p].committed.load(std::memory_order_relaxed) == 0 && !job.ranges_[p].woken);
    const int backoff = late ? std::min(std::max(1, 2 * w.backoff.load(std::memory_order_relaxed)), kMaxBackoff) : 0;
    w.backoff.store(backoff, std::memory_order_relaxed);
    w.skip.store(backoff, std::memory_order_relaxed);
  }
  leave(job);
  if (wait_for_workers)
    while (job.active_.load(std::memory_order_acquire) != 0) cpu_relax();
}

TaskJob* ThreadPool::wait_for_job(Worker& w) {
  const uint64_t t0 = steady_now_ns();
  for (uint32_t i = 0;; ++i) {
    if (w.next.load(std::memory_order_relaxed) != nullptr)
      if (TaskJob* j = w.next.exchange(nullptr, std::memory_order_acq_rel)) return j;
    if (stop_.load(std::memory_order_relaxed)) return nullptr;
    if ((i & 63) == 63) {
      const uint64_t waited = steady_now_ns() - t0;
      if (waited > kWaitNs) break;
      if (waited > kSpinNs) std::this_thread::yield();
    }
    cpu_relax();
  }
  std::unique_lock<std::mutex> lock(w.mutex);
  w.sleeping.store(true, std::memory_order_seq_cst);
  w.wake.wait(lock, [&] { return w.next.load(std::memory_order_seq_cst) != nullptr || stop_.load(); });
  w.sleeping.store(false, std::memory_order_relaxed);
  return w.next.exchange(nullptr, std::memory_order_acq_rel);
}

void ThreadPool::worker_main(int i) {
  while (TaskJob* j = wait_for_job(workers_[i])) {
    int p = 1;
    while (j->ranges_[p].worker != i) ++p;
    TaskTimes times;
    take_tasks(*j, p, times);
    rescue_late_tasks(*j, p, times);
    leave(*j);
    TaskJob::release(j);
  }
}

void set_worker_task_hook_for_testing(void (*hook)(uint32_t)) { g_worker_task_hook.store(hook); }

namespace {

struct WorkerHold {
  std::mutex mutex;
  std::condition_variable cv;
  bool armed = false, holding = false, released = false, timed_out = false;
  std::atomic<uint64_t> tasks_taken{0};

  static WorkerHold& instance() {
    static WorkerHold* h = new WorkerHold;  // never destroyed: a held worker may outlive main
    return *h;
  }
  static void hook(uint32_t) {
    WorkerHold& h = instance();
    h.tasks_taken.fetch_add(1);
    std::unique_lock<std::mutex> lock(h.mutex);
    if (!h.armed) return;
    h.armed = false;
    h.holding = true;
    if (!h.cv.wait_for(lock, std::chrono::seconds(60), [&] { return h.released; })) h.timed_out = true;
    h.holding = false;
  }
};

}  // namespace

void WorkerHoldForTesting::arm() {
  WorkerHold& h = WorkerHold::instance();
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    h.armed = true;
    h.released = false;
    h.timed_out = false;
  }
  set_worker_task_hook_for_testing(&WorkerHold::hook);
}

bool WorkerHoldForTesting::holding() {
  WorkerHold& h = WorkerHold::instance();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.holding;
}

void WorkerHoldForTesting::release() {
  WorkerHold& h = WorkerHold::instance();
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    h.armed = false;
    h.released = true;
  }
  h.cv.notify_all();
}

bool WorkerHoldForTesting::timed_out() {
  WorkerHold& h = WorkerHold::instance();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.timed_out;
}

uint64_t WorkerHoldForTesting::tasks_taken() { return WorkerHold::instance().tasks_taken.load(); }

void WorkerHoldForTesting::stop() {
  release();
  set_worker_task_hook_for_testing(nullptr);
}

namespace {

// Lock-free once created: linear() looks its pool up on every call.
struct Pools {
  std::mutex create_mutex;
  std::atomic<ThreadPool*> by_count[kMaxThreads + 1] = {};
  ~Pools() {
    for (auto& p : by_count) delete p.load();
  }
};

Pools& pools() {
  static Pools p;
  return p;
}

}  // namespace

ThreadPool* pool_for_threads(int threads) {
  if (threads <= 1) return nullptr;
  if (threads > kMaxThreads) fail(Status::invalid_argument, "num_threads ", threads, " exceeds ", kMaxThreads);
  Pools& ps = pools();
  std::atomic<ThreadPool*>& slot = ps.by_count[threads];
  if (ThreadPool* p = slot.load(std::memory_order_acquire)) return p;
  std::lock_guard<std::mutex> lock(ps.create_mutex);
  if (ThreadPool* p = slot.load(std::memory_order_acquire)) return p;
  ThreadPool* p = new ThreadPool(threads);
  slot.store(p, std::memory_order_release);
  return p;
}

}  // namespace lowbit
