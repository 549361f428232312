#include <cstdio>

#include "args.h"
#include "commands.h"
#include "describe.h"
#include "select/explain.h"
#include "select/select_layout.h"

namespace lowbit::cli {

int cmd_explain(int argc, char** argv) {
  const Args args(argc, argv, {"json", "zeros", "bias"},
                  {"n", "k", "m", "bits", "group", "threads", "target"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  WeightProblem p;
  p.n = int(args.integer("n", 1, 1 << 30));
  p.k = int(args.integer("k", 1, 1 << 30));
  p.bits = int(args.integer("bits", 1, 8));
  p.group_size = int(args.integer("group", 16, 1 << 30));
  p.has_zeros = args.flag("zeros");
  p.has_bias = args.flag("bias");
  const int m = int(args.integer("m", 1, 1 << 30));
  const std::string target = args.str("target");
  try {
    validate_problem(p);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const CpuProfile prof = target_profile(target);
  const int threads = int(args.integer("threads", 1, 1024, long(prof.num_threads())));
  const Registry& reg = default_registry();
  const LayoutDecision d = select_layout(reg, prof, p);
  PackedHeader h;
  h.layout = d.winner;
  h.problem = p;
  PlanExplanation ex;
  const bool here = target.empty();
  const ExecPlan plan = make_plan(reg, prof, h, m, threads, &ex, here);

  if (args.flag("json")) {
    Json j;
    j.begin_object();
    j.key("profile");
    profile_json(j, prof);
    j.key("problem").begin_object().field("n", p.n).field("k", p.k).field("m", m).field("bits", p.bits)
        .field("group", p.group_size).field("zeros", p.has_zeros).field("bias", p.has_bias)
        .field("threads", threads).field("target", target.empty() ? "this CPU" : target).end_object();
    j.key("layout").begin_object().field("name", d.winner->name);
    j.key("candidates");
    candidates_json(j, d.candidates);
    j.end_object();
    j.key("plan").begin_object();
    j.field("m", m).field("threads", threads).field("row_tile", plan.row_tile).field("col_tile", plan.col_tile);
    j.field("winner", ex.winner).field("tuning", ex.tuning).field("machine", ex.machine);
    j.key("override");
    if (ex.override_note.empty()) j.null(); else j.value(ex.override_note);
    j.key("kernels");
    plan_kernels_json(j, plan);
    j.key("candidates");
    candidates_json(j, ex.kernels);
    j.key("mixes");
    candidates_json(j, ex.mixes);
    j.end_object();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("%s\n", profile_text(prof).c_str());
  std::printf("%s\n", format_layout_decision(d, p, prof).c_str());
  std::printf("%s", format_plan(plan, h, &ex).c_str());
  return 0;
}

}  // namespace lowbit::cli
