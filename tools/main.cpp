// lowbit: inspect the CPU profile and kernels, explain selection, pack and inspect weights,
// run model layers, benchmark, and measure selection regret.
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "args.h"
#include "commands.h"
#include "lowbit/lowbit.hpp"

namespace {

const char kUsage[] =
    "usage: lowbit <command> [options]\n"
    "\n"
    "commands:\n"
    "  info    [--json]                       CPU profile, kernels and which can run here\n"
    "  explain --n N --k K --m M --bits B --group G [--zeros] [--bias] [--threads T]\n"
    "          [--target T] [--working-set-mib W] [--json]\n"
    "                                         layout decision and plan, with every candidate\n"
    "  run     [--model NAME] [--threads T] [--json]\n"
    "                                         pack a model's layers, check, time vs OpenBLAS\n"
    "  pack    --n N --k K --bits B --group G [--zeros] [--bias] [--target T]\n"
    "          [--in weights.npy] [--seed S] --out FILE\n"
    "                                         quantize random or given f32 weights and pack\n"
    "  inspect FILE [--json]                  validate a packed file and print its header\n"
    "  bench   [--json] [--quick]             shape suite vs reference, OpenBLAS and oneDNN\n"
  "  bench   --tails [--n N --k K --m M --bits B --group G] [--calls C] [--threads T]\n"
  "          [--busy P] [--json] [--quick]  latency p50/p90/p99/max at 1 and T threads,\n"
  "                                         with P busy processes running meanwhile\n"
    "  bench   --widths [--bits B,...] [--threads T,...] [--case decode|prefill] [--n N --k K]\n"
    "          [--decode-kernel K,...] [--prefill-kernel K,...] [--reps R] [--json] [--quick]\n"
    "                                         every weight width side by side: decode from\n"
    "                                         DRAM vs a plain read of its bytes, prefill\n"
    "  regret  [--json] [--quick] [--all] [--n N --k K] [--m M] [--threads T] [--reps R]\n"
    "          [--bits B] [--group G] [--compare A,B,...]\n"
    "                                         time every candidate plan vs the chosen one\n"
    "                                         (A, B: active, none, built-in or a record file)\n"
    "  tune    [--quick] [--threads T] [--shapes SPEC] [--bits B,...] [--group G,...]\n"
    "          [--out FILE] [--name NAME] [--json]\n"
    "                                         measure this machine, write a tuning record\n"
    "          (default: the user's cache, where it is found next time); SPEC: a model or\n"
    "          N:K,N:K,... whose measured winners, at each bit width and group (default\n"
    "          4-bit, group 32), become plan overrides\n"
    "  tune    --from-measurements DIR --out FILE\n"
    "                                         a record fitted to another CPU's regret runs\n"
    "\n"
    "models: llama3-8b (default), llama3.2-1b, qwen2.5-0.5b\n"
    "targets: portable, x86-avx2, x86-avxvnni, x86-avx512vnni, aarch64-neon, aarch64-dotprod,\n"
    "         aarch64-i8mm, or a CPU spec ARCH:ISA,...;cores=NxUARCH,... (e.g.\n"
    "         'arm64:neon,dotprod;cores=4xcortex-a55,4xcortex-a76') (default: this CPU)\n"
    "environment: LOWBIT_ISA=<cap> caps the ISA (scalar, avx2, avx2+avxvnni, avx512, neon, ...);\n"
    "             LOWBIT_LOG=select prints each fresh selection decision (and where its numbers\n"
    "             came from), LOWBIT_LOG=tuning which tuning record is used or why one is not;\n"
    "             LOWBIT_TUNING=<file> uses that record, LOWBIT_TUNING=none generic numbers\n";

struct Command {
  const char* name;
  int (*fn)(int, char**);
};

const Command kCommands[] = {
    {"info", lowbit::cli::cmd_info},       {"explain", lowbit::cli::cmd_explain},
    {"run", lowbit::cli::cmd_run},         {"pack", lowbit::cli::cmd_pack},
    {"inspect", lowbit::cli::cmd_inspect}, {"bench", lowbit::cli::cmd_bench},
    {"regret", lowbit::cli::cmd_regret},   {"tune", lowbit::cli::cmd_tune},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    for (int i = 2; i < argc; ++i)
      if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
        std::fputs(kUsage, stdout);
        return 0;
      }
    try {
      return c.fn(argc - 2, argv + 2);
    } catch (const lowbit::cli::UsageError& e) {
      // The error, not the whole usage: above 37 lines of it, the message was easy to miss.
      std::fprintf(stderr, "lowbit %s: %s\nrun 'lowbit %s --help' for the options\n", c.name, e.what(), c.name);
      return 2;
    } catch (const lowbit::Error& e) {
      std::fprintf(stderr, "lowbit %s: error (%s): %s\n", c.name, lowbit::status_name(e.status()), e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lowbit %s: error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "lowbit: unknown command '%s'\nrun 'lowbit --help' for the commands\n", argv[1]);
  return 2;
}
