#include "tune_measure.h"


#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <limits>
#include <numeric>

#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/lhs_pack.h"
#include "ops/linear.h"
#include "ops/thread_pool.h"
#include "select/plan.h"
#include "baselines.h"
#include "describe.h"
#include "timing.h"
#include "util/aligned.h"
#include "util/error.h"
#include "workload.h"

namespace lowbit::cli {

namespace {

constexpr double kCyclesPerNs = 3.0;  // the cost model's nominal clock (select/kernel_cost.h)
constexpr size_t KiB = 1024, MiB = 1024 * 1024;

// The fastest of `reps` timings: other processes on the machine only ever add time, and a
// fit needs what the code costs, not what the neighbours cost.
double fastest_of(int reps, const std::function<double()>& once) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < reps; ++r) best = std::min(best, once());
  return best;
}

// Packed weights of `n` columns made by packing a few panels and repeating them: a kernel takes
// as long whatever the values, and a 128 MiB buffer is ready in milliseconds.
struct TimedWeights {
  PackedGeometry geo;
  AlignedBuffer payload;
};
TimedWeights timed_weights(const LayoutDesc& l, int bits, int group, int k, int n) {
  const WeightProblem small{2 * l.nr, k, bits, group, false, false};
  const Workload w = make_workload(small, 0, uint64_t(bits * 131 + group));
  const PackedBuffer sb = pack_buffer(l, small, w.q.data(), w.scales.data(), nullptr, nullptr);
  WeightProblem big = small;
  big.n = n;
  TimedWeights t;
  t.geo = make_geometry(l, big, sb.header.scale_format);
  t.payload.resize(t.geo.payload_bytes);
  for (int p = 0; p < t.geo.panels; ++p) {
    const int from = p % sb.geo.panels;
    std::memcpy(t.payload.data() + size_t(p) * t.geo.panel_bytes,
                sb.payload() + size_t(from) * sb.geo.panel_bytes, t.geo.panel_bytes);
    if (t.geo.sum_block > 0)
      std::memcpy(t.payload.data() + t.geo.sums_entry(p, 0, 0), sb.payload() + sb.geo.sums_entry(from, 0, 0),
                  t.geo.sums_stride);
  }
  return t;
}

// `rows` activation rows packed for `kd`.
AlignedBuffer packed_lhs(const KernelDesc& kd, int rows, int k, int group) {
  const std::vector<float> x = random_floats(size_t(rows) * size_t(k), uint64_t(rows), 1.0f);
  const LhsBlockLayout bl = lhs_block_layout(kd.lhs, size_t(k), size_t(k / group));
  AlignedBuffer out(bl.block_bytes * size_t((rows + kd.lhs.mr - 1) / kd.lhs.mr));
  pack_lhs(kd.lhs, size_t(rows), size_t(k), size_t(group), x.data(), size_t(k), out.data());
  return out;
}

// One call of `kd` on `rows` rows and columns [c0, c0 + n).
void call_kernel(const KernelDesc& kd, const TimedWeights& w, int k, const uint8_t* lhs, int rows, int c0, int n,
                 float* y, uint32_t prefetch_bytes) {
  UKernelArgs a;
  a.prefetch_bytes = prefetch_bytes;
  a.m = size_t(rows);
  a.n = size_t(n);
  a.lhs = lhs;
  a.rhs = w.payload.data() + size_t(c0 / w.geo.nr) * w.geo.panel_bytes;
  a.sums = w.geo.sum_block > 0 ? w.payload.data() + w.geo.sums_entry(c0 / w.geo.nr, 0, 0) : nullptr;
  a.bias = nullptr;
  a.y = y;
  a.y_stride = size_t(n);
  a.clamp_min = -std::numeric_limits<float>::infinity();
  a.clamp_max = std::numeric_limits<float>::infinity();
  kd.fn(GemmShape{&w.geo, k}, a);
}

using Vec = uint64_t __attribute__((vector_size(16)));
volatile uint64_t g_sink;

// Reads `bytes` (a multiple of 64) with four independent 16-byte streams.
void read_all(const uint8_t* p, size_t bytes) {
  Vec a0{}, a1{}, a2{}, a3{};
  for (size_t i = 0; i + 64 <= bytes; i += 64) {
    Vec x0, x1, x2, x3;
    std::memcpy(&x0, p + i, 16);
    std::memcpy(&x1, p + i + 16, 16);
    std::memcpy(&x2, p + i + 32, 16);
    std::memcpy(&x3, p + i + 48, 16);
    a0 += x0;
    a1 += x1;
    a2 += x2;
    a3 += x3;
  }
  const Vec s = a0 + a1 + a2 + a3;
  g_sink = s[0] ^ s[1];
}

// Runs task(i) for i = 0..w-1 on a pool of w threads (inline for one) and returns the wall time.
double parallel_ns(int w, const std::function<void(size_t)>& task) {
  const double t0 = now_ns();
  run_tasks(pool_for_threads(w), size_t(w), task);
  return now_ns() - t0;
}

}  // namespace

void progress(const std::string& line) { std::fprintf(stderr, "lowbit tune: %s\n", line.c_str()); }

TuneBudget tune_budget(bool quick, bool smoke) {
  if (smoke) return {2e3, 1, {4, 8}, {32}, 4.0 * MiB, 4.0, false, 1, 2e6, true};
  if (quick) return {3e4, 5, {1, 2, 3, 4, 5, 6, 7, 8}, {32, 128}, 128.0 * MiB, std::sqrt(2.0), true, 3, 1e8, true};
  return {1e5, 9, {1, 2, 3, 4, 5, 6, 7, 8}, {32, 128}, 256.0 * MiB, std::pow(2.0, 0.25), true, 5, 2e8, true};
}

// Every (kernel, bits, group, rows, columns) to time, with its weights and activations.
struct KernelTimings::Impl {
  static constexpr int k = 1024;
  struct Config {
    size_t kernel;
    const TimedWeights* w;
    const AlignedBuffer* lhs;
    int rows;
    KernelSample s;
  };
  std::vector<const KernelDesc*> kds;
  TuneBudget b;
  std::vector<std::unique_ptr<TimedWeights>> weights;
  std::vector<std::unique_ptr<AlignedBuffer>> lhs;
  std::vector<Config> configs;
  std::vector<float> y;
  uint64_t seed = 0x9E3779B97F4A7C15ull;

  // Rounds over `order` (indices of configs), each in a new shuffled order, keeping each one's
  // fastest: a slow spell of the machine (a neighbour's build, a lower clock) lands on random
  // samples, not on all of one kernel, row count or bit width, where it would bend the
  // comparison the planner makes.
  void rounds(std::vector<size_t> order, const char* what) {
    for (int round = 0; round < b.reps; ++round) {
      progress(concat("kernels: ", what, "round ", round + 1, " of ", b.reps, " over ", order.size(), " calls"));
      for (size_t i = order.size(); i > 1; --i) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        std::swap(order[i - 1], order[size_t(seed % i)]);
      }
      for (size_t i : order) {
        Config& c = configs[i];
        const KernelDesc& kd = *kds[c.kernel];
        const double ns = mean_ns_per_call(
            [&] { call_kernel(kd, *c.w, k, c.lhs->data(), c.rows, 0, c.s.cols, y.data(), kd.prefetch_bytes); }, b.min_call_ns);
        c.s.cycles = std::min(c.s.cycles, ns * kCyclesPerNs);
      }
    }
  }
};

KernelTimings::KernelTimings(const std::vector<const KernelDesc*>& kds, const TuneBudget& b, size_t l2)
    : impl_(std::make_unique<Impl>()) {
  Impl& t = *impl_;
  t.kds = kds;
  t.b = b;
  const Registry& reg = default_registry();
  constexpr int k = Impl::k;
  int max_cols = 0, max_mr = 1;
  for (size_t ki = 0; ki < kds.size(); ++ki) {
    const KernelDesc& kd = *kds[ki];
    const LayoutDesc& l = *reg.layout(kd.layout_id);
    const KernelCost generic = Tuning().kernel_cost(reg, kd, host_profile()).cost;
    max_mr = std::max(max_mr, kd.mr);
    std::vector<int> rows;
    for (int r = 1; r <= kd.mr; ++r)
      if (kd.mr <= 4 || r == 1 || (kd.row_variants >> (r - 1) & 1u)) rows.push_back(r);
    const size_t lhs0 = t.lhs.size();
    for (int group : b.groups)
      for (int r : rows) t.lhs.push_back(std::make_unique<AlignedBuffer>(packed_lhs(kd, r, k, group)));
    for (int bits : b.bits) {
      if (!(kd.bits_mask >> bits & 1u)) continue;
      for (size_t gi = 0; gi < b.groups.size(); ++gi) {
        const int group = b.groups[gi];
        const PackedGeometry g1 = make_geometry(l, {l.nr, k, bits, group, false, false}, ScaleFormat::bf16);
        const double col_bytes = double(g1.panel_footprint()) / l.nr;
        const int small = l.nr;
        // The larger block: a quarter of L2, and about 100 µs of the kernel's generic estimate.
        const double est_per_col = compute_cycles(kd, generic, Uarch::unknown, {size_t(kd.mr), 1, k, size_t(group), bits});
        const double fit = std::min(double(l2) / 4 / col_bytes, 3e5 / std::max(est_per_col, 1e-9));
        const int big = std::max(16 * small, int(fit) / l.nr * l.nr);
        max_cols = std::max(max_cols, big);
        t.weights.push_back(std::make_unique<TimedWeights>(timed_weights(l, bits, group, k, big)));
        for (size_t ri = 0; ri < rows.size(); ++ri) {
          const int r = rows[ri];
          // Narrow calls (1..8 panels, at 4 bits) show the group of columns the kernel works
          // through; the others only need two sizes.
          std::vector<int> cols = {8 * small, big};
          if (bits == 4) cols.insert(cols.begin(), {small, 2 * small, 4 * small});
          for (int n : cols) {
            KernelSample s;
            s.bits = bits;
            s.rows = r;
            s.group = group;
            s.terms = block_terms(kd, {size_t(r), size_t(n), size_t(k), size_t(group), bits});
            s.cols = n;
            s.per_narrow_col = double(k) * effective_rows(kd, size_t(r), bits);
            s.fixed = double(kd.mr) * k / 16.0;  // the LHS re-read call_cycles charges
            s.cycles = std::numeric_limits<double>::infinity();
            t.configs.push_back({ki, t.weights.back().get(), t.lhs[lhs0 + gi * rows.size() + ri].get(), r, s});
          }
        }
      }
    }
  }
  t.y.resize(size_t(max_mr) * size_t(max_cols));
}

KernelTimings::~KernelTimings() = default;

void KernelTimings::time_all() {
  std::vector<size_t> order(impl_->configs.size());
  std::iota(order.begin(), order.end(), size_t(0));
  impl_->rounds(std::move(order), "");
}

void KernelTimings::retime(const std::vector<std::vector<size_t>>& which) {
  // samples()[kernel] lists that kernel's configs in order.
  std::vector<std::vector<size_t>> configs_of(impl_->kds.size());
  for (size_t i = 0; i < impl_->configs.size(); ++i) configs_of[impl_->configs[i].kernel].push_back(i);
  std::vector<size_t> order;
  for (size_t ki = 0; ki < which.size(); ++ki)
    for (size_t i : which[ki]) order.push_back(configs_of[ki][i]);
  if (!order.empty()) impl_->rounds(std::move(order), "again, ");
}

std::vector<std::vector<KernelSample>> KernelTimings::samples() const {
  std::vector<std::vector<KernelSample>> out(impl_->kds.size());
  for (const Impl::Config& c : impl_->configs) out[c.kernel].push_back(c.s);
  return out;
}

Sweep read_sweep(const TuneBudget& b) {
  Sweep s;
  AlignedBuffer buf(size_t(b.sweep_max_bytes));
  for (size_t i = 0; i < buf.size(); i += 4096) buf.data()[i] = uint8_t(i >> 12);
  for (double size = 64.0 * KiB; size <= b.sweep_max_bytes * 1.001; size *= b.sweep_step) {
    const size_t bytes = size_t(size) / (16 * KiB) * (16 * KiB);
    // Short timings, many of them: one that no other process interrupted is likely.
    const int passes = int(std::max(1.0, 4.0 * MiB / double(bytes)));
    read_all(buf.data(), bytes);  // warm
    const double ns = fastest_of(3 * b.reps, [&] {
      const double t0 = now_ns();
      for (int p = 0; p < passes; ++p) read_all(buf.data(), bytes);
      return now_ns() - t0;
    });
    s.sizes.push_back(double(bytes));
    s.bytes_per_cycle.push_back(double(bytes) * passes / (ns * kCyclesPerNs));
  }
  return s;
}

namespace {

// Bytes of weights that no cache holds: well over L3, and over the L2s of `threads` workers.
size_t dram_bytes(const CacheLevels& caches, int threads) {
  const size_t l2 = caches.l2 > 0 ? caches.l2 : 512 * KiB;
  return std::max<size_t>(64 * MiB, 4 * std::max(caches.l3, l2 * size_t(threads)));
}

}  // namespace

std::vector<PrefetchTiming> prefetch_timings(const KernelDesc& kd, const CacheLevels& caches, const TuneBudget& b) {
  constexpr int k = 4096, group = 32;
  // Two widths the kernel reads, a one-plane one and a two-plane one where it can (format/
  // layout.h: 4 and 6, or 2 and 3 for the 1-3-bit kernels): one distance serves every width, and
  // on Zen 4 the one that suits 4 bits (512 B) cost 6 bits 1.3x (docs/x86-kernels.md).
  std::vector<int> widths;
  for (int bits : {4, 6, 2, 3, 1, 5, 7, 8})
    if (widths.size() < 2 && (kd.bits_mask >> bits & 1u)) widths.push_back(bits);
  const LayoutDesc& l = *default_registry().layout(kd.layout_id);
  const double bytes = b.dram ? double(dram_bytes(caches, 1)) : double(MiB);
  const uint32_t distances[] = {0, 256, 512, 1024, 2048, 4096, 8192};
  std::vector<TimedWeights> tw;
  std::vector<int> cols;
  for (int bits : widths) {
    const double col_bytes = double(make_geometry(l, {l.nr, k, bits, group, false, false}, ScaleFormat::bf16).panel_footprint()) / l.nr;
    cols.push_back(std::max(l.nr, int(bytes / col_bytes) / l.nr * l.nr));
    tw.push_back(timed_weights(l, bits, group, k, cols.back()));
  }
  const AlignedBuffer lhs = packed_lhs(kd, 1, k, group);
  std::vector<float> y(static_cast<size_t>(*std::max_element(cols.begin(), cols.end())));
  std::vector<std::function<void()>> calls;
  for (uint32_t d : distances)
    for (size_t w = 0; w < widths.size(); ++w)
      calls.push_back([&, d, w] { call_kernel(kd, tw[w], k, lhs.data(), 1, 0, cols[w], y.data(), d); });
  const std::vector<double> ns = interleaved_medians(calls, 2 * b.reps + 1);
  // Each distance's geomean over the widths: every width's time counts alike.
  std::vector<PrefetchTiming> out;
  for (size_t i = 0; i < std::size(distances); ++i) {
    double log_sum = 0.0;
    for (size_t w = 0; w < widths.size(); ++w) log_sum += std::log(ns[i * widths.size() + w]);
    out.push_back({distances[i], std::exp(log_sum / double(widths.size()))});
  }
  return out;
}

BandwidthTable level_bandwidth(const KernelDesc* kd, const CacheLevels& caches, int threads, const TuneBudget& b,
                               uint32_t prefetch_bytes) {
  BandwidthTable t;
  const size_t l2 = caches.l2 > 0 ? caches.l2 : 512 * KiB;
  const size_t l3 = caches.l3;
  const size_t dram_total = dram_bytes(caches, threads);
  constexpr int k = 4096, bits = 4, group = 32;
  const LayoutDesc* l = kd ? default_registry().layout(kd->layout_id) : nullptr;
  const double col_bytes = l ? double(make_geometry(*l, {l->nr, k, bits, group, false, false}, ScaleFormat::bf16).panel_footprint()) / l->nr : 1.0;
  struct Level {
    std::vector<double>* out;
    double total_bytes;  // for w workers: per worker × w, or shared
    bool per_worker;
    int passes;
  };
  const Level levels[] = {{&t.l2, double(l2) / 4, true, 32},
                          {&t.l3, double(l3) / 2, false, 4},
                          {&t.dram, double(dram_total), false, 1}};
  for (const Level& lv : levels) {
    if (lv.out == &t.l3 && l3 == 0) continue;
    if (lv.out == &t.dram && !b.dram) continue;
    for (int w = 1; w <= threads; ++w) {
      const double total = lv.per_worker ? lv.total_bytes * w : lv.total_bytes;
      double ns = 0.0, bytes = 0.0;
      if (kd == nullptr) {
        const size_t region = size_t(total / w) / 64 * 64;
        AlignedBuffer buf(region * size_t(w));
        for (size_t i = 0; i < buf.size(); i += 4096) buf.data()[i] = 1;
        const std::function<void(size_t)> task = [&](size_t i) {
          for (int p = 0; p < lv.passes; ++p) read_all(buf.data() + i * region, region);
        };
        parallel_ns(w, task);  // warm
        ns = fastest_of(lv.passes > 1 ? 3 * b.reps : b.reps, [&] { return parallel_ns(w, task); });
        bytes = double(region) * w * lv.passes;
      } else {
        const int cols = std::max(l->nr, int(total / w / col_bytes) / l->nr * l->nr);
        const TimedWeights tw = timed_weights(*l, bits, group, k, cols * w);
        const AlignedBuffer lhs = packed_lhs(*kd, 1, k, group);
        std::vector<std::vector<float>> y(static_cast<size_t>(w), std::vector<float>(static_cast<size_t>(cols)));
        const std::function<void(size_t)> task = [&](size_t i) {
          for (int p = 0; p < lv.passes; ++p)
            call_kernel(*kd, tw, k, lhs.data(), 1, int(i) * cols, cols, y[i].data(), prefetch_bytes);
        };
        parallel_ns(w, task);
        ns = fastest_of(lv.passes > 1 ? 3 * b.reps : b.reps, [&] { return parallel_ns(w, task); });
        bytes = double(tw.geo.panel_footprint()) * tw.geo.panels * lv.passes;
      }
      const double per_worker = bytes / (w * ns * kCyclesPerNs);
      // More workers never read less in all: when they do, the others were descheduled (a
      // busy machine), and what was measured is not the memory's.
      if (w > 1 && per_worker * w < 0.9 * lv.out->back() * (w - 1)) {
        progress(concat("  ", w, " workers read less than ", w - 1, " (the machine is busy?): not recorded"));
        break;
      }
      lv.out->push_back(per_worker);
    }
  }
  return t;
}

Threading threading_cost(int threads, const TuneBudget& b) {
  Threading th;
  th.dispatch_cycles.push_back(0.0);  // one worker runs inline
  std::vector<double> per_task;
  for (int w = 2; w <= threads; ++w) {
    ThreadPool* const pool = pool_for_threads(w);
    const std::function<void(size_t)> nothing = [](size_t) {};
    std::vector<std::vector<double>> a;
    std::vector<double> y, wt;
    for (int tasks : {w, 16 * w, 256 * w}) {
      auto call = [&] { run_tasks(pool, size_t(tasks), nothing); };
      call();
      const double ns = fastest_of(3 * b.reps, [&] {
        const double t0 = now_ns();
        call();
        return now_ns() - t0;
      });
      a.push_back({1.0, double(tasks) / w});
      y.push_back(ns * kCyclesPerNs);
      wt.push_back(1.0 / (ns * kCyclesPerNs));
    }
    const std::vector<double> x = least_squares(a, y, wt, {true, true});
    if (x[0] > 3e5) {  // 100 µs to wake a worker: it was not scheduled, not the pool's cost
      progress(concat("  a call of ", w, " workers took ", fmt(x[0] / kCyclesPerNs * 1e-3, 0),
                      " µs to start (the machine is busy?): not recorded"));
      break;
    }
    th.dispatch_cycles.push_back(x[0]);
    per_task.push_back(x[1]);
  }
  if (!per_task.empty()) th.task_cycles = std::accumulate(per_task.begin(), per_task.end(), 0.0) / per_task.size();
  return th;
}

std::vector<ShapeCase> measure_shapes(const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& ms,
                                      int threads, int bits, int group, const TuneBudget& b,
                                      std::vector<PlanOverride>* overrides) {
  std::vector<ShapeCase> cases;
  const Registry& reg = default_registry();
  const CpuProfile& prof = host_profile();
  const int max_m = *std::max_element(ms.begin(), ms.end());
  // What an override's second look needs: its shape's weights and activations, both plans.
  struct Winner {
    size_t shape, case_index;
    int m, t, reps;
    ExecPlan chosen, best;
    PlanOverride o;
  };
  struct ShapeData {
    PackedWeights pw;
    std::vector<float> x;
  };
  std::vector<ShapeData> data;
  data.reserve(shapes.size());  // the timed calls below refer to its elements
  std::vector<Winner> winners;
  int max_n = 0;
  for (const auto& s : shapes) max_n = std::max(max_n, s.first);
  std::vector<float> y(size_t(max_m) * size_t(max_n));
  auto timed = [&](const ShapeData& d, const std::vector<const ExecPlan*>& plans, int m, int t) {
    ThreadPool* const pool = pool_for_threads(t);
    std::vector<std::function<void()>> fns;
    for (const ExecPlan* p : plans)
      fns.push_back([&y, &prof, &d, p, m, pool] {
        execute_plan(*p, prof, d.pw.impl().buf, m, d.x.data(), y.data(), {}, pool, {});
      });
    return fns;
  };
  size_t done = 0;
  for (const auto& [n, k] : shapes) {
    Workload wl = make_workload({n, k, bits, group, false, false}, max_m, 11);
    data.push_back({PackedWeights::pack(n, k, bits, group, wl.q.data(), wl.scales.data(), nullptr, nullptr), std::move(wl.x)});
    const ShapeData& d = data.back();
    const PackedBuffer& buf = d.pw.impl().buf;
    for (int m : ms)
      for (int t = 1; t <= threads; ++t) {
        progress(concat("shapes: [", ++done, "/", shapes.size() * ms.size() * size_t(threads), "] ", n, "x", k,
                        " ", bits, "-bit g", group, " m=", m, " threads=", t));
        const ExecPlan chosen = make_plan(reg, prof, buf.header, m, t);
        std::vector<PlanOption> options = plan_options(reg, prof, buf.header, m, t);
        std::sort(options.begin(), options.end(), [](const PlanOption& x, const PlanOption& z) {
          return x.plan.per_uarch[0].est_ns < z.plan.per_uarch[0].est_ns;
        });
        // The model's choice first, then the plan it ranks best of each other set of kernels (a
        // model wrong about a kind of plan ranks all its tilings low: three GEMV passes over
        // 14336x4096 ranked four tilings of themselves above the 3-row GEMM, which ran 1.3x
        // faster), then the next it ranks, four in all at least.
        std::vector<const PlanOption*> cands;
        for (const PlanOption& o : options)
          if (same_plan(o.plan, chosen)) cands.push_back(&o);
        if (cands.empty()) continue;
        auto taken = [&](const PlanOption& o, bool kernels) {
          return std::any_of(cands.begin(), cands.end(), [&](const PlanOption* c) {
            return kernels ? same_kernels(c->plan, o.plan) : c == &o;
          });
        };
        for (const PlanOption& o : options)
          if (!taken(o, true)) cands.push_back(&o);
        for (const PlanOption& o : options)
          if (cands.size() < 4 && !taken(o, false)) cands.push_back(&o);
        std::vector<const ExecPlan*> plans;
        for (const PlanOption* o : cands) plans.push_back(&o->plan);
        const std::vector<std::function<void()>> fns = timed(d, plans, m, t);
        const double one = mean_ns_per_call(fns[0], 0.0);
        const int reps = std::clamp(int(b.shape_case_ns / (one * double(fns.size()))), b.shape_reps, 41);
        std::vector<double> times = interleaved_medians(fns, reps);
        size_t best = size_t(std::min_element(times.begin(), times.end()) - times.begin());
        double speedup = times[0] / times[best];
        if (best != 0 && speedup >= 1.03) {  // confirm head to head before believing it
          const std::vector<double> again = interleaved_medians({fns[0], fns[best]}, reps + 2);
          speedup = again[0] / again[1];
        }
        const bool record = best != 0 && speedup >= 1.03;
        if (record) {
          PlanOverride o;
          o.layout = buf.header.layout->name;
          o.n = n;
          o.k = k;
          o.bits = bits;
          o.group = group;
          o.m = m;
          o.threads = t;
          const UarchPlan& up = cands[best]->plan.per_uarch[0];
          for (int s = 0; s < up.num_segments; ++s) o.segments.push_back({up.seg[s].kernel->name, up.seg[s].rows});
          o.row_tile = cands[best]->plan.row_tile;
          o.col_tile = cands[best]->plan.col_tile;
          o.speedup = std::min(speedup, 100.0);  // what was seen; a preempted run can exaggerate it
          winners.push_back({data.size() - 1, cases.size(), m, t, reps, chosen, cands[best]->plan, o});
        }
        cases.push_back({n, k, bits, group, m, t, cands[0]->name, cands[best]->name, speedup, record, 0.0});
      }
  }
  // A plan that won in one moment may owe it to what the caches held then (three GEMV passes
  // over tiles re-read from L2 won a tune and lost 1.6x minutes later): every winner is timed
  // again after all the other cases ran, and recorded only if it holds.
  for (size_t i = 0; i < winners.size(); ++i) {
    Winner& w = winners[i];
    progress(concat("shapes: override [", i + 1, "/", winners.size(), "] timed again: ", w.o.n, "x", w.o.k, " m=", w.m,
                    " threads=", w.t));
    const std::vector<double> again = interleaved_medians(timed(data[w.shape], {&w.chosen, &w.best}, w.m, w.t), w.reps + 2);
    ShapeCase& c = cases[w.case_index];
    c.speedup_again = again[0] / again[1];
    c.override_recorded = c.speedup_again >= 1.03;
    if (!c.override_recorded) continue;
    w.o.speedup = std::min({w.o.speedup, c.speedup_again, 100.0});
    overrides->push_back(w.o);
  }
  return cases;
}

}  // namespace lowbit::cli
