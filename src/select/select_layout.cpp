#include "select/select_layout.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "format/layouts.h"
#include "util/error.h"

namespace lowbit {

namespace {

struct Target {
  const char* name;
  Arch arch;
  const char* cap;  // LOWBIT_ISA-style cap
};

const Target kTargets[] = {
    {"portable", Arch::unknown, "scalar"},       {"x86-avx2", Arch::x86_64, "avx2"},
    {"x86-avxvnni", Arch::x86_64, "avxvnni"},    {"x86-avx512vnni", Arch::x86_64, "avx512vnni"},
    {"aarch64-neon", Arch::arm64, "neon"},       {"aarch64-dotprod", Arch::arm64, "dotprod"},
    {"aarch64-i8mm", Arch::arm64, "i8mm"},
};

}  // namespace

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Target& t : kTargets) v.push_back(t.name);
    return v;
  }();
  return names;
}

CpuProfile target_profile(std::string_view target) {
  if (target.empty()) return host_profile();
  if (target.find(':') != std::string_view::npos) {  // no target name holds a ':'
    try {
      CpuProfile p = parse_profile_spec(target);
      p.source = "target:" + std::string(target);
      return p;
    } catch (const std::invalid_argument& e) {
      fail(Status::invalid_argument, "target: ", e.what());
    }
  }
  for (const Target& t : kTargets) {
    if (target != t.name) continue;
    const CpuProfile& host = host_profile();
    CpuProfile p;
    p.arch = t.arch == Arch::unknown ? host.arch : t.arch;
    p.isa = t.arch == Arch::unknown ? IsaSet{} : isa_cap(t.arch, t.cap) & isa_features(t.arch);
    p.cores = host.cores;
    for (CoreInfo& c : p.cores) c = CoreInfo{Uarch::unknown, 0, 0};
    p.uarchs = {Uarch::unknown};
    p.caches = default_caches(Uarch::unknown, p.arch);
    p.source = std::string("target:") + t.name;
    return p;
  }
  std::string known;
  for (const std::string& n : target_names()) known += (known.empty() ? "" : ", ") + n;
  fail(Status::invalid_argument, "unknown packing target '", std::string(target),
       "' (known: ", known, ", a CPU spec such as 'arm64:neon,dotprod;cores=4xcortex-a55,4xcortex-a76', or empty for this CPU)");
}

LayoutDecision select_layout(const Registry& reg, const CpuProfile& prof, const WeightProblem& p,
                             const Tuning* tuning) {
  static const int kMs[] = {1, 16, 128};
  LayoutDecision d;
  std::vector<std::vector<double>> times;
  std::vector<size_t> usable;
  for (const LayoutDesc* l : reg.layouts()) {
    Candidate c;
    c.name = l->name;
    if (l->arch != Arch::unknown && l->arch != prof.arch)
      c.reason = concat("layout is for ", arch_name(l->arch));
    else if (!prof.isa.contains(l->isa))
      c.reason = "missing ISA: " + l->isa.missing_from(prof.isa).to_string();
    std::vector<double> t;
    if (c.reason.empty()) {
      PackedHeader h;
      h.layout = l;
      h.problem = p;
      try {
        for (int m : kMs) t.push_back(make_plan(reg, prof, h, m, 1, nullptr, false, tuning).per_uarch[0].est_ns);
      } catch (const Error& e) {
        c.reason = e.what();
      }
    }
    c.eligible = c.reason.empty();
    if (c.eligible) usable.push_back(d.candidates.size());
    d.candidates.push_back(c);
    times.push_back(t);
  }
  if (usable.empty())
    fail(Status::unsupported, "no layout can run ", p.bits, "-bit weights",
         p.has_zeros ? " with zero points" : "", " on ", arch_name(prof.arch), " ",
         prof.isa.to_string());
  double best_score = std::numeric_limits<double>::infinity();
  for (size_t i : usable) {
    double log_sum = 0.0;
    for (size_t j = 0; j < std::size(kMs); ++j) {
      double best = std::numeric_limits<double>::infinity();
      for (size_t o : usable) best = std::min(best, times[o][j]);
      log_sum += std::log(times[i][j] / best);
    }
    d.candidates[i].cost_ns = std::exp(log_sum / std::size(kMs));
    if (d.candidates[i].cost_ns < best_score) {
      best_score = d.candidates[i].cost_ns;
      d.winner = reg.layouts()[i];
    }
  }
  return d;
}

}  // namespace lowbit
