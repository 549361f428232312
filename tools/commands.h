// The lowbit command's subcommands. Each returns the process exit code.
#pragma once

namespace lowbit::cli {

int cmd_info(int argc, char** argv);
int cmd_explain(int argc, char** argv);
int cmd_pack(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_regret(int argc, char** argv);

}  // namespace lowbit::cli
