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

// Which bandwidth the weights stream at on the first pass, for the whole payload.
double main_bandwidth(const Machine& mc, size_t payload_bytes) {
  if (payload_bytes <= mc.l2 / 2) return mc.bw.l2 * mc.threads;
  if (payload_bytes <= mc.l3) return mc.bw.l3 * mc.threads;
  // DRAM does not scale with cores like caches do: a second core adds about a quarter.
  return mc.bw.dram * (mc.threads > 1 ? 1.25 : 1.0);
}

struct Mix {
  int num = 0;
  Segment seg[kMaxSegments];
};

// Estimated nanoseconds for running `mix` over all m rows with the given tiling.
double estimate(const Mix& mix, Uarch u, const PackedGeometry& g, const Machine& mc, int m,
                int col_tile, int row_tile) {
  const size_t col_tiles = size_t((g.n_padded + col_tile - 1) / col_tile);
  const size_t row_tiles = size_t((m + row_tile - 1) / row_tile);
  const size_t tasks = col_tiles * row_tiles;
  const size_t tile_bytes = size_t(col_tile / g.nr) * g.panel_bytes;
  const bool tile_fits_l2 = tile_bytes <= mc.l2 / 2;
  double compute = 0.0, reread_bytes = 0.0;
  size_t blocks_total = 0;
  for (int i = 0; i < mix.num; ++i) {
    const Segment& s = mix.seg[i];
    const int mr = s.kernel->mr;
    for (int r = 0; r < s.rows; r += mr) {
      const size_t rows = size_t(std::min(mr, s.rows - r));
      compute += compute_cycles(*s.kernel, u, {rows, size_t(g.n_padded), size_t(g.groups) * g.group_size,
                                               g.panel_bytes * g.panels});
      // call overhead is per tile, not per block: compute_cycles charged it once.
      compute += s.kernel->cost.call * double(col_tiles - 1);
      ++blocks_total;
    }
  }
  const double payload = double(g.panel_bytes) * g.panels;
  // Every block after the first in a task re-reads the column tile: from L2 if it fits.
  const double blocks_per_task = double(blocks_total) / double(row_tiles);
  reread_bytes = payload * double(row_tiles) * std::max(0.0, blocks_per_task - 1.0);
  const double first_bytes = payload * double(row_tiles);
  const int workers = int(std::min<size_t>(size_t(mc.threads), tasks));
  const double imbalance = double((tasks + workers - 1) / workers) * workers / double(tasks);
  const double compute_time = compute / workers * imbalance;
  const double reread_bw = tile_fits_l2 ? mc.bw.l2 * workers : main_bandwidth(mc, size_t(payload));
  const double memory_time =
      first_bytes / main_bandwidth(mc, size_t(payload)) + reread_bytes / reread_bw;
  // Ties go to the candidate that computes and moves less (AVX-VNNI over AVX2 when both are
  // memory-bound; one 4-row block over two 1-row passes when both are compute-bound): it
  // leaves more slack, and wins whenever the estimate's cache assumption is off.
  return (std::max(compute_time, memory_time) + 1e-3 * (compute_time + memory_time)) / kGHz;
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

std::vector<Mix> candidate_mixes(const std::vector<const KernelDesc*>& ks, int m) {
  std::vector<Mix> out;
  for (const KernelDesc* k : ks) {
    Mix mx;
    mx.num = 1;
    mx.seg[0] = {k, 0, m};
    out.push_back(mx);
  }
  // A big tile for the full blocks, a smaller one for the remainder.
  for (const KernelDesc* big : ks)
    for (const KernelDesc* small : ks) {
      if (small->mr >= big->mr) continue;
      const int full = m / big->mr * big->mr;
      if (full == 0 || full == m) continue;
      Mix mx;
      mx.num = 2;
      mx.seg[0] = {big, 0, full};
      mx.seg[1] = {small, full, m - full};
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
  std::vector<Mix> mixes;
  std::vector<std::pair<int, int>> tilings;  // (row_tile, col_tile)
};

PlanSpace plan_space(const Registry& reg, const CpuProfile& prof, const PackedHeader& h, int m,
                     int threads, PlanExplanation* explain, bool require_code) {
  const LayoutDesc& layout = *h.layout;
  PlanSpace sp{make_geometry(layout, h.problem, h.scale_format),
               Machine{core_bandwidth(prof.arch), prof.caches.l2,
                       std::max(prof.caches.l3, prof.caches.l2), threads},
               {}, {}};
  std::vector<const KernelDesc*> eligible;
  std::string why_not;
  for (const KernelDesc& kd : reg.kernels()) {
    const std::string r = kernel_rejection(kd, layout, h.problem, prof.isa, require_code);
    if (r.empty()) eligible.push_back(&kd);
    else if (kd.layout_id == layout.id && why_not.empty()) why_not = r;
    if (explain) explain->kernels.push_back({kd.name, r.empty(), r, 0.0});
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
  for (const KernelDesc* k : eligible) lcm_mr = std::lcm(lcm_mr, k->mr);
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
                   int threads, PlanExplanation* explain, bool require_code) {
  const PlanSpace sp = plan_space(reg, prof, h, m, threads, explain, require_code);
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
          {mix_name(mx), true, "", estimate(mx, u0, sp.g, sp.mc, m, plan.col_tile, plan.row_tile)});
    Mix win;
    win.num = plan.per_uarch[0].num_segments;
    for (int i = 0; i < win.num; ++i) win.seg[i] = plan.per_uarch[0].seg[i];
    explain->winner = mix_name(win);
  }
  return plan;
}

std::vector<PlanOption> plan_options(const Registry& reg, const CpuProfile& prof,
                                     const PackedHeader& h, int m, int threads) {
  const PlanSpace sp = plan_space(reg, prof, h, m, threads, nullptr, true);
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
