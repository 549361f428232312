// lowbit's thread pool: a call returns when its output is complete, not when its workers are.
//
// Why not pthreadpool (or OpenMP): their calls return only when every worker has finished its
// items, so a worker the OS deschedules in the middle of one holds the whole call for
// milliseconds (4096x4096, m = 1, 2 threads on 2 vCPUs: p50 89 us, p99 4 ms; under load, p90
// 12 ms). lowbit's results do not depend on who computes a task, which allows another way:
//
// * Each thread takes tasks from its own range, then from the back of the others'.
// * The calling thread computes its tasks straight into the output; it claims each first (the
//   call cannot return without it anyway, so nobody needs to replace it).
// * Workers compute their tasks into their own scratch, then claim and commit them.
// * A thread out of tasks re-executes, into its own scratch, a task that another thread took
//   but has not committed after 1.5x the usual task time; the first finisher claims the task
//   and commits it, the loser never writes the output (one atomic claim per task).
// * The call returns once every task is committed. A late worker still holds a reference to
//   the job, and the job to everything the worker may still read (weights, packed
//   activations, its plan); the last thread out lets go of them.
// * A worker late in a call is left out of the next ones (exponential backoff), so on a busy
//   machine it sleeps rather than compete with the calling thread for a core.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace lowbit {

constexpr int kMaxThreads = 1024;

// One call's work as the pool sees it: tasks 0..n-1, each writing its own part of the output
// and deterministic (any thread computing a task produces the same bytes). Reference counted:
// the creator holds the first reference; release() deletes the job with the last one.
class TaskJob {
 public:
  virtual ~TaskJob();
  // Computes task t: straight into the output when scratch is nullptr (the calling thread,
  // after claiming t), otherwise into scratch (scratch_floats(t) floats). A rescue works in
  // small steps and returns false as soon as it sees t committed by another thread.
  virtual bool run(uint32_t t, float* scratch, bool rescue) = 0;
  virtual size_t scratch_floats(uint32_t t) const = 0;
  // Copies a task computed into scratch to the output: only the thread that claimed it.
  virtual void commit(uint32_t t, const float* scratch) = 0;
  // Run by the calling thread once the workers have the job and before it takes a task: what
  // only the caller may do (read the caller's memory, which a worker late past the call's
  // return must not touch) while the workers start. Tasks may wait for its results (never for
  // a worker's).
  virtual void prologue() {}
  // Run by the last thread to leave a call (a late worker, possibly long after the call
  // returned): drop what only that call needed (e.g. the reference to the weights).
  virtual void on_last_out() {}

  bool committed(uint32_t t) const;
  // No thread other than the creator holds the job: it may be prepared for another call.
  bool idle() const { return refs_.load(std::memory_order_acquire) == 1; }
  static void release(TaskJob* job);

  // How long a task usually takes, for a thread that has not timed one of its own yet.
  double expected_task_ns = 50e3;

 private:
  friend class ThreadPool;
  struct Task {
    // The call's epoch << 2 | kClaimed | kRescuing: flags of an older call read as none, so
    // starting a call writes nothing per task.
    std::atomic<uint32_t> state{0};
    std::atomic<uint64_t> started_ns{0};  // when it was taken (older than the call: unknown)
    std::atomic<int> taker{0};            // the participant that took it
  };
  // Participant p's share of the tasks, taken from the front by p and from the back by the
  // others once theirs are gone (as pthreadpool does: each thread reads the same weights on
  // every call, and takes a task with an uncontended atomic on its own cache line).
  struct alignas(64) Range {
    std::atomic<int32_t> left{0};  // not taken yet
    std::atomic<uint32_t> front{0}, back{0};
    std::atomic<uint32_t> committed{0};  // tasks participant p committed (from any range)
    std::atomic<bool> rescued{false};    // another thread committed a task p was late with
    int worker = -1;                     // which pool worker participant p is
    bool woken = false;                  // it was asleep when the call began
  };
  void reserve(uint32_t num_tasks, int participants);
  void reset(uint32_t num_tasks, int participants);  // keeps each Range's worker
  bool take(int p, uint32_t* t);
  bool set_flag(uint32_t t, uint32_t flag);  // false when it is already set in this call
  uint32_t flags(uint32_t t) const;
  bool all_committed() const;

  std::unique_ptr<Task[]> tasks_;
  std::unique_ptr<Range[]> ranges_;
  uint32_t task_capacity_ = 0, num_tasks_ = 0, epoch_ = 0;
  int range_capacity_ = 0, num_ranges_ = 0;
  uint64_t call_start_ns_ = 0;
  std::atomic<int> active_{0};  // threads in the current call
  std::atomic<int> refs_{1};
};

// Monotonic time in ns: task and call timing (lateness) of the pool and of foreign teams.
inline uint64_t steady_now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch()).count());
}

// A spin-wait's pause (x86 `pause`, AArch64 `yield`).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads - 1 workers; the calling thread is the last
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int threads() const { return num_workers_ + 1; }

  // Runs job.prologue() on the calling thread, then tasks 0..num_tasks-1 of `job` on it and the
  // workers (a worker still late on an earlier call joins when done, if there is anything
  // left). Returns when every task is committed; with wait_for_workers, only once every worker
  // has left the job too (for jobs that read memory nobody keeps alive for late workers).
  void run(TaskJob& job, uint32_t num_tasks, bool wait_for_workers);

 private:
  struct Worker;
  struct TaskTimes;
  void worker_main(int i);
  TaskJob* wait_for_job(Worker& w);
  // What one thread does in one call: take tasks nobody took yet, then re-execute tasks that
  // others took but are late with, until every task is committed (the caller) or nothing
  // left could still need it (a worker).
  // Participant 0 is the calling thread, p > 0 worker p - 1.
  static void take_tasks(TaskJob& j, int p, TaskTimes& times);
  static void rescue_late_tasks(TaskJob& j, int p, const TaskTimes& times);
  static void commit_if_first(TaskJob& j, int p, uint32_t t, const float* scratch);
  static void leave(TaskJob& j);

  int num_workers_;
  std::unique_ptr<Worker[]> workers_;
  std::atomic<bool> stop_{false};
};

// The process-wide pool for `threads` threads, created on first use; nullptr for threads <= 1
// (the caller runs every task itself).
ThreadPool* pool_for_threads(int threads);

// Test-only: called by a worker after it took task `task` and before computing it, so a test
// can stall a worker mid-task (sleep) as the OS does when it deschedules one.
void set_worker_task_hook_for_testing(void (*hook)(uint32_t task));

// Test-only, through that hook (the C++ and the Python tests): hold the first task a worker
// takes after arm() until release(), or 60 s (then timed_out()), as the OS holds a worker it
// deschedules mid-task. stop() removes the hook, releasing any held worker.
struct WorkerHoldForTesting {
  static void arm();
  static bool holding();
  static void release();
  static bool timed_out();
  static uint64_t tasks_taken();  // by any worker since the hook was installed
  static void stop();
};

}  // namespace lowbit
