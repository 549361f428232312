// lowbit against its ceilings and baselines, in one process (MEASURING.md: compare only
// within a run; use --benchmark_enable_random_interleaving=true and ≥ 15 repetitions):
//   lowbit/...   the selected plan (PackedWeights::linear), weights cold (rotating over copies
//                totalling > 64 MiB) or hot (one copy, L3-resident)
//   scalar/...   the same weights packed for the portable scalar reference kernel
//   openblas/... sgemv (m = 1) / sgemm on f32 weights
//   stream/...   reading the same bytes, several loop shapes (take the fastest)
//   peak/...     independent dot-product instructions (MAC/s ceiling)
//   ceiling/...  the AVX2 `_sums` GEMV's vector operations alone (AVX2 cached decode's floor)
//   lhs/...      activation quantization and LHS packing alone, with each row quantizer a
//                kernel of this CPU runs (the baseline quantize_row, or its ISA's)
// Counters: MACs/s (m·n·k per second), weight B/s (packed bytes per second). bench/summarize.py
// turns the JSON output into ratios.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceilings.h"
#include "cpu/profile.h"
#include "lowbit/lowbit.hpp"
#include "ops/lhs_pack.h"
#include "registry/registry.h"
#include "util/aligned.h"

extern "C" void openblas_set_num_threads(int);

namespace lowbit::bench {
namespace {

constexpr size_t kColdBytes = size_t(96) << 20;  // rotate over > 64 MiB of copies

struct Shape {
  int n, k;
};
const Shape kShapes[] = {{4096, 4096}, {6144, 4096}, {14336, 4096}, {4096, 14336}};
const int kMs[] = {1, 2, 3, 4, 8, 16, 64, 128};

// Quantized weights per (n, k, bits, group), generated once.
struct Quant {
  std::vector<int8_t> q;
  std::vector<float> s;
};
const Quant& quant(int n, int k, int bits, int group) {
  static std::map<std::string, std::unique_ptr<Quant>> cache;
  const std::string key = std::to_string(n) + "x" + std::to_string(k) + "b" + std::to_string(bits) +
                          "g" + std::to_string(group);
  auto& slot = cache[key];
  if (!slot) {
    slot = std::make_unique<Quant>();
    std::mt19937 rng(uint32_t(n * 31 + k + bits + group));
    const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
    slot->q.resize(size_t(n) * k);
    for (auto& v : slot->q) v = int8_t(lo + int(rng() % uint32_t(hi - lo + 1)));
    slot->s.resize(size_t(n) * (k / group));
    for (auto& v : slot->s) v = 0.001f + float(rng() % 1000) * 1e-5f;
  }
  return *slot;
}

// `copies` packings of the same weights (distinct buffers), for cold rotation.
const std::vector<PackedWeights>& packed(int n, int k, int bits, int group, const char* target,
                                         bool cold) {
  static std::map<std::string, std::vector<PackedWeights>> cache;
  const std::string key = std::to_string(n) + "x" + std::to_string(k) + "b" + std::to_string(bits) +
                          "g" + std::to_string(group) + target + (cold ? "c" : "h");
  auto& v = cache[key];
  if (v.empty()) {
    const Quant& qw = quant(n, k, bits, group);
    v.push_back(PackedWeights::pack(n, k, bits, group, qw.q.data(), qw.s.data(), nullptr, nullptr, target));
    const size_t copies = cold ? (kColdBytes + v[0].size() - 1) / v[0].size() : 1;
    while (v.size() < copies) v.push_back(PackedWeights::from_buffer(v[0].data(), v[0].size()));
  }
  return v;
}

std::vector<float> activations(int m, int k) {
  std::mt19937 rng(uint32_t(m + k));
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(size_t(m) * k);
  for (auto& v : x) v = d(rng);
  return x;
}

void set_counters(benchmark::State& st, double macs, double bytes) {
  st.counters["MACs/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["B/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
}

void run_lowbit(benchmark::State& st, int n, int k, int m, int threads, int bits, int group,
                const char* target, bool cold) {
  const std::vector<PackedWeights>& w = packed(n, k, bits, group, target, cold);
  const std::vector<float> x = activations(m, k);
  std::vector<float> y(size_t(m) * n);
  LinearOptions opt;
  opt.num_threads = threads;
  w[0].linear(m, x.data(), y.data(), opt);  // plan once, outside the timing
  size_t i = 0;
  for (auto _ : st) {
    w[i].linear(m, x.data(), y.data(), opt);
    benchmark::ClobberMemory();
    i = i + 1 == w.size() ? 0 : i + 1;
  }
  set_counters(st, double(m) * n * k, double(w[0].info().payload_bytes));
  st.SetLabel(w[0].info().layout);
}

void run_openblas(benchmark::State& st, int n, int k, int m, int threads) {
  static std::map<std::string, std::vector<float>> weights;
  auto& wf = weights[std::to_string(n) + "x" + std::to_string(k)];
  if (wf.empty()) {
    std::mt19937 rng(uint32_t(n + k));
    std::uniform_real_distribution<float> d(-0.1f, 0.1f);
    wf.resize(size_t(n) * k);
    for (auto& v : wf) v = d(rng);
  }
  const std::vector<float> x = activations(m, k);
  std::vector<float> y(size_t(m) * n);
  openblas_set_num_threads(threads);
  for (auto _ : st) {
    if (m == 1)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, wf.data(), k, x.data(), 1, 0.0f, y.data(), 1);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x.data(), k, wf.data(), k,
                  0.0f, y.data(), n);
    benchmark::ClobberMemory();
  }
  set_counters(st, double(m) * n * k, double(n) * k * 4);
}

#if defined(__x86_64__)
using StreamFn = uint64_t (*)(const uint8_t*, size_t, int);

// Reads as many bytes as the shape's 4-bit g32 payload.
void run_stream(benchmark::State& st, StreamFn fn, int n, int k, int shape, bool cold) {
  size_t bytes = packed(n, k, 4, 32, "", false)[0].info().payload_bytes;
  bytes = (bytes + 4095) / 4096 * 4096;
  const size_t copies = cold ? (kColdBytes + bytes - 1) / bytes : 1;
  static std::map<size_t, std::vector<AlignedBuffer>> cache;
  auto& bufs = cache[bytes * 2 + (cold ? 1 : 0)];
  while (bufs.size() < copies) {
    bufs.emplace_back(bytes);
    std::memset(bufs.back().data(), int(bufs.size()), bytes);
  }
  size_t i = 0;
  uint64_t sum = 0;
  for (auto _ : st) {
    sum += fn(bufs[i].data(), bytes, shape);
    i = i + 1 == copies ? 0 : i + 1;
  }
  benchmark::DoNotOptimize(sum);
  set_counters(st, 0.0, double(bytes));
}

void run_peak(benchmark::State& st, uint64_t (*fn)(int64_t), int64_t macs_per_iter) {
  const int64_t iters = 1 << 20;
  uint64_t sum = 0;
  for (auto _ : st) sum += fn(iters);
  benchmark::DoNotOptimize(sum);
  set_counters(st, double(iters) * double(macs_per_iter), 0.0);
}

#endif

// m rows of k activations: each row quantized alone (quantize), or the whole LHS packed for
// the kernel's tile (pack), the part of a call before its micro-kernels run.
void run_lhs(benchmark::State& st, LhsFormat f, RowQuantizeFn quantize, bool pack, int m, int k,
             int group) {
  const std::vector<float> x = activations(m, k);
  const size_t blocks = (size_t(m) + size_t(f.mr) - 1) / size_t(f.mr);
  AlignedBuffer out(blocks * lhs_block_layout(f, size_t(k), size_t(k / group)).block_bytes);
  for (auto _ : st) {
    if (pack) {
      pack_lhs(f, size_t(m), size_t(k), size_t(group), x.data(), size_t(k), out.data(), quantize);
    } else {
      for (int r = 0; r < m; ++r)
        benchmark::DoNotOptimize(quantize(x.data() + size_t(r) * k, size_t(k), reinterpret_cast<int8_t*>(out.data()) + size_t(r) * k));
    }
    benchmark::ClobberMemory();
  }
  st.counters["B/s"] = benchmark::Counter(double(m) * k * 4, benchmark::Counter::kIsIterationInvariantRate);
}

// lhs/...: per distinct row quantizer of the kernels this CPU runs, named after the first
// kernel using it, quantizing alone; per multi-row kernel, its whole LHS packing.
void register_lhs(const IsaSet& isa, const std::function<void(const std::string&, std::function<void(benchmark::State&)>)>& reg) {
  constexpr int kM = 128, kK = 4096, kGroup = 32;
  const std::string shape = "/m=" + std::to_string(kM) + "/k=" + std::to_string(kK) + "/g=" + std::to_string(kGroup);
  std::vector<RowQuantizeFn> seen = {quantize_row};
  reg("lhs/quantize/baseline" + shape, [=](benchmark::State& st) { run_lhs(st, {1, 1}, quantize_row, false, kM, kK, kGroup); });
  for (const KernelDesc& kd : default_registry().kernels()) {
    if (!kd.fn || !isa.contains(kd.requires)) continue;
    const RowQuantizeFn q = kd.quantize ? kd.quantize : quantize_row;
    if (std::find(seen.begin(), seen.end(), q) == seen.end()) {
      seen.push_back(q);
      reg(std::string("lhs/quantize/") + kd.name + shape,
          [=](benchmark::State& st) { run_lhs(st, {1, 1}, q, false, kM, kK, kGroup); });
    }
    if (kd.mr > 1)
      reg(std::string("lhs/pack/") + kd.name + shape,
          [=](benchmark::State& st) { run_lhs(st, kd.lhs, q, true, kM, kK, kGroup); });
  }
}

std::string shape_name(int n, int k, int m, int t, int bits, int group) {
  return "n=" + std::to_string(n) + "/k=" + std::to_string(k) + "/m=" + std::to_string(m) +
         "/t=" + std::to_string(t) + "/b=" + std::to_string(bits) + "/g=" + std::to_string(group);
}

void register_all() {
  const IsaSet isa = host_profile().isa;
  const bool avx2 = isa.contains({Isa::avx2, Isa::fma});
  const bool avx512 = isa.contains({Isa::avx512f, Isa::avx512bw, Isa::avx512vnni});
  auto reg = [](const std::string& name, std::function<void(benchmark::State&)> fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Unit(benchmark::kMicrosecond);
  };
  for (const Shape& s : kShapes)
    for (int m : kMs)
      for (int t : {1, 2}) {
        for (int group : {32, 128}) {
          reg("lowbit/" + shape_name(s.n, s.k, m, t, 4, group) + "/cold",
              [=](benchmark::State& st) { run_lowbit(st, s.n, s.k, m, t, 4, group, "", true); });
          if (m == 1 || m == 8 || m == 128)
            for (int bits : {2, 8})
              reg("lowbit/" + shape_name(s.n, s.k, m, t, bits, group) + "/cold",
                  [=](benchmark::State& st) { run_lowbit(st, s.n, s.k, m, t, bits, group, "", true); });
        }
        reg("openblas/" + shape_name(s.n, s.k, m, t, 32, 0),
            [=](benchmark::State& st) { run_openblas(st, s.n, s.k, m, t); });
      }
  for (int t : {1, 2})
    for (int group : {32, 128})
      reg("lowbit/" + shape_name(4096, 4096, 1, t, 4, group) + "/hot",
          [=](benchmark::State& st) { run_lowbit(st, 4096, 4096, 1, t, 4, group, "", false); });
  for (int m : {1, 8})
    reg("scalar/" + shape_name(4096, 4096, m, 1, 4, 32) + "/cold",
        [=](benchmark::State& st) { run_lowbit(st, 4096, 4096, m, 1, 4, 32, "portable", true); });
  register_lhs(isa, reg);
  // Streaming reads of each shape's 4-bit g32 payload (the decode ceiling).
#if defined(__x86_64__)
  for (const Shape& s : kShapes) {
    for (int shape = 0; shape < kStreamShapes; ++shape)
      for (bool cold : {true, false}) {
        if (!cold && !(s.n == 4096 && s.k == 4096)) continue;
        const std::string suffix = "/n=" + std::to_string(s.n) + "/k=" + std::to_string(s.k) +
                                   "/shape=" + std::to_string(shape) + (cold ? "/cold" : "/hot");
        if (avx2) reg("stream/avx2" + suffix, [=](benchmark::State& st) { run_stream(st, stream_avx2, s.n, s.k, shape, cold); });
        if (avx512) reg("stream/avx512" + suffix, [=](benchmark::State& st) { run_stream(st, stream_avx512, s.n, s.k, shape, cold); });
      }
  }
  if (avx2) reg("peak/avx2_vpmaddubsw", [](benchmark::State& st) { run_peak(st, dot_peak_avx2, kAvx2MacsPerIter); });
  if (avx2)
    reg("ceiling/avx2_sums_gemv_mix", [](benchmark::State& st) { run_peak(st, sums_gemv_mix_avx2, kSumsGemvMixMacsPerStep); });
  if (isa.contains({Isa::avxvnni}))
    reg("peak/avxvnni_vpdpbusd", [](benchmark::State& st) { run_peak(st, dot_peak_avxvnni, kAvxVnniMacsPerIter); });
  if (avx512)
    reg("peak/avx512vnni_vpdpbusd", [](benchmark::State& st) { run_peak(st, dot_peak_avx512vnni, kAvx512MacsPerIter); });
#endif
}

}  // namespace
}  // namespace lowbit::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  lowbit::bench::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
