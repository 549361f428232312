#include <cstdio>

#include "args.h"
#include "commands.h"
#include "describe.h"

namespace lowbit::cli {

int cmd_explain(int argc, char** argv) {
  const Args args(argc, argv, {"json", "zeros", "bias"},
                  {"n", "k", "m", "bits", "group", "threads", "target", "working-set-mib"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  WeightProblem p;
  p.n = int(args.integer("n", 1, 1 << 30));
  p.k = int(args.integer("k", 1, 1 << 30));
  p.bits = int(args.integer("bits", 1, 8));
  p.group_size = int(args.integer("group", 16, 1 << 30));
  p.has_zeros = args.flag("zeros");
  p.has_bias = args.flag("bias");
  const int m = int(args.integer("m", 1, 1 << 30));
  const int threads = args.has("threads") ? int(args.integer("threads", 1, 1024)) : 0;
  try {
    validate_problem(p);
  } catch (const Error& err) {
    throw UsageError(err.what());
  }
  const size_t working_set =
      args.has("working-set-mib") ? size_t(args.integer("working-set-mib", 0, 1 << 24)) << 20 : 0;
  const Explanation e = explain(p, m, threads, args.str("target"), working_set);
  if (args.flag("json")) std::printf("%s\n", explanation_json(e).c_str());
  else std::printf("%s", explanation_text(e).c_str());
  return 0;
}

}  // namespace lowbit::cli
