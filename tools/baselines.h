// Baselines timed next to lowbit in one run: OpenBLAS f32 and oneDNN int8 matmul, plus a
// streaming read of the same bytes (the bandwidth bound for decode).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lowbit {
class ThreadPool;
}

namespace lowbit::cli {

// Which baselines this build has (LOWBIT_BASELINES at configure time).
bool have_openblas();
bool have_onednn();
// "" when the build has every baseline; else one line naming the missing ones and how to add them.
std::string missing_baselines();

// y[m,n] = x[m,k] · w[n,k]^T in f32 with OpenBLAS (sgemv for m = 1). Only when have_openblas().
void openblas_linear(int m, int n, int k, const float* x, const float* w, float* y, int threads);

// oneDNN int8 matmul: u8 activations (with a zero point) × s8 weights → f32, per-column
// scales. Per-channel, not groupwise: a speed reference, not the same operation.
class OneDnnMatmul {
 public:
  OneDnnMatmul(int m, int n, int k, int threads);
  ~OneDnnMatmul();
  void run();
  // False when the build has no oneDNN, or it cannot run here.
  static bool available();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Plain read loops over n 64-bit words (their xor, so nothing is optimised away): one
// accumulator chain, four chains, four streams a quarter apart (also with a software prefetch
// ahead). Their DRAM bandwidth differs by up to 2x on these machines (MEASURING.md).
using ReadLoop = uint64_t (*)(const uint64_t* p, size_t n);
const std::vector<ReadLoop>& read_loops();

// Runs task(i) for i = 0..tasks-1 on `pool` (inline without one) and waits for every worker.
// A task is never re-executed by another thread (a rescue declines): each task is one thread's
// timing or one thread's share of a read.
void run_tasks(ThreadPool* pool, size_t tasks, const std::function<void(size_t)>& task);

// Bytes per second of the fastest of the read loops over `bytes` (hot: repeated).
double stream_read_bandwidth(size_t bytes, int reps);

}  // namespace lowbit::cli
