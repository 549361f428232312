#include "describe.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "format/layouts.h"
#include "select/explain.h"
#include "util/error.h"

namespace lowbit::cli {

std::string isa_string(IsaSet s) { return s.empty() ? "scalar" : s.to_string(); }

void isa_and_cores_json(Json& j, const CpuProfile& p) {
  j.key("isa").begin_array();
  for (int i = 0; i < kIsaCount; ++i)
    if (p.isa.has(Isa(i))) j.value(isa_name(Isa(i)));
  j.end_array();
  j.key("cores").begin_array();
  for (const CoreInfo& c : p.cores)
    j.begin_object().field("uarch", uarch_name(c.uarch)).field("cluster", int(c.cluster)).end_object();
  j.end_array();
}

void profile_json(Json& j, const CpuProfile& p) {
  j.begin_object();
  j.field("arch", arch_name(p.arch));
  isa_and_cores_json(j, p);
  j.key("caches").begin_object();
  j.field("l1d", (unsigned long)p.caches.l1d).field("l2", (unsigned long)p.caches.l2);
  j.field("l3", (unsigned long)p.caches.l3).end_object();
  j.field("source", p.source);
  j.field("spec", p.to_spec());
  j.end_object();
}

std::string profile_text(const CpuProfile& p) {
  std::string s = "CPU: " + std::string(arch_name(p.arch)) + ", " + std::to_string(p.cores.size()) +
                  " threads, ISA " + isa_string(p.isa) + "\n";
  s += "  uarchs:";
  for (const Uarch u : p.uarchs) s += std::string(" ") + uarch_name(u);
  s += "\n  caches: L1d " + cache_size_to_string(p.caches.l1d) + ", L2 " +
       cache_size_to_string(p.caches.l2) + ", L3 " + cache_size_to_string(p.caches.l3) +
       "  (source: " + p.source + ")\n";
  return s;
}

void candidates_json(Json& j, const std::vector<Candidate>& cs) {
  j.begin_array();
  for (const Candidate& c : cs) {
    j.begin_object().field("name", c.name).field("eligible", c.eligible);
    j.key("reason");
    if (c.eligible) j.null(); else j.value(c.reason);
    j.key("cost");
    if (c.eligible) j.value(c.cost_ns); else j.null();
    if (!c.source.empty()) j.field("source", c.source);
    j.end_object();
  }
  j.end_array();
}

void plan_kernels_json(Json& j, const ExecPlan& plan) {
  j.begin_array();
  for (int u = 0; u < plan.num_uarchs; ++u) {
    const UarchPlan& up = plan.per_uarch[u];
    for (int i = 0; i < up.num_segments; ++i) {
      const Segment& s = up.seg[i];
      j.begin_object().field("name", s.kernel->name).field("isa", isa_string(s.kernel->requires));
      j.field("mr", s.kernel->mr).field("rows", s.rows).field("row_begin", s.row_begin);
      j.field("prefetch_bytes", int64_t(s.prefetch_bytes)).field("uarch", uarch_name(up.uarch)).end_object();
    }
  }
  j.end_array();
}

std::string plan_kernels_text(const ExecPlan& plan) {
  std::string s;
  for (int u = 0; u < plan.num_uarchs; ++u) {
    const UarchPlan& up = plan.per_uarch[u];
    if (plan.num_uarchs > 1) s += std::string(u ? "; " : "") + uarch_name(up.uarch) + ": ";
    for (int i = 0; i < up.num_segments; ++i)
      s += std::string(i ? " + " : "") + up.seg[i].kernel->name + "×" + std::to_string(up.seg[i].rows);
  }
  return s;
}

std::string info_json() {
  const CpuProfile& prof = host_profile();
  const Registry& reg = default_registry();
  Json j;
  j.begin_object();
  j.key("profile");
  profile_json(j, prof);
  isa_and_cores_json(j, prof);
  j.key("kernels").begin_array();
  for (const KernelDesc& k : reg.kernels())
    j.begin_object().field("name", k.name).field("isa", isa_string(k.requires))
        .field("layout", reg.layout(k.layout_id)->name).field("mr", k.mr)
        .field("nr", reg.layout(k.layout_id)->nr).field("runnable", kernel_runs_here(k)).end_object();
  j.end_array();
  j.key("layouts").begin_array();
  for (const LayoutDesc* l : reg.layouts())
    j.begin_object().field("id", int(l->id)).field("name", l->name).field("arch", arch_name(l->arch))
        .field("isa", isa_string(l->isa)).field("nr", l->nr).field("kr", l->kr).field("sr", l->sr)
        .end_object();
  j.end_array();
  j.end_object();
  return j.str();
}

bool kernel_runs_here(const KernelDesc& k) {
  return k.fn != nullptr && host_profile().isa.contains(k.requires);
}

Explanation explain(const WeightProblem& p, int m, int threads, const std::string& target,
                    size_t working_set) {
  validate_problem(p);
  if (m < 1) fail(Status::invalid_argument, "m must be >= 1 (got ", m, ")");
  Explanation e;
  e.problem = p;
  e.m = m;
  e.target = target;
  e.profile = target_profile(target);
  e.threads = threads > 0 ? threads : int(e.profile.num_threads());
  const Registry& reg = default_registry();
  e.layout = select_layout(reg, e.profile, p);
  e.header.layout = e.layout.winner;
  e.header.problem = p;
  e.working_set = working_set;
  e.plan = make_plan(reg, e.profile, e.header, m, e.threads, &e.plan_candidates, target.empty(), nullptr,
                     working_set);
  return e;
}

std::string explanation_json(const Explanation& e) {
  const WeightProblem& p = e.problem;
  Json j;
  j.begin_object();
  j.key("profile");
  profile_json(j, e.profile);
  j.key("problem").begin_object().field("n", p.n).field("k", p.k).field("m", e.m).field("bits", p.bits)
      .field("group", p.group_size).field("zeros", p.has_zeros).field("bias", p.has_bias)
      .field("threads", e.threads).field("target", e.target.empty() ? "this CPU" : e.target).end_object();
  j.key("layout").begin_object().field("name", e.layout.winner->name);
  j.key("candidates");
  candidates_json(j, e.layout.candidates);
  j.end_object();
  j.key("plan").begin_object();
  j.field("m", e.m).field("threads", e.threads).field("row_tile", e.plan.row_tile)
      .field("col_tile", e.plan.col_tile);
  j.field("winner", e.plan_candidates.winner).field("tuning", e.plan_candidates.tuning)
      .field("machine", e.plan_candidates.machine)
      .field("working_set_bytes", (unsigned long long)e.working_set);
  j.key("override");
  if (e.plan_candidates.override_note.empty()) j.null(); else j.value(e.plan_candidates.override_note);
  j.key("kernels");
  plan_kernels_json(j, e.plan);
  j.key("candidates");
  candidates_json(j, e.plan_candidates.kernels);
  j.key("mixes");
  candidates_json(j, e.plan_candidates.mixes);
  j.end_object();
  j.end_object();
  return j.str();
}

std::string explanation_text(const Explanation& e) {
  return profile_text(e.profile) + "\n" + format_layout_decision(e.layout, e.problem, e.profile) +
         "\n" + format_plan(e.plan, e.header, &e.plan_candidates);
}

void packed_info_json(Json& j, const PackedInfo& i) {
  j.field("layout", i.layout).field("layout_id", i.layout_id).field("n", i.n).field("k", i.k)
      .field("bits", i.bits).field("group", i.group_size).field("zeros", i.has_zeros)
      .field("bias", i.has_bias).field("nr", i.nr).field("kr", i.kr).field("sr", i.sr)
      .field("scales", i.scale_format == ScaleFormat::bf16 ? "bf16" : "f32").field("isa", i.isa)
      .field("payload_bytes", (unsigned long long)i.payload_bytes)
      .field("total_bytes", (unsigned long long)i.total_bytes);
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    std::string line;
    for (size_t i = 0; i < rows[ri].size(); ++i) {
      std::string cell = rows[ri][i];
      // Right-align numbers, left-align text.
      const bool numeric = !cell.empty() && (std::isdigit(static_cast<unsigned char>(cell[0])) ||
                                             cell[0] == '-' || cell[0] == '.');
      if (!numeric) cell += std::string(width[i] - cell.size(), ' ');
      else cell = std::string(width[i] - cell.size(), ' ') + cell;
      line += (i ? "  " : "") + cell;
    }
    std::printf("%s\n", line.c_str());
    if (ri == 0) {
      size_t total = 0;
      for (size_t w : width) total += w + 2;
      std::printf("%s\n", std::string(total - 2, '-').c_str());
    }
  }
}

std::string fmt(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";  // a baseline this build lacks, or nothing measured
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace lowbit::cli
