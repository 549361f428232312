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
#include "timing.h"
#include "workload.h"

namespace lowbit::cli {

namespace {

struct Option {
  std::string name;
  double est_ns, t_ns;
};

struct Case {
  int n, k, m;
  std::string chosen, best;
  double t_chosen, t_best, regret;
  std::vector<Option> options;  // every candidate, in the planner's order
};

}  // namespace

int cmd_regret(int argc, char** argv) {
  const Args args(argc, argv, {"json", "quick", "all"}, {"threads", "reps", "bits", "group", "n", "k", "m"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  const bool quick = args.flag("quick");
  const int threads = int(args.integer("threads", 1, 1024, long(host_profile().num_threads())));
  const int reps = int(args.integer("reps", 1, 1000, quick ? 3 : 7));
  const int bits = int(args.integer("bits", 1, 8, 4));
  const int group = int(args.integer("group", 16, 32768, 32));
  std::vector<std::pair<int, int>> shapes = {{4096, 4096}, {1024, 4096}, {14336, 4096}, {4096, 14336}};
  std::vector<int> ms = {1, 3, 7, 13, 33, 100, 256};
  if (quick) {
    shapes = {{512, 1024}, {1024, 512}};
    ms = {1, 3, 7, 13};
  }
  // One shape and/or one m instead of the suite: for looking at a single case closely.
  if (args.has("n") != args.has("k")) throw UsageError("--n and --k go together");
  if (args.has("n")) shapes = {{int(args.integer("n", 1, 1 << 20)), int(args.integer("k", 16, 1 << 20))}};
  if (args.has("m")) ms = {int(args.integer("m", 1, 1 << 16))};
  ThreadPool* const pool = pool_for_threads(threads);
  std::vector<Case> cases;
  size_t done = 0;
  for (const auto& [n, k] : shapes) {
    const Workload w = make_workload({n, k, bits, group, false, false}, 256, 5);
    const PackedWeights pw = PackedWeights::pack(n, k, bits, group, w.q.data(), w.scales.data(), nullptr, nullptr);
    const PackedBuffer& b = pw.impl().buf;
    for (int m : ms) {
      std::fprintf(stderr, "\r[%zu/%zu] %dx%d m=%d   ", ++done, shapes.size() * ms.size(), n, k, m);
      const ExecPlan chosen = make_plan(default_registry(), host_profile(), b.header, m, threads);
      std::vector<PlanOption> options = plan_options(default_registry(), host_profile(), b.header, m, threads);
      std::vector<float> y(size_t(m) * n);
      std::vector<std::function<void()>> fns;
      for (const PlanOption& o : options)
        fns.push_back([&, &plan = o.plan] { execute_plan(plan, host_profile(), b, m, w.x.data(), y.data(), {}, pool, {}); });
      // Round 1 times every option. The fastest of many noisy medians is biased low, so round 2
      // re-times the chosen plan and round 1's three fastest head to head, with twice the reps;
      // regret = t(chosen) / t(fastest) in round 2.
      const std::vector<double> t = interleaved_medians(fns, reps);
      size_t pick = options.size();
      for (size_t i = 0; i < options.size(); ++i)
        if (same_plan(options[i].plan, chosen)) pick = i;
      if (pick == options.size()) throw Error(Status::internal, "regret: the chosen plan is not among the options");
      std::vector<size_t> order(options.size());
      std::iota(order.begin(), order.end(), size_t(0));
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t[a] < t[b]; });
      std::vector<size_t> finalists = {pick};
      for (size_t i = 0; i < order.size() && finalists.size() < 4; ++i)
        if (order[i] != pick) finalists.push_back(order[i]);
      std::vector<std::function<void()>> final_fns;
      for (size_t i : finalists) final_fns.push_back(fns[i]);
      const std::vector<double> t2 = interleaved_medians(final_fns, 2 * reps);
      const size_t best_at = size_t(std::min_element(t2.begin(), t2.end()) - t2.begin());
      const size_t best = finalists[best_at];
      Case c{n, k, m, options[pick].name, options[best].name, t2[0], t2[best_at], t2[0] / t2[best_at], {}};
      for (size_t i = 0; i < options.size(); ++i)
        c.options.push_back({options[i].name, options[i].plan.per_uarch[0].est_ns, t[i]});
      cases.push_back(std::move(c));
    }
  }
  std::fprintf(stderr, "\r%*s\r", 50, "");
  double log_sum = 0, worst = 0;
  for (const Case& c : cases) {
    log_sum += std::log(c.regret);
    worst = std::max(worst, c.regret);
  }
  const double geomean = std::exp(log_sum / double(cases.size()));
  if (args.flag("json")) {
    Json j;
    j.begin_object().field("profile", host_profile().to_spec()).field("threads", threads).field("bits", bits)
        .field("group", group).field("reps", reps).field("tuning", active_tuning()->origin());
    j.key("cases").begin_array();
    for (const Case& c : cases) {
      j.begin_object().field("n", c.n).field("k", c.k).field("m", c.m).field("chosen", c.chosen)
          .field("best", c.best).field("chosen_ms", c.t_chosen * 1e-6).field("best_ms", c.t_best * 1e-6)
          .field("regret", c.regret).field("candidates", (unsigned long)c.options.size());
      if (args.flag("all")) {
        j.key("options").begin_array();
        for (const Option& o : c.options)
          j.begin_object().field("name", o.name).field("est_ms", o.est_ns * 1e-6).field("ms", o.t_ns * 1e-6).end_object();
        j.end_array();
      }
      j.end_object();
    }
    j.end_array().field("geomean", geomean).field("worst", worst).end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("lowbit regret: %d-bit, group %d, %d thread(s), medians of %d interleaved runs per candidate\n"
              "numbers: %s\n",
              bits, group, threads, reps, active_tuning()->origin().c_str());
  std::vector<std::vector<std::string>> table = {{"n x k", "m", "plans", "regret", "chosen", "best"}};
  for (const Case& c : cases)
    table.push_back({std::to_string(c.n) + "x" + std::to_string(c.k), std::to_string(c.m),
                     std::to_string(c.options.size()), fmt(c.regret, 3), c.chosen,
                     c.best == c.chosen ? "(same)" : c.best});
  print_table(table);
  if (args.flag("all"))
    for (const Case& c : cases) {
      std::printf("\n%dx%d m=%d\n", c.n, c.k, c.m);
      std::vector<std::vector<std::string>> opts = {{"plan", "estimate ms", "measured ms", "vs best"}};
      for (const Option& o : c.options)
        opts.push_back({o.name + (o.name == c.chosen ? "  <- chosen" : ""), fmt(o.est_ns * 1e-6, 4),
                        fmt(o.t_ns * 1e-6, 4), fmt(o.t_ns / c.t_best, 3)});
      print_table(opts);
    }
  std::printf("\ngeomean regret %.3f, worst %.3f (targets: geomean <= 1.05, worst <= 1.20)\n", geomean, worst);
  return 0;
}

}  // namespace lowbit::cli
