#include <cstdio>

#include "args.h"
#include "commands.h"
#include "describe.h"
#include "format/layouts.h"

namespace lowbit::cli {

int cmd_info(int argc, char** argv) {
  const Args args(argc, argv, {"json"}, {});
  if (!args.positional().empty()) throw UsageError("info takes no arguments");
  const CpuProfile& prof = host_profile();
  const Registry& reg = default_registry();
  auto runnable = [&](const KernelDesc& k) { return k.fn != nullptr && prof.isa.contains(k.requires); };
  if (args.flag("json")) {
    Json j;
    j.begin_object();
    j.key("profile");
    profile_json(j, prof);
    isa_and_cores_json(j, prof);
    j.key("kernels").begin_array();
    for (const KernelDesc& k : reg.kernels())
      j.begin_object().field("name", k.name).field("isa", isa_string(k.requires))
          .field("layout", reg.layout(k.layout_id)->name).field("mr", k.mr)
          .field("nr", reg.layout(k.layout_id)->nr).field("runnable", runnable(k)).end_object();
    j.end_array();
    j.key("layouts").begin_array();
    for (const LayoutDesc* l : reg.layouts())
      j.begin_object().field("id", int(l->id)).field("name", l->name).field("arch", arch_name(l->arch))
          .field("isa", isa_string(l->isa)).field("nr", l->nr).field("kr", l->kr).field("sr", l->sr)
          .end_object();
    j.end_array();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("%s\n", profile_text(prof).c_str());
  std::vector<std::vector<std::string>> rows = {{"kernel", "isa", "layout", "mr", "runs here"}};
  for (const KernelDesc& k : reg.kernels())
    rows.push_back({k.name, isa_string(k.requires), reg.layout(k.layout_id)->name,
                    std::to_string(k.mr), runnable(k) ? "yes" : "no"});
  print_table(rows);
  return 0;
}

}  // namespace lowbit::cli
