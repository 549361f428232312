#include "format/layouts.h"

#include <cstring>

namespace lowbit {

namespace {

// id, name, arch, packed-for ISA, nr, kr, sr, bf16 scales allowed.
const LayoutDesc kLayouts[] = {
    {1, "portable_n1k1s1", Arch::unknown, IsaSet{}, 1, 1, 1, true},
};

}  // namespace

LayoutTable all_layouts() { return {kLayouts, sizeof(kLayouts) / sizeof(kLayouts[0])}; }

const LayoutDesc* find_layout(uint16_t id) {
  for (const LayoutDesc& l : all_layouts())
    if (l.id == id) return &l;
  return nullptr;
}

const LayoutDesc* find_layout(const char* name) {
  for (const LayoutDesc& l : all_layouts())
    if (std::strcmp(l.name, name) == 0) return &l;
  return nullptr;
}

const LayoutDesc& portable_layout() { return kLayouts[0]; }

}  // namespace lowbit
