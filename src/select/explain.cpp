#include "select/explain.h"

#include <cstdio>

namespace lowbit {

namespace {

std::string line(const Candidate& c, const char* unit) {
  char buf[768];
  if (c.eligible && !c.source.empty())
    std::snprintf(buf, sizeof buf, "    %-44s %10.3f %s  [cost: %s]\n", c.name.c_str(), c.cost_ns, unit,
                  c.source.c_str());
  else if (c.eligible)
    std::snprintf(buf, sizeof buf, "    %-44s %10.3f %s\n", c.name.c_str(), c.cost_ns, unit);
  else
    std::snprintf(buf, sizeof buf, "    %-44s rejected: %s\n", c.name.c_str(), c.reason.c_str());
  return buf;
}

}  // namespace

std::string format_layout_decision(const LayoutDecision& d, const WeightProblem& p,
                                   const CpuProfile& prof) {
  std::string s = "lowbit select layout: n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
                  " bits=" + std::to_string(p.bits) + " group=" + std::to_string(p.group_size) +
                  (p.has_zeros ? " zeros" : "") + (p.has_bias ? " bias" : "") + " on " +
                  arch_name(prof.arch) + " " + prof.isa.to_string() + "\n";
  for (const Candidate& c : d.candidates) s += line(c, "(time vs best, geomean of m=1,16,128)");
  s += "  -> " + std::string(d.winner ? d.winner->name : "none") + "\n";
  return s;
}

std::string format_plan(const ExecPlan& plan, const PackedHeader& h, const PlanExplanation* ex) {
  std::string s = "lowbit select plan: layout " + std::string(h.layout->name) +
                  " m=" + std::to_string(plan.m) + " threads=" + std::to_string(plan.threads) +
                  " tile rows=" + std::to_string(plan.row_tile) +
                  " cols=" + std::to_string(plan.col_tile) + "\n";
  if (ex) {
    s += "  numbers: " + ex->tuning + "; " + ex->machine + "\n";
    if (!ex->working_set.empty()) s += "  working set: " + ex->working_set + "\n";
    for (const Candidate& c : ex->kernels) s += line(c, "ns (alone)");
    for (const Candidate& c : ex->mixes) s += line(c, "ns");
    if (!ex->override_note.empty()) s += "  decided by " + ex->override_note + "\n";
    for (const std::string& p : ex->prefetch) s += "  prefetches its weights ahead: " + p + "\n";
  }
  for (int u = 0; u < plan.num_uarchs; ++u) {
    const UarchPlan& up = plan.per_uarch[u];
    s += "  -> on " + std::string(uarch_name(up.uarch)) + ":";
    for (int i = 0; i < up.num_segments; ++i)
      s += std::string(i ? " +" : "") + " " + up.seg[i].kernel->name + " rows [" +
           std::to_string(up.seg[i].row_begin) + ", " +
           std::to_string(up.seg[i].row_begin + up.seg[i].rows) + ")";
    char est[64];
    std::snprintf(est, sizeof est, "  (est %.0f ns)\n", up.est_ns);
    s += est;
  }
  return s;
}

}  // namespace lowbit
