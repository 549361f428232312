#include "describe.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

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
      j.field("uarch", uarch_name(up.uarch)).end_object();
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
