#include "ops/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "util/aligned.h"
#include "util/error.h"

namespace lowbit {

namespace {

constexpr uint32_t kClaimed = 1;   // a thread computes or committed the task into the output
constexpr uint32_t kRescuing = 2;  // a thread out of work re-executes it into scratch

// How long an idle worker spins for the next call before it sleeps: calls of a model's
// layers follow each other within microseconds; a futex wake-up costs tens.
constexpr uint64_t kSpinNs = 1'000'000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch()).count());
}

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
  alignas(64) std::atomic<TaskJob*> job{nullptr};  // the mailbox: a call's job, with a reference
  std::atomic<bool> sleeping{false};
  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;
};

TaskJob::~TaskJob() = default;

bool TaskJob::committed(uint32_t t) const {
  return (tasks_[t].state.load(std::memory_order_relaxed) & kClaimed) != 0;
}

void TaskJob::release(TaskJob* job) {
  if (job->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete job;
}

void TaskJob::reset(uint32_t num_tasks) {
  if (num_tasks > capacity_) {
    tasks_.reset(new Task[num_tasks]);
    capacity_ = num_tasks;
  }
  for (uint32_t t = 0; t < num_tasks; ++t) {
    tasks_[t].state.store(0, std::memory_order_relaxed);
    tasks_[t].started_ns.store(0, std::memory_order_relaxed);
  }
  num_tasks_ = num_tasks;
  next_.store(0, std::memory_order_relaxed);
  remaining_.store(num_tasks, std::memory_order_relaxed);
}

ThreadPool::ThreadPool(int threads) : num_workers_(std::max(threads, 1) - 1) {
  workers_.reset(new Worker[size_t(num_workers_)]);
  for (int i = 0; i < num_workers_; ++i)
    workers_[i].thread = std::thread([this, i] { worker_main(workers_[i]); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  for (int i = 0; i < num_workers_; ++i) {
    { std::lock_guard<std::mutex> lock(workers_[i].mutex); }
    workers_[i].wake.notify_one();
  }
  for (int i = 0; i < num_workers_; ++i) workers_[i].thread.join();
}

void ThreadPool::commit_if_first(TaskJob& j, uint32_t t, const float* s) {
  if (j.tasks_[t].state.fetch_or(kClaimed, std::memory_order_acq_rel) & kClaimed) return;
  j.commit(t, s);
  j.remaining_.fetch_sub(1, std::memory_order_release);
}

void ThreadPool::take_tasks(TaskJob& j, bool caller, TaskTimes& times) {
  for (uint32_t t; (t = j.next_.fetch_add(1, std::memory_order_relaxed)) < j.num_tasks_;) {
    TaskJob::Task& task = j.tasks_[t];
    const uint64_t t0 = now_ns();
    task.started_ns.store(t0, std::memory_order_relaxed);
    if (caller) {
      if (!(task.state.fetch_or(kClaimed, std::memory_order_acq_rel) & kClaimed)) {
        j.run(t, nullptr, false);
        j.remaining_.fetch_sub(1, std::memory_order_release);
      }
    } else {
      if (auto hook = g_worker_task_hook.load(std::memory_order_relaxed)) hook(t);
      float* s = scratch(j.scratch_floats(t));
      if (j.run(t, s, false)) commit_if_first(j, t, s);
    }
    times.sum_ns += double(now_ns() - t0);
    ++times.count;
  }
}

void ThreadPool::rescue_late_tasks(TaskJob& j, bool caller, const TaskTimes& times) {
  const uint64_t idle_since = now_ns();
  const uint64_t patience = uint64_t(1.5 * times.mean_or(j.expected_task_ns));
  while (j.remaining_.load(std::memory_order_acquire) != 0) {
    // The uncommitted task taken longest ago that nobody rescues yet, if it is overdue.
    const uint64_t now = now_ns();
    uint32_t pick = j.num_tasks_;
    uint64_t oldest = now;
    bool uncommitted = false;
    for (uint32_t t = 0; t < j.num_tasks_; ++t) {
      const uint32_t st = j.tasks_[t].state.load(std::memory_order_relaxed);
      if (st & kClaimed) continue;
      uncommitted = true;
      const uint64_t since = std::max(j.tasks_[t].started_ns.load(std::memory_order_relaxed), idle_since);
      if (!(st & kRescuing) && since < oldest && now - since > patience) {
        oldest = since;
        pick = t;
      }
    }
    // Every uncommitted task is claimed by the caller, who finishes it: a worker may go.
    if (!uncommitted && !caller) return;
    if (pick == j.num_tasks_ ||
        (j.tasks_[pick].state.fetch_or(kRescuing, std::memory_order_relaxed) & kRescuing)) {
      cpu_relax();
      continue;
    }
    float* s = scratch(j.scratch_floats(pick));
    if (j.run(pick, s, true)) commit_if_first(j, pick, s);
  }
}

void ThreadPool::leave(TaskJob& j) {
  if (j.active_.fetch_sub(1, std::memory_order_acq_rel) == 1) j.on_last_out();
}

void ThreadPool::run(TaskJob& job, uint32_t num_tasks, bool wait_for_workers) {
  job.reset(num_tasks);
  job.active_.store(1, std::memory_order_relaxed);
  // Hand the job to idle workers (one reference each); skip busy ones.
  uint32_t helpers = std::min(uint32_t(num_workers_), num_tasks > 0 ? num_tasks - 1 : 0);
  for (int i = 0; i < num_workers_ && helpers > 0; ++i) {
    Worker& w = workers_[i];
    if (w.job.load(std::memory_order_relaxed) != nullptr) continue;
    job.refs_.fetch_add(1, std::memory_order_relaxed);
    job.active_.fetch_add(1, std::memory_order_relaxed);
    TaskJob* expected = nullptr;
    if (!w.job.compare_exchange_strong(expected, &job, std::memory_order_seq_cst)) {
      job.refs_.fetch_sub(1, std::memory_order_relaxed);
      job.active_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    --helpers;
    if (w.sleeping.load(std::memory_order_seq_cst)) {
      { std::lock_guard<std::mutex> lock(w.mutex); }
      w.wake.notify_one();
    }
  }
  TaskTimes times;
  take_tasks(job, true, times);
  rescue_late_tasks(job, true, times);
  leave(job);
  if (wait_for_workers)
    while (job.active_.load(std::memory_order_acquire) != 0) cpu_relax();
}

TaskJob* ThreadPool::wait_for_job(Worker& w) {
  const uint64_t t0 = now_ns();
  for (uint32_t i = 0;; ++i) {
    if (TaskJob* j = w.job.load(std::memory_order_acquire)) return j;
    if (stop_.load(std::memory_order_relaxed)) return nullptr;
    if ((i & 255) == 255 && now_ns() - t0 > kSpinNs) break;
    cpu_relax();
  }
  std::unique_lock<std::mutex> lock(w.mutex);
  w.sleeping.store(true, std::memory_order_seq_cst);
  w.wake.wait(lock, [&] { return w.job.load(std::memory_order_seq_cst) != nullptr || stop_.load(); });
  w.sleeping.store(false, std::memory_order_relaxed);
  return w.job.load(std::memory_order_acquire);
}

void ThreadPool::worker_main(Worker& w) {
  while (TaskJob* j = wait_for_job(w)) {
    TaskTimes times;
    take_tasks(*j, false, times);
    rescue_late_tasks(*j, false, times);
    w.job.store(nullptr, std::memory_order_release);
    leave(*j);
    TaskJob::release(j);
  }
}

void set_worker_task_hook_for_testing(void (*hook)(uint32_t)) { g_worker_task_hook.store(hook); }

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
