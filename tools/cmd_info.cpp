#include <cstdio>

#include "args.h"
#include "commands.h"
#include "describe.h"
#include "format/layouts.h"

namespace lowbit::cli {

int cmd_info(int argc, char** argv) {
  const Args args(argc, argv, {"json"}, {});
  if (!args.positional().empty()) throw UsageError("info takes no arguments");
  if (args.flag("json")) {
    std::printf("%s\n", info_json().c_str());
    return 0;
  }
  const Registry& reg = default_registry();
  std::printf("%s\n", profile_text(host_profile()).c_str());
  std::vector<std::vector<std::string>> rows = {{"kernel", "isa", "layout", "mr", "runs here"}};
  for (const KernelDesc& k : reg.kernels())
    rows.push_back({k.name, isa_string(k.requires), reg.layout(k.layout_id)->name,
                    std::to_string(k.mr), kernel_runs_here(k) ? "yes" : "no"});
  print_table(rows);
  return 0;
}

}  // namespace lowbit::cli
