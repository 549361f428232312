#include "registry/registry.h"

#include <algorithm>
#include <set>

#include "format/layouts.h"
#include "kernels/ref/qa8_qw_gemm_4x1c1__scalar.h"
#include "util/error.h"


namespace lowbit {

Registry::Registry(std::vector<KernelDesc> kernels, std::vector<const LayoutDesc*> layouts)
    : kernels_(std::move(kernels)), layouts_(std::move(layouts)) {
  std::set<std::string> names;
  for (const KernelDesc& k : kernels_) {
    const std::string name = k.name ? k.name : "";
    if (name.empty()) fail(Status::internal, "registry: a kernel has no name");
    if (!names.insert(name).second) fail(Status::internal, "registry: duplicate kernel name ", name);
    const LayoutDesc* l = layout(k.layout_id);
    if (l == nullptr) fail(Status::internal, "registry: kernel ", name, " reads unknown layout ", k.layout_id);
    // Kernels of other architectures are described (so weights can be packed for them) but
    // have no code in this build.
    if (k.fn == nullptr && (l->arch == Arch::unknown || l->arch == kBuildArch))
      fail(Status::internal, "registry: kernel ", name, " has no function");
    if (k.mr < 1 || k.lhs.mr != k.mr)
      fail(Status::internal, "registry: kernel ", name, ": mr ", k.mr, " and lhs.mr ", k.lhs.mr,
           " must agree and be >= 1");
    if (k.lhs.kr < 1 || 16 % k.lhs.kr != 0)
      fail(Status::internal, "registry: kernel ", name, ": lhs kr ", k.lhs.kr, " must divide 16");
    if (l->kr < 1 || 16 % l->kr != 0 || l->nr < 1 || l->sr < 1)
      fail(Status::internal, "registry: layout ", l->name, ": kr must divide 16, nr and sr >= 1");
    if (!k.requires.contains(l->isa))
      fail(Status::internal, "registry: kernel ", name, " requires ", k.requires.to_string(),
           " but its layout ", l->name, " is packed for ", l->isa.to_string());
    if ((k.bits_mask & kAllBits) == 0 || (k.bits_mask & ~kAllBits) != 0)
      fail(Status::internal, "registry: kernel ", name, ": bad bits mask ", k.bits_mask);
  }
  // Variants of a layout: mr increasing in declaration order, each dividing the next, so
  // a big-tile segment followed by a small-tile one keeps every block aligned.
  for (const LayoutDesc* l : layouts_) {
    int last_mr = 0;
    for (const KernelDesc& k : kernels_) {
      if (k.layout_id != l->id) continue;
      if (k.mr <= last_mr || (last_mr > 0 && k.mr % last_mr != 0))
        fail(Status::internal, "registry: kernels of layout ", l->name,
             " must be declared in strictly increasing mr, each a multiple of the previous (",
             k.name, " has mr ", k.mr, " after mr ", last_mr, ")");
      last_mr = k.mr;
    }
  }
}

const LayoutDesc* Registry::layout(uint16_t id) const {
  for (const LayoutDesc* l : layouts_)
    if (l->id == id) return l;
  return nullptr;
}

const KernelDesc* Registry::kernel(const std::string& name) const {
  for (const KernelDesc& k : kernels_)
    if (name == k.name) return &k;
  return nullptr;
}

std::vector<const KernelDesc*> Registry::kernels_for(uint16_t layout_id) const {
  std::vector<const KernelDesc*> out;
  for (const KernelDesc& k : kernels_)
    if (k.layout_id == layout_id) out.push_back(&k);
  return out;
}

namespace {

// Entries of another architecture's kernels carry no function pointer in this build.
#if defined(__x86_64__)
#define LOWBIT_X86(fn) fn
#else
#define LOWBIT_X86(fn) nullptr
#endif
#if defined(__aarch64__)
#define LOWBIT_ARM(fn) fn
#else
#define LOWBIT_ARM(fn) nullptr
#endif

std::vector<KernelDesc> builtin_kernels() {
  std::vector<KernelDesc> k = {
      // name, layout, requires, mr, lhs{mr,kr}, bits, zeros, bias,
      // cost{unpack, dot, call, pads_rows}, prefers, fn
      {"qa8_qw_gemm_4x1c1__scalar", 1, IsaSet{}, 4, {4, 1}, kAllBits, true, true,
       {8.0f, 2.0f, 50.0f, false}, {}, qa8_qw_gemm_4x1c1__scalar},
  };
  return k;
}

std::vector<const LayoutDesc*> builtin_layouts() {
  std::vector<const LayoutDesc*> out;
  for (const LayoutDesc& l : all_layouts()) out.push_back(&l);
  return out;
}

}  // namespace

const Registry& default_registry() {
  static const Registry r(builtin_kernels(), builtin_layouts());
  return r;
}

}  // namespace lowbit
