#include "select/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "select/cost_model.h"
#include "util/error.h"

namespace lowbit {

namespace {

constexpr double kGHz = 3.0;  // cycles -> ns for reporting; ranking does not depend on it

std::string isa_list(IsaSet s) { return s.to_string(); }

struct Machine {
  Bandwidth bw;
  size_t l2, l3;
  int threads;
};

struct Mix {
  int num = 0;
  Segment seg[kMaxSegments];
  const KernelCost* cost[kMaxSegments] = {};  // of seg[i].kernel
};

// Per-core bandwidth at which a task's first pass over its columns streams, given where the
// whole payload lives; DRAM does not scale with cores like caches do (a second core adds about
// a quarter), so `workers` share it.
double first_pass_bandwidth(const Machine& mc, size_t payload_bytes, int workers) {
  if (payload_bytes <= mc.l2 / 2) return mc.bw.l2;
  if (payload_bytes <= mc.l3) return mc.bw.l3;
  return mc.bw.dram * (workers > 1 ? 1.25 : 1.0) / workers;
}

// Cycles of one task: the rows [r0, r1) of `mix` over `cols` columns. Within a task every LHS
// block after the first reads the column tile again: from L2 or L3 while the tiles of all
// workers fit there (prefetched, hidden behind the arithmetic), from DRAM otherwise (measured:
// not hidden). Half of L3 counts: the LHS, the outputs and the neighbours use the rest.
struct TaskModel {
  double per_col;   // compute cycles per column
  double per_call;  // cycles per column tile (kernel calls, LHS re-reads)
  int blocks;
};
TaskModel task_model(const Mix& mix, Uarch u, const PackedGeometry& g, int r0, int r1) {
  TaskModel t{0.0, 0.0, 0};
  const size_t k = size_t(g.groups) * g.group_size;
  for (int i = 0; i < mix.num; ++i) {
    const Segment& s = mix.seg[i];
    const int mr = s.kernel->mr;
    const int lo = std::max(r0, s.row_begin), hi = std::min(r1, s.row_begin + s.rows);
    if (hi <= lo) continue;
    // Whole blocks cost the same: one estimate for them, one for a partial last block.
    const int full = (hi - lo) / mr, rest = (hi - lo) % mr;
    const KernelCost& c = *mix.cost[i];
    t.per_col += full * compute_cycles(*s.kernel, c, u, {size_t(mr), 1, k, size_t(g.group_size), g.bits});
    if (rest) t.per_col += compute_cycles(*s.kernel, c, u, {size_t(rest), 1, k, size_t(g.group_size), g.bits});
    t.blocks += full + (rest ? 1 : 0);
    t.per_call += (full + (rest ? 1 : 0)) * call_cycles(c, u, size_t(mr) * k);
  }
  return t;
}

// Estimated nanoseconds for running `mix` over all m rows with the given tiling: each task's
// cycles, the tasks list-scheduled in pthreadpool's order on the workers, plus half the
// largest task (a worker that starts late or is interrupted can only be covered by others
// when tasks are small).
double estimate(const Mix& mix, Uarch u, const PackedGeometry& g, const Machine& mc, int m,
                int col_tile, int row_tile) {
  const int col_tiles = (g.n_padded + col_tile - 1) / col_tile;
  const int row_tiles = (m + row_tile - 1) / row_tile;
  const size_t tasks = size_t(col_tiles) * size_t(row_tiles);
  const int workers = int(std::min<size_t>(size_t(mc.threads), tasks));
  const double payload = double(g.panel_bytes) * g.panels;
  const double col_bytes = double(g.panel_bytes) / g.nr;
  const double first_bw = first_pass_bandwidth(mc, size_t(payload), workers);
  const double tile_bytes = col_bytes * col_tile;
  const bool reread_cached = tile_bytes * workers <= double(mc.l3) / 2;
  const double reread_bw = tile_bytes <= double(mc.l2) / 2 ? mc.bw.l2 : reread_cached ? mc.bw.l3 : first_bw;
  constexpr double kTaskCycles = 500.0;  // dispatch of one pthreadpool task
  auto task_cycles = [&](const TaskModel& t, int cols) {
    const double compute = t.per_col * cols + t.per_call;
    const double first = col_bytes * cols / first_bw;
    const double reread = col_bytes * cols * std::max(0, t.blocks - 1) / reread_bw;
    return kTaskCycles + (reread_cached ? std::max(compute, first + reread) : std::max(compute, first) + reread);
  };
  // pthreadpool hands each worker an equal contiguous range of tasks and lets it steal from
  // the others' ends: greedy list scheduling in task order is close to that.
  double load[64] = {};
  const int slots = std::min(workers, 64);
  double total = 0.0, largest = 0.0, arithmetic = 0.0;
  for (int rt = 0; rt < row_tiles; ++rt) {
    const TaskModel tm = task_model(mix, u, g, rt * row_tile, std::min(m, (rt + 1) * row_tile));
    const double full = task_cycles(tm, col_tile);
    const double last = task_cycles(tm, g.n_padded - (col_tiles - 1) * col_tile);
    largest = std::max({largest, full, last});
    arithmetic += tm.per_col * g.n_padded;
    total += full * (col_tiles - 1) + last;
    if (tasks > size_t(64 * slots)) continue;  // many small tasks: total / workers is exact enough
    for (int ct = 0; ct < col_tiles; ++ct) {
      double* w = std::min_element(load, load + slots);
      *w += ct + 1 < col_tiles ? full : last;
    }
  }
  const double makespan = tasks > size_t(64 * slots) ? total / workers : *std::max_element(load, load + slots);
  const double straggle = workers > 1 ? 0.5 * largest : 0.0;
  // Ties go to the candidate that computes less (AVX-VNNI over AVX2 when both are
  // memory-bound): it leaves more slack, and wins whenever the cache assumption is off.
  return (makespan + straggle + 1e-3 * arithmetic / workers) / kGHz;
}

std::string mix_name(const Mix& mix) {
  std::string s;
  for (int i = 0; i < mix.num; ++i) {
    if (i) s += " + ";
    s += mix.seg[i].kernel->name;
    s += " x" + std::to_string(mix.seg[i].rows) + " rows";
  }
  return s;
}

// A kernel that can run the weights, with its cost.
struct Eligible {
  const KernelDesc* kd;
  Tuning::KernelCostFrom cost;
};

std::vector<Mix> candidate_mixes(const std::vector<Eligible>& ks, int m) {
  std::vector<Mix> out;
  for (const Eligible& k : ks) {
    Mix mx;
    mx.num = 1;
    mx.seg[0] = {k.kd, 0, m};
    mx.cost[0] = &k.cost.cost;
    out.push_back(mx);
  }
  // A big tile for the full blocks, a smaller one for the remainder.
  for (const Eligible& big : ks)
    for (const Eligible& small : ks) {
      if (small.kd->mr >= big.kd->mr) continue;
      const int full = m / big.kd->mr * big.kd->mr;
      if (full == 0 || full == m) continue;
      Mix mx;
      mx.num = 2;
      mx.seg[0] = {big.kd, 0, full};
      mx.seg[1] = {small.kd, full, m - full};
      mx.cost[0] = &big.cost.cost;
      mx.cost[1] = &small.cost.cost;
      out.push_back(mx);
    }
  return out;
}

}  // namespace

std::string kernel_rejection(const KernelDesc& kd, const LayoutDesc& layout,
                             const WeightProblem& p, IsaSet isa, bool require_code) {
  if (kd.layout_id != layout.id)
    return concat("layout mismatch: reads layout ", kd.layout_id, ", weights are ", layout.name);
  if (!isa.contains(kd.requires))
    return "missing ISA: " + isa_list(kd.requires.missing_from(isa));
  if (require_code && kd.fn == nullptr) return "not built for this architecture";
  if (!(kd.bits_mask & (1u << p.bits))) return concat("no ", p.bits, "-bit weights");
  if (p.has_zeros && !kd.zeros) return "no zero points";
  if (p.has_bias && !kd.bias) return "no bias";
  return {};
}

namespace {

// Everything the planner may choose from, for one (weights, m, threads, profile).
struct PlanSpace {
  PackedGeometry g;
  Machine mc;
  std::vector<Eligible> eligible;  // the mixes point into it
  std::vector<Mix> mixes;
  std::vector<std::pair<int, int>> tilings;  // (row_tile, col_tile)
};

PlanSpace plan_space(const Registry& reg, const CpuProfile& prof, const PackedHeader& h, int m,
                     int threads, PlanExplanation* explain, bool require_code, const Tuning& tuning) {
  const LayoutDesc& layout = *h.layout;
  PlanSpace sp{make_geometry(layout, h.problem, h.scale_format),
               Machine{core_bandwidth(prof.arch), prof.caches.l2,
                       std::max(prof.caches.l3, prof.caches.l2), threads},
               {}, {}, {}};
  std::vector<Eligible>& eligible = sp.eligible;
  std::string why_not;
  for (const KernelDesc& kd : reg.kernels()) {
    const std::string r = kernel_rejection(kd, layout, h.problem, prof.isa, require_code);
    if (r.empty()) eligible.push_back({&kd, tuning.kernel_cost(reg, kd)});
    else if (kd.layout_id == layout.id && why_not.empty()) why_not = r;
    if (explain)
      explain->kernels.push_back({kd.name, r.empty(), r, 0.0, r.empty() ? eligible.back().cost.source : ""});
  }
  if (eligible.empty())
    fail(Status::unsupported, "no kernel on this CPU (", isa_list(prof.isa),
         ") can run layout ", layout.name, " (packed for ", arch_name(layout.arch), " ",
         isa_list(layout.isa), ")", why_not.empty() ? "" : ": ", why_not,
         "; repack the weights for this CPU");
  sp.mixes = candidate_mixes(eligible, m);
  // Tiling is shared by all uarchs: rows in multiples of every mr used, columns in nr; at most
  // 32 column tiles per thread (smaller tiles only add per-call overhead).
  int lcm_mr = 1;
  for (const Eligible& e : eligible) lcm_mr = std::lcm(lcm_mr, e.kd->mr);
  const int rows_all = (m + lcm_mr - 1) / lcm_mr * lcm_mr;
  const int rows_split = std::max(lcm_mr, (rows_all / threads + lcm_mr - 1) / lcm_mr * lcm_mr);
  const PackedGeometry& g = sp.g;
  for (int ct = g.nr;; ct *= 2) {
    const int col_tile = std::min(ct, g.n_padded);
    if ((g.n_padded + col_tile - 1) / col_tile <= 32 * threads) {
      sp.tilings.push_back({rows_all, col_tile});
      if (rows_split != rows_all) sp.tilings.push_back({rows_split, col_tile});
    }
    if (ct >= g.n_padded) break;
  }
  return sp;
}

UarchPlan uarch_plan(const Mix& mx, Uarch u, double est) {
  UarchPlan up;
  up.uarch = u;
  up.est_ns = est;
  up.num_segments = mx.num;
  for (int i = 0; i < mx.num; ++i) up.seg[i] = mx.seg[i];
  return up;
}

ExecPlan plan_shell(const CpuProfile& prof, int m, int threads) {
  ExecPlan plan;
  plan.key = plan_key(m, threads);
  plan.m = m;
  plan.threads = threads;
  plan.num_uarchs = int(std::min<size_t>(std::max<size_t>(prof.uarchs.size(), 1), kMaxUarchs));
  for (int u = 0; u < plan.num_uarchs; ++u)
    plan.per_uarch[u].uarch = prof.uarchs.empty() ? Uarch::unknown : prof.uarchs[size_t(u)];
  return plan;
}

}  // namespace

ExecPlan make_plan(const Registry& reg, const CpuProfile& prof, const PackedHeader& h, int m,
                   int threads, PlanExplanation* explain, bool require_code, const Tuning* tuning) {
  const std::shared_ptr<const Tuning> active = tuning ? nullptr : active_tuning();
  const PlanSpace sp = plan_space(reg, prof, h, m, threads, explain, require_code, tuning ? *tuning : *active);
  ExecPlan plan = plan_shell(prof, m, threads);
  // Per tiling, each uarch takes its cheapest mix; the tiling with the lowest sum wins.
  double best_total = std::numeric_limits<double>::infinity();
  for (const auto& [row_tile, col_tile] : sp.tilings) {
    double total = 0.0;
    UarchPlan ups[kMaxUarchs];
    for (int u = 0; u < plan.num_uarchs; ++u) {
      const Uarch ua = plan.per_uarch[u].uarch;
      ups[u].est_ns = std::numeric_limits<double>::infinity();
      for (const Mix& mx : sp.mixes) {
        const double t = estimate(mx, ua, sp.g, sp.mc, m, col_tile, row_tile);
        if (t < ups[u].est_ns) ups[u] = uarch_plan(mx, ua, t);
      }
      total += ups[u].est_ns;
    }
    if (total < best_total) {
      best_total = total;
      plan.col_tile = col_tile;
      plan.row_tile = row_tile;
      for (int u = 0; u < plan.num_uarchs; ++u) plan.per_uarch[u] = ups[u];
    }
  }
  if (explain) {
    const Uarch u0 = plan.per_uarch[0].uarch;
    for (Candidate& c : explain->kernels) {
      if (!c.eligible) continue;
      for (const Mix& mx : sp.mixes)
        if (mx.num == 1 && c.name == mx.seg[0].kernel->name)
          c.cost_ns = estimate(mx, u0, sp.g, sp.mc, m, plan.col_tile, plan.row_tile);
    }
    for (const Mix& mx : sp.mixes)
      explain->mixes.push_back(
          {mix_name(mx), true, "", estimate(mx, u0, sp.g, sp.mc, m, plan.col_tile, plan.row_tile), ""});
    Mix win;
    win.num = plan.per_uarch[0].num_segments;
    for (int i = 0; i < win.num; ++i) win.seg[i] = plan.per_uarch[0].seg[i];
    explain->winner = mix_name(win);
  }
  return plan;
}

std::vector<PlanOption> plan_options(const Registry& reg, const CpuProfile& prof,
                                     const PackedHeader& h, int m, int threads, const Tuning* tuning) {
  const std::shared_ptr<const Tuning> active = tuning ? nullptr : active_tuning();
  const PlanSpace sp = plan_space(reg, prof, h, m, threads, nullptr, true, tuning ? *tuning : *active);
  std::vector<PlanOption> out;
  for (const auto& [row_tile, col_tile] : sp.tilings)
    for (const Mix& mx : sp.mixes) {
      PlanOption o{plan_shell(prof, m, threads), ""};
      o.plan.row_tile = row_tile;
      o.plan.col_tile = col_tile;
      for (int u = 0; u < o.plan.num_uarchs; ++u)
        o.plan.per_uarch[u] = uarch_plan(mx, o.plan.per_uarch[u].uarch,
                                         estimate(mx, o.plan.per_uarch[u].uarch, sp.g, sp.mc, m, col_tile, row_tile));
      o.name = mix_name(mx) + " | tile " + std::to_string(row_tile) + "x" + std::to_string(col_tile);
      out.push_back(o);
    }
  return out;
}

PlanCache::PlanCache() {
  for (auto& s : slots_) s.store(nullptr, std::memory_order_relaxed);
}

PlanCache::~PlanCache() {
  for (auto& s : slots_) delete s.load(std::memory_order_relaxed);
}

const ExecPlan* PlanCache::find(uint64_t key) const {
  const size_t start = size_t(key * 0x9E3779B97F4A7C15ull >> 58);  // 6 bits: kSlots = 64
  for (size_t i = 0; i < kSlots; ++i) {
    const ExecPlan* p = slots_[(start + i) % kSlots].load(std::memory_order_acquire);
    if (p == nullptr) return nullptr;
    if (p->key == key) return p;
  }
  return nullptr;
}

const ExecPlan* PlanCache::insert(const ExecPlan& plan) {
  std::lock_guard<std::mutex> lock(insert_mutex_);
  const size_t start = size_t(plan.key * 0x9E3779B97F4A7C15ull >> 58);
  for (size_t i = 0; i < kSlots; ++i) {
    auto& slot = slots_[(start + i) % kSlots];
    const ExecPlan* p = slot.load(std::memory_order_relaxed);
    if (p != nullptr && p->key == plan.key) return p;
    if (p == nullptr) {
      auto* copy = new ExecPlan(plan);
      slot.store(copy, std::memory_order_release);
      return copy;
    }
  }
  return nullptr;
}

}  // namespace lowbit
