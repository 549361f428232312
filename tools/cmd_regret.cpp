// `lowbit regret`: selection quality, measured. For each (n, k, m) case, every plan the
// planner could have chosen (each kernel, each mr mix, each tiling it considers) is timed
// next to the one it chose; regret = t(chosen) / t(best).
#include <cmath>
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

bool same_plan(const ExecPlan& a, const ExecPlan& b) {
  if (a.row_tile != b.row_tile || a.col_tile != b.col_tile) return false;
  const UarchPlan &x = a.per_uarch[0], &y = b.per_uarch[0];
  if (x.num_segments != y.num_segments) return false;
  for (int i = 0; i < x.num_segments; ++i)
    if (x.seg[i].kernel != y.seg[i].kernel || x.seg[i].rows != y.seg[i].rows) return false;
  return true;
}

struct Case {
  int n, k, m;
  std::string chosen, best;
  double t_chosen, t_best, regret;
  size_t candidates;
};

}  // namespace

int cmd_regret(int argc, char** argv) {
  const Args args(argc, argv, {"json", "quick"}, {"threads", "reps", "bits", "group"});
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
  const pthreadpool_t pool = pool_for_threads(threads);
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
      const std::vector<double> t = interleaved_medians(fns, reps);
      size_t best = 0, pick = options.size();
      for (size_t i = 0; i < options.size(); ++i) {
        if (t[i] < t[best]) best = i;
        if (same_plan(options[i].plan, chosen)) pick = i;
      }
      if (pick == options.size()) throw Error(Status::internal, "regret: the chosen plan is not among the options");
      cases.push_back({n, k, m, options[pick].name, options[best].name, t[pick], t[best], t[pick] / t[best],
                       options.size()});
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
        .field("group", group).field("reps", reps);
    j.key("cases").begin_array();
    for (const Case& c : cases)
      j.begin_object().field("n", c.n).field("k", c.k).field("m", c.m).field("chosen", c.chosen)
          .field("best", c.best).field("chosen_ms", c.t_chosen * 1e-6).field("best_ms", c.t_best * 1e-6)
          .field("regret", c.regret).field("candidates", (unsigned long)c.candidates).end_object();
    j.end_array().field("geomean", geomean).field("worst", worst).end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("lowbit regret: %d-bit, group %d, %d thread(s), medians of %d interleaved runs per candidate\n",
              bits, group, threads, reps);
  std::vector<std::vector<std::string>> table = {{"n x k", "m", "plans", "regret", "chosen", "best"}};
  for (const Case& c : cases)
    table.push_back({std::to_string(c.n) + "x" + std::to_string(c.k), std::to_string(c.m),
                     std::to_string(c.candidates), fmt(c.regret, 3), c.chosen,
                     c.best == c.chosen ? "(same)" : c.best});
  print_table(table);
  std::printf("\ngeomean regret %.3f, worst %.3f (targets: geomean <= 1.05, worst <= 1.20)\n", geomean, worst);
  return 0;
}

}  // namespace lowbit::cli
