// The lowbit command's subcommands. Each returns the process exit code.
#pragma once

#include <string>

namespace lowbit::cli {

int cmd_info(int argc, char** argv);
int cmd_explain(int argc, char** argv);
int cmd_pack(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);
class Args;
// `lowbit bench --widths` (tools/cmd_bench_widths.cpp).
int bench_widths(const Args& args);
int cmd_regret(int argc, char** argv);
int cmd_tune(int argc, char** argv);
// `lowbit tune --from-measurements DIR --out FILE` (tools/tune_from_measurements.cpp).
int tune_from_measurements(const std::string& dir, const std::string& out_path);

}  // namespace lowbit::cli
