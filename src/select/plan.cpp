#include "select/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "format/layouts.h"
#include "format/lhs_layout.h"
#include "select/cost_model.h"
#include "util/error.h"

namespace lowbit {

namespace {

constexpr double kGHz = 3.0;  // cycles -> ns for reporting; ranking does not depend on it

std::string isa_list(IsaSet s) { return s.to_string(); }

struct Machine {
  MachineNumbers nums;  // caches, measured bandwidth and threading (Tuning::machine)
  Bandwidth generic;    // per-core bandwidth when nothing was measured
  int threads;
  double working_set;   // make_plan's: bytes read in turn with the weights (0: these alone)
};

// A kernel that can run the weights, with its cost.
struct Eligible {
  const KernelDesc* kd;
  Tuning::KernelCostFrom cost;
  Tuning::PrefetchFrom prefetch;
};

struct Mix {
  int num = 0;
  Segment seg[kMaxSegments];
  const Tuning::KernelCostFrom* cost[kMaxSegments] = {};  // of seg[i].kernel
};

enum class Level { l2, l3, dram };

// Bytes per cycle that each of `workers` workers reads from `level`: as `kernel` reads when
// that was measured (which counts whatever it skips or prefetches), else as the machine's
// memory reads, else the generic per-core figures (DRAM does not scale with cores like caches
// do: a second core adds about a quarter). The memory's rates are divided by `read_share`, the
// share of the bytes counted that the kernel reads (a GEMV that skips the column sums reads a
// fifth less at 4 bits, group 32).
double bandwidth(const Machine& mc, const BandwidthTable* kernel, Level level, int workers, double read_share = 1.0) {
  const size_t w = size_t(std::max(workers, 1));
  for (const BandwidthTable* t : {kernel, mc.nums.measured}) {
    if (t == nullptr) continue;
    const std::vector<double>& v = level == Level::l2 ? t->l2 : level == Level::l3 ? t->l3 : t->dram;
    if (v.empty()) continue;
    const double scale = t == kernel ? 1.0 : 1.0 / read_share;
    if (w <= v.size()) return v[w - 1] * scale;
    // Beyond the workers measured: caches are per core, DRAM is shared.
    return (level == Level::dram ? v.back() * double(v.size()) / double(w) : v.back()) * scale;
  }
  if (level == Level::l2) return mc.generic.l2 / read_share;
  if (level == Level::l3) return mc.generic.l3 / read_share;
  return mc.generic.dram * (w > 1 ? 1.25 : 1.0) / double(w) / read_share;
}

// Bytes per cycle of the first pass over `bytes` of weights, read as `kernel` reads. Between the
// L3 that was measured and the one the CPU reports (mc.nums.l3_upto), a share of the bytes still
// comes from L3, falling linearly to none: a shared L3 measured while neighbours used part of
// it is larger at other times, and a hard step there would rank kernels by their DRAM rate alone
// where their L3 rate decides.
double stream_bandwidth(const Machine& mc, const BandwidthTable* kernel, double bytes, int workers, double read_share) {
  if (bytes <= double(mc.nums.l2) / 2) return bandwidth(mc, kernel, Level::l2, workers, read_share);
  const double lo = double(mc.nums.l3), hi = double(mc.nums.l3_upto);
  const double cached = bytes <= lo ? 1.0 : bytes >= hi ? 0.0 : (hi - bytes) / (hi - lo);
  double per_byte = 0.0;
  if (cached > 0.0) per_byte += cached / bandwidth(mc, kernel, Level::l3, workers, read_share);
  if (cached < 1.0) per_byte += (1.0 - cached) / bandwidth(mc, kernel, Level::dram, workers, read_share);
  return 1.0 / per_byte;
}

// Cycles of one task: the rows [r0, r1) of `mix` over `cols` columns. Within a task every LHS
// block after the first reads the column tile again: from L2 or L3 while the tiles of all
// workers fit there (prefetched, hidden behind the arithmetic), from DRAM otherwise (measured:
// not hidden). Half of L3 counts: the LHS, the outputs and the neighbours use the rest.
struct TaskModel {
  double per_col;   // compute cycles per column
  double per_call;  // cycles per column tile (kernel calls, LHS re-reads)
  int blocks;
  // Per segment: the extra cycles per column past the kernel's last whole group of columns.
  struct Narrow {
    int wide_cols = 0;
    double per_col = 0.0;
  } narrow[kMaxSegments];
  double compute(int cols) const {
    double c = per_col * cols + per_call;
    for (const Narrow& n : narrow)
      if (n.per_col != 0.0) c += n.per_col * (cols % n.wide_cols);
    return c;
  }
};
// The LHS blocks of segment `s` within rows [r0, r1): `full` whole blocks, then one of `rest`
// rows when rest > 0.
struct SegmentBlocks {
  int full = 0, rest = 0;
};
SegmentBlocks segment_blocks(const Segment& s, int r0, int r1) {
  const int lo = std::max(r0, s.row_begin), hi = std::min(r1, s.row_begin + s.rows);
  if (hi <= lo) return {};
  return {(hi - lo) / s.kernel->mr, (hi - lo) % s.kernel->mr};
}

TaskModel task_model(const Mix& mix, Uarch u, const PackedGeometry& g, int r0, int r1) {
  TaskModel t{0.0, 0.0, 0, {}};
  const size_t k = size_t(g.groups) * g.group_size;
  for (int i = 0; i < mix.num; ++i) {
    const Segment& s = mix.seg[i];
    const int mr = s.kernel->mr;
    const auto [full, rest] = segment_blocks(s, r0, r1);
    if (full + rest == 0) continue;
    // Whole blocks cost the same: one estimate for them, one for a partial last block.
    const KernelCost& c = mix.cost[i]->cost;
    t.per_col += full * compute_cycles(*s.kernel, c, u, {size_t(mr), 1, k, size_t(g.group_size), g.bits});
    if (rest) t.per_col += compute_cycles(*s.kernel, c, u, {size_t(rest), 1, k, size_t(g.group_size), g.bits});
    t.blocks += full + (rest ? 1 : 0);
    // A call reads its LHS block: the values, or a table-lookup kernel's tables (8x the bytes).
    t.per_call += (full + (rest ? 1 : 0)) * call_cycles(c, u, lhs_values_bytes(s.kernel->lhs, k));
    if (c.narrow != 0.0f && c.wide_cols > 0) {
      t.narrow[i].wide_cols = c.wide_cols;
      t.narrow[i].per_col = full * narrow_cycles(*s.kernel, c, u, {size_t(mr), 1, k, size_t(g.group_size), g.bits});
      if (rest) t.narrow[i].per_col += narrow_cycles(*s.kernel, c, u, {size_t(rest), 1, k, size_t(g.group_size), g.bits});
    }
  }
  return t;
}

// Estimated nanoseconds for running `mix` over all m rows with the given tiling: each task's
// cycles, the tasks list-scheduled in the pool's order on the workers, plus half the
// largest task (a worker that starts late or is interrupted can only be covered by others
// when tasks are small).
double estimate(const Mix& mix, Uarch u, const PackedGeometry& g, const Machine& mc, int m,
                int col_tile, int row_tile) {
  const int col_tiles = (g.n_padded + col_tile - 1) / col_tile;
  const int row_tiles = (m + row_tile - 1) / row_tile;
  const size_t tasks = size_t(col_tiles) * size_t(row_tiles);
  const int workers = int(std::min<size_t>(size_t(mc.threads), tasks));
  const double payload = double(g.panel_footprint()) * g.panels;
  const double col_bytes = double(g.panel_footprint()) / g.nr;
  // The first pass streams at the rate the first segment's kernel reads from where the payload
  // lives (with the working set, when the process reads more); re-reads of a column tile at the
  // rate of the memory.
  const double first_bw = stream_bandwidth(mc, mix.cost[0]->bandwidth, std::max(payload, mc.working_set), workers,
                                           panel_read_bytes(*mix.seg[0].kernel, g) / double(g.panel_footprint()));
  const double tile_bytes = col_bytes * col_tile;
  const bool reread_cached = tile_bytes * workers <= double(mc.nums.l3) / 2;
  const double reread_bw = tile_bytes <= double(mc.nums.l2) / 2 ? bandwidth(mc, nullptr, Level::l2, workers)
                           : reread_cached                      ? bandwidth(mc, nullptr, Level::l3, workers)
                                                                : first_bw;
  const double kTaskCycles = mc.nums.task_cycles;  // dispatch of one pool task
  // A column tile's later row tiles run on other workers at about the same time as its first
  // (the pool hands each worker a contiguous range of tasks), each streaming the same bytes
  // again: that stream is not hidden behind the arithmetic. Measured on Zen 5 at 2 threads,
  // 4096 x 4096: rows split in two ran 1.1-1.4x slower at m = 13 and 33, 3-7 % at m = 128.
  auto task_cycles = [&](const TaskModel& t, int cols, bool restream) {
    const double compute = t.compute(cols);
    const double first = col_bytes * cols / first_bw;
    const double reread = col_bytes * cols * std::max(0, t.blocks - 1) / reread_bw;
    return kTaskCycles + (restream ? first : 0.0) +
           (reread_cached ? std::max(compute, first + reread) : std::max(compute, first) + reread);
  };
  // The pool (ops/thread_pool.h) hands each thread an equal contiguous range of tasks and lets
  // it take from the others' ends: greedy list scheduling in task order is close to that.
  double load[64] = {};
  const int slots = std::min(workers, 64);
  double total = 0.0, largest = 0.0, arithmetic = 0.0;
  for (int rt = 0; rt < row_tiles; ++rt) {
    const TaskModel tm = task_model(mix, u, g, rt * row_tile, std::min(m, (rt + 1) * row_tile));
    const double full = task_cycles(tm, col_tile, rt > 0);
    const double last = task_cycles(tm, g.n_padded - (col_tiles - 1) * col_tile, rt > 0);
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
  // Waking and joining the workers of a parallel call, when measured.
  const std::vector<double>* d = mc.nums.dispatch;
  const double dispatch = workers > 1 && d != nullptr && !d->empty()
      ? (*d)[std::min(size_t(workers), d->size()) - 1] : 0.0;
  // Ties go to the candidate that computes less (AVX-VNNI over AVX2 when both are
  // memory-bound): it leaves more slack, and wins whenever the cache assumption is off.
  return (makespan + straggle + dispatch + 1e-3 * arithmetic / workers) / kGHz;
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

std::vector<Mix> candidate_mixes(const std::vector<Eligible>& ks, int m) {
  std::vector<Mix> out;
  for (const Eligible& k : ks) {
    Mix mx;
    mx.num = 1;
    mx.seg[0] = {k.kd, 0, m, k.prefetch.bytes};
    mx.cost[0] = &k.cost;
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
      mx.seg[0] = {big.kd, 0, full, big.prefetch.bytes};
      mx.seg[1] = {small.kd, full, m - full, small.prefetch.bytes};
      mx.cost[0] = &big.cost;
      mx.cost[1] = &small.cost;
      out.push_back(mx);
    }
  return out;
}

}  // namespace

std::string kernel_rejection(const KernelDesc& kd, const LayoutDesc& layout,
                             const WeightProblem& p, IsaSet isa, bool require_code) {
  if (kd.layout_id != layout.id) {
    const LayoutDesc* reads = find_layout(kd.layout_id);
    return concat("layout mismatch: reads ", reads ? reads->name : "an unknown layout",
                  ", weights are ", layout.name);
  }
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
                     int threads, PlanExplanation* explain, bool require_code, const Tuning& tuning,
                     size_t working_set = 0) {
  const LayoutDesc& layout = *h.layout;
  PlanSpace sp{make_geometry(layout, h.problem, h.scale_format),
               Machine{tuning.machine(prof), core_bandwidth(prof.arch), threads, double(working_set)}, {}, {}, {}};
  std::vector<Eligible>& eligible = sp.eligible;
  std::string why_not;
  bool read_by_any = false;  // a superseded layout is read by no kernel on any CPU
  for (const KernelDesc& kd : reg.kernels()) {
    read_by_any = read_by_any || kd.layout_id == layout.id;
    const std::string r = kernel_rejection(kd, layout, h.problem, prof.isa, require_code);
    if (r.empty()) eligible.push_back({&kd, tuning.kernel_cost(reg, kd, prof), tuning.prefetch_distance(reg, kd, prof)});
    else if (kd.layout_id == layout.id && why_not.empty()) why_not = r;
    if (explain)
      explain->kernels.push_back({kd.name, r.empty(), r, 0.0, r.empty() ? eligible.back().cost.source : ""});
  }
  if (!read_by_any)
    fail(Status::unsupported, "no kernel reads layout ", layout.name,
         " any more (superseded; files packed in it still load); repack the weights for this CPU");
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
    const int col_tiles = (g.n_padded + col_tile - 1) / col_tile;
    if (col_tiles <= 32 * threads) {
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

ExecPlan single_kernel_plan(const KernelDesc& kd, int m, int threads, int col_tile) {
  ExecPlan plan;
  plan.m = m;
  plan.threads = threads;
  plan.per_uarch[0].num_segments = 1;
  plan.per_uarch[0].seg[0] = {&kd, 0, m, kd.prefetch_bytes};
  plan.row_tile = (m + kd.mr - 1) / kd.mr * kd.mr;
  plan.col_tile = col_tile;
  return plan;
}

ExecPlan make_plan(const Registry& reg, const CpuProfile& prof, const PackedHeader& h, int m,
                   int threads, PlanExplanation* explain, bool require_code, const Tuning* tuning,
                   size_t working_set) {
  const std::shared_ptr<const Tuning> active = tuning ? nullptr : active_tuning();
  const Tuning& t = tuning ? *tuning : *active;
  const PlanSpace sp = plan_space(reg, prof, h, m, threads, explain, require_code, t, working_set);
  ExecPlan plan = plan_shell(prof, m, threads);
  // A working set L3 cannot hold streams every call's weights from DRAM: its plans get their
  // own cache key, and a record's overrides (timed by `lowbit tune` on one weight alone, read
  // again and again) do not decide them. A smaller one only shapes the estimate.
  const bool streamed = working_set > prof.caches.l3;
  plan.key = plan_key(m, threads, streamed);
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
  // Measured beats modeled: a plan override of the tuning record replaces the model's choice
  // when it is one of this plan's options.
  std::string override_note;
  bool override_skipped = false;
  const PlanOverride* o = t.find_override(reg, prof, h, m, threads);
  if (o != nullptr && streamed) {
    override_skipped = true;
  } else if (o != nullptr) {
    const Mix* chosen = nullptr;
    for (const Mix& mx : sp.mixes) {
      bool same = mx.num == int(o->segments.size());
      for (int i = 0; same && i < mx.num; ++i)
        same = o->segments[size_t(i)].first == mx.seg[i].kernel->name && o->segments[size_t(i)].second == mx.seg[i].rows;
      if (same) chosen = &mx;
    }
    const bool tiling = std::find(sp.tilings.begin(), sp.tilings.end(), std::pair{o->row_tile, o->col_tile}) !=
                        sp.tilings.end();
    if (chosen != nullptr && tiling) {
      plan.row_tile = o->row_tile;
      plan.col_tile = o->col_tile;
      for (int u = 0; u < plan.num_uarchs; ++u) {
        const Uarch ua = plan.per_uarch[u].uarch;
        plan.per_uarch[u] = uarch_plan(*chosen, ua, estimate(*chosen, ua, sp.g, sp.mc, m, o->col_tile, o->row_tile));
      }
      override_note = concat("plan override from ", t.origin(), " (measured ", o->speedup,
                             "x faster than the model's choice when recorded)");
    } else {
      t.log_once(concat(t.origin(), ": the plan override for ", h.layout->name, " n=", h.problem.n, " k=",
                        h.problem.k, " m=", m, " threads=", threads, " is not an option here: not used"));
    }
  }
  if (explain) {
    explain->tuning = t.origin();
    explain->machine = sp.mc.nums.source;
    if (working_set > 0)
      explain->working_set = concat(working_set >> 20, " MiB of packed weights read in turn (",
                                    working_set > sp.mc.nums.l3_upto ? "more than L3: each call's from DRAM"
                                                                     : "L3 holds part of them", ")");
    explain->override_note = override_note;
    if (override_skipped)
      explain->working_set += concat("; the plan override of ", t.origin(),
                                     " for these weights is not used (timed on them alone)");
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
    for (int i = 0; i < win.num; ++i)
      for (const Eligible& e : sp.eligible)
        if (e.kd == win.seg[i].kernel && e.kd->prefetch_bytes > 0)
          explain->prefetch.push_back(concat(e.kd->name, ": ", e.prefetch.bytes, " B (", e.prefetch.source, ")"));
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

std::vector<PlanTerms> plan_terms(const ExecPlan& plan, const PackedGeometry& g, const std::vector<int>& wide_cols) {
  std::vector<PlanTerms> out;
  const UarchPlan& up = plan.per_uarch[0];
  for (int i = 0; i < up.num_segments; ++i)
    out.push_back({up.seg[i].kernel, 0.0, {0, 0, 0, 0}, 0.0, std::vector<double>(wide_cols.size(), 0.0)});
  const size_t k = size_t(g.groups) * g.group_size;
  for (int r0 = 0; r0 < plan.m; r0 += plan.row_tile)
    for (int c0 = 0; c0 < g.n_padded; c0 += plan.col_tile) {
      const size_t cols = size_t(std::min(plan.col_tile, g.n_padded - c0));
      for (int i = 0; i < up.num_segments; ++i) {
        const Segment& s = up.seg[i];
        const auto [full, rest] = segment_blocks(s, r0, std::min(plan.m, r0 + plan.row_tile));
        PlanTerms& t = out[size_t(i)];
        for (const auto& [rows, count] : {std::pair{s.kernel->mr, full}, std::pair{rest, rest ? 1 : 0}}) {
          if (count == 0) continue;
          const CostTerms b = block_terms(*s.kernel, {size_t(rows), cols, k, size_t(g.group_size), g.bits});
          t.calls += count;
          t.terms.unpack += count * b.unpack;
          t.terms.dot += count * b.dot;
          t.terms.group += count * b.group;
          t.terms.group_row += count * b.group_row;
          for (size_t w = 0; w < wide_cols.size(); ++w)
            t.narrow[w] += count * narrow_term(*s.kernel, {size_t(rows), cols, k, size_t(g.group_size), g.bits}, wide_cols[w]);
          t.lhs_bytes += double(count) * double(lhs_values_bytes(s.kernel->lhs, k));
        }
      }
    }
  return out;
}

bool same_plan(const ExecPlan& a, const ExecPlan& b) {
  return a.row_tile == b.row_tile && a.col_tile == b.col_tile && same_kernels(a, b);
}

bool same_kernels(const ExecPlan& a, const ExecPlan& b) {
  const UarchPlan &x = a.per_uarch[0], &y = b.per_uarch[0];
  if (x.num_segments != y.num_segments) return false;
  for (int i = 0; i < x.num_segments; ++i)
    if (x.seg[i].kernel != y.seg[i].kernel || x.seg[i].rows != y.seg[i].rows) return false;
  return true;
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
