// `lowbit regret`: selection quality, measured. For each (n, k, m) case, every plan the
// planner could have chosen (each kernel, each mr mix, each tiling it considers) is timed
// next to the one it chose; regret = t(chosen) / t(best), confirmed head to head.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdio>

#include "args.h"
#include "commands.h"
#include "describe.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/linear.h"
#include "ops/thread_pool.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "select/tuning.h"
#include "timing.h"
#include "workload.h"

namespace lowbit::cli {

namespace {

struct Option {
  std::string name;
  double est_ns, t_ns;
};

// What one tuning's planner picked for a case, and its regret.
struct Pick {
  std::string chosen;
  double t_chosen, regret;
};

struct Case {
  int n, k, m;
  std::vector<Pick> picks;  // one per compared tuning
  std::string best;
  double t_best;
  std::vector<Option> options;  // every candidate, in the planner's order
};

// The numbers the planner is compared with: "active" (what lowbit uses now), "none" (the
// generic coefficients), "built-in" (this machine's built-in record) or a record file.
struct Compared {
  std::string spec;
  std::shared_ptr<const Tuning> tuning;
  double geomean = 0, worst = 0;
};

// Where x is in v; v.size() when it is not there.
size_t index_of(const std::vector<size_t>& v, size_t x) {
  return size_t(std::find(v.begin(), v.end(), x) - v.begin());
}
bool contains(const std::vector<size_t>& v, size_t x) { return index_of(v, x) < v.size(); }

std::vector<Compared> compared_tunings(const std::string& list) {
  std::vector<Compared> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t end = std::min(list.find(',', at), list.size());
    const std::string spec = list.substr(at, end - at);
    at = end + 1;
    std::shared_ptr<const Tuning> t;
    if (spec == "active") t = active_tuning();
    else if (spec == "none") t = std::make_shared<Tuning>();
    else if (spec == "built-in") t = builtin_tuning();
    else if (!spec.empty()) {
      try {
        t = tuning_from_file(spec, "file " + spec);
      } catch (const Error& e) {  // its message does not name the file
        throw UsageError("--compare: " + spec + ": " + e.what());
      }
    }
    if (t == nullptr)
      throw UsageError("--compare: '" + spec + "' is not active, none, built-in or a record file" +
                       (spec == "built-in" ? " (no built-in record is for this machine)" : ""));
    out.push_back({spec, t});
  }
  return out;
}

// What the command was asked to measure.
struct Settings {
  bool quick, json, all, compare;
  int threads, reps, bits, group;
  std::vector<std::pair<int, int>> shapes;
  std::vector<int> ms;
};

Settings parse_settings(const Args& args) {
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  Settings s;
  s.quick = args.flag("quick");
  s.json = args.flag("json");
  s.all = args.flag("all");
  s.compare = args.has("compare");
  s.threads = int(args.integer("threads", 1, 1024, long(host_profile().num_threads())));
  s.reps = int(args.integer("reps", 1, 1000, s.quick ? 3 : 7));
  s.bits = int(args.integer("bits", 1, 8, 4));
  s.group = int(args.integer("group", 16, 32768, 32));
  s.shapes = {{4096, 4096}, {1024, 4096}, {14336, 4096}, {4096, 14336}};
  s.ms = {1, 3, 7, 13, 33, 100, 256};
  if (s.quick) {
    s.shapes = {{512, 1024}, {1024, 512}};
    s.ms = {1, 3, 7, 13};
  }
  // One shape and/or one m instead of the suite: for looking at a single case closely.
  if (args.has("n") != args.has("k")) throw UsageError("--n and --k go together");
  if (args.has("n")) s.shapes = {{int(args.integer("n", 1, 1 << 20)), int(args.integer("k", 16, 1 << 20))}};
  if (args.has("m")) s.ms = {int(args.integer("m", 1, 1 << 16))};
  return s;
}

// One case: every option timed, then the tunings' choices and the fastest re-timed head to
// head.
Case time_case(const Settings& s, const std::vector<Compared>& tunings, ThreadPool* pool, const PackedBuffer& b,
               const Workload& w, int n, int k, int m) {
  std::vector<PlanOption> options = plan_options(default_registry(), host_profile(), b.header, m, s.threads);
  std::vector<float> y(size_t(m) * n);
  std::vector<std::function<void()>> fns;
  for (const PlanOption& o : options)
    fns.push_back([&, &plan = o.plan] { execute_plan(plan, host_profile(), b, m, w.x.data(), y.data(), {}, pool, {}); });
  auto timed = [&](const std::vector<size_t>& which, int reps) {
    std::vector<std::function<void()>> sub;
    for (size_t i : which) sub.push_back(fns[i]);
    return interleaved_medians(sub, reps);
  };
  // Round 1 times every option. The fastest of many noisy medians is biased low, so round 2
  // re-times each tuning's chosen plan and round 1's three fastest head to head, with twice
  // the reps; regret = t(chosen) / t(fastest) in round 2. Every tuning is judged by the
  // same measurements.
  const std::vector<double> t = interleaved_medians(fns, s.reps);
  std::vector<size_t> finalists, picks;
  for (const Compared& tc : tunings) {
    const ExecPlan chosen = make_plan(default_registry(), host_profile(), b.header, m, s.threads, nullptr, true,
                                      tc.tuning.get());
    size_t pick = options.size();
    for (size_t i = 0; i < options.size(); ++i)
      if (same_plan(options[i].plan, chosen)) pick = i;
    if (pick == options.size()) throw Error(Status::internal, "regret: the chosen plan is not among the options");
    picks.push_back(pick);
    if (!contains(finalists, pick)) finalists.push_back(pick);
  }
  std::vector<size_t> order(options.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t[a] < t[b]; });
  for (size_t i = 0, added = 0; i < order.size() && added < 3; ++i)
    if (!contains(finalists, order[i])) {
      finalists.push_back(order[i]);
      ++added;
    }
  const std::vector<double> t2 = timed(finalists, 2 * s.reps);
  const size_t best_at = size_t(std::min_element(t2.begin(), t2.end()) - t2.begin());
  Case c{n, k, m, {}, options[finalists[best_at]].name, t2[best_at], {}};
  for (size_t pick : picks) {
    const double tp = t2[index_of(finalists, pick)];
    c.picks.push_back({options[pick].name, tp, tp / t2[best_at]});
  }
  // Round 3: choices that measured over 5 % slower than the fastest are timed again next to
  // it, 4·reps times each, and that decides: a real miss stays one, a noisy one goes.
  std::vector<size_t> recheck = {finalists[best_at]};
  for (size_t j = 0; j < picks.size(); ++j)
    if (c.picks[j].regret > 1.05 && !contains(recheck, picks[j])) recheck.push_back(picks[j]);
  if (recheck.size() > 1) {
    const std::vector<double> t3 = timed(recheck, 4 * s.reps);
    const double best3 = *std::min_element(t3.begin(), t3.end());
    for (size_t j = 0; j < picks.size(); ++j) {
      const size_t at = index_of(recheck, picks[j]);
      if (at < recheck.size() && c.picks[j].regret > 1.05) c.picks[j] = {options[picks[j]].name, t3[at], t3[at] / best3};
    }
  }
  for (size_t i = 0; i < options.size(); ++i)
    c.options.push_back({options[i].name, options[i].plan.per_uarch[0].est_ns, t[i]});
  return c;
}

// Each tuning's geometric-mean and worst regret over the cases.
void summarize(const std::vector<Case>& cases, std::vector<Compared>& tunings) {
  for (size_t j = 0; j < tunings.size(); ++j) {
    double log_sum = 0;
    for (const Case& c : cases) {
      log_sum += std::log(c.picks[j].regret);
      tunings[j].worst = std::max(tunings[j].worst, c.picks[j].regret);
    }
    tunings[j].geomean = std::exp(log_sum / double(cases.size()));
  }
}

void report_json(const Settings& s, const std::vector<Case>& cases, const std::vector<Compared>& tunings) {
  Json j;
  j.begin_object().field("profile", host_profile().to_spec()).field("threads", s.threads).field("bits", s.bits)
      .field("group", s.group).field("reps", s.reps).field("tuning", tunings[0].tuning->origin());
  j.key("cases").begin_array();
  for (const Case& c : cases) {
    const Pick& p = c.picks[0];
    j.begin_object().field("n", c.n).field("k", c.k).field("m", c.m).field("chosen", p.chosen)
        .field("best", c.best).field("chosen_ms", p.t_chosen * 1e-6).field("best_ms", c.t_best * 1e-6)
        .field("regret", p.regret).field("candidates", (unsigned long)c.options.size());
    if (s.compare) {
      j.key("picks").begin_array();
      for (const Pick& q : c.picks)
        j.begin_object().field("chosen", q.chosen).field("chosen_ms", q.t_chosen * 1e-6).field("regret", q.regret).end_object();
      j.end_array();
    }
    if (s.all) {
      j.key("options").begin_array();
      for (const Option& o : c.options)
        j.begin_object().field("name", o.name).field("est_ms", o.est_ns * 1e-6).field("ms", o.t_ns * 1e-6).end_object();
      j.end_array();
    }
    j.end_object();
  }
  j.end_array().field("geomean", tunings[0].geomean).field("worst", tunings[0].worst);
  if (s.compare) {
    j.key("tunings").begin_array();
    for (const Compared& tc : tunings)
      j.begin_object().field("compare", tc.spec).field("tuning", tc.tuning->origin()).field("geomean", tc.geomean)
          .field("worst", tc.worst).end_object();
    j.end_array();
  }
  j.end_object();
  std::printf("%s\n", j.str().c_str());
}

void report_text(const Settings& s, const std::vector<Case>& cases, const std::vector<Compared>& tunings) {
  // " [j]" after what belongs to the j-th compared tuning, when comparing.
  auto tag = [&](size_t j) { return s.compare ? concat(" [", j + 1, "]") : std::string(); };
  std::printf("lowbit regret: %d-bit, group %d, %d thread(s), medians of %d interleaved runs per candidate\n",
              s.bits, s.group, s.threads, s.reps);
  for (size_t j = 0; j < tunings.size(); ++j)
    std::printf("numbers%s: %s\n", tag(j).c_str(), tunings[j].tuning->origin().c_str());
  std::vector<std::string> head = {"n x k", "m", "plans"};
  for (size_t j = 0; j < tunings.size(); ++j) {
    head.push_back("regret" + tag(j));
    head.push_back("chosen" + tag(j));
  }
  head.push_back("best");
  std::vector<std::vector<std::string>> table = {head};
  for (const Case& c : cases) {
    std::vector<std::string> row = {std::to_string(c.n) + "x" + std::to_string(c.k), std::to_string(c.m),
                                    std::to_string(c.options.size())};
    for (const Pick& p : c.picks) {
      row.push_back(fmt(p.regret, 3));
      row.push_back(p.chosen);
    }
    row.push_back(c.picks.size() == 1 && c.best == c.picks[0].chosen ? "(same)" : c.best);
    table.push_back(row);
  }
  print_table(table);
  if (s.all)
    for (const Case& c : cases) {
      std::printf("\n%dx%d m=%d\n", c.n, c.k, c.m);
      std::vector<std::vector<std::string>> opts = {{"plan", "estimate ms", "measured ms", "vs best"}};
      for (const Option& o : c.options) {
        std::string mark;  // "  <- chosen", and by which tunings when comparing
        for (size_t j = 0; j < c.picks.size(); ++j)
          if (o.name == c.picks[j].chosen) mark += (mark.empty() ? "  <- chosen" : "") + tag(j);
        opts.push_back({o.name + mark, fmt(o.est_ns * 1e-6, 4), fmt(o.t_ns * 1e-6, 4), fmt(o.t_ns / c.t_best, 3)});
      }
      print_table(opts);
    }
  std::printf("\n");
  for (size_t j = 0; j < tunings.size(); ++j)
    std::printf("geomean regret %.3f, worst %.3f (targets: geomean <= 1.05, worst <= 1.20)%s\n", tunings[j].geomean,
                tunings[j].worst, s.compare ? concat(" [", j + 1, "] ", tunings[j].spec).c_str() : "");
}

}  // namespace

int cmd_regret(int argc, char** argv) {
  const Args args(argc, argv, {"json", "quick", "all"},
                  {"threads", "reps", "bits", "group", "n", "k", "m", "compare"});
  const Settings s = parse_settings(args);
  std::vector<Compared> tunings = compared_tunings(args.str("compare", "active"));
  ThreadPool* const pool = pool_for_threads(s.threads);
  std::vector<Case> cases;
  size_t done = 0;
  for (const auto& [n, k] : s.shapes) {
    const Workload w = make_workload({n, k, s.bits, s.group, false, false}, 256, 5);
    const PackedWeights pw = PackedWeights::pack(n, k, s.bits, s.group, w.q.data(), w.scales.data(), nullptr, nullptr);
    for (int m : s.ms) {
      std::fprintf(stderr, "\r[%zu/%zu] %dx%d m=%d   ", ++done, s.shapes.size() * s.ms.size(), n, k, m);
      cases.push_back(time_case(s, tunings, pool, pw.impl().buf, w, n, k, m));
    }
  }
  std::fprintf(stderr, "\r%*s\r", 50, "");
  summarize(cases, tunings);
  if (s.json) report_json(s, cases, tunings);
  else report_text(s, cases, tunings);
  return 0;
}

}  // namespace lowbit::cli
