#include "format/layouts.h"

#include <cstring>

namespace lowbit {

namespace {

// id, name, arch, packed-for ISA, nr, kr, sr, bf16 scales allowed, column sums.
const LayoutDesc kLayouts[] = {
    {1, "portable_n1k1s1", Arch::unknown, IsaSet{}, 1, 1, 1, true},
    // x86-64: one vector = one k-block of nr columns x 4 k; plane chunks of one vector.
    // 2 and 3 have no kernels any more (superseded by 4 and 5, which add column sums): files
    // packed for them still load, and `repack` converts them.
    {2, "x86_avx2_n8k4s32", Arch::x86_64, IsaSet{Isa::avx2, Isa::fma}, 8, 4, 32, true},
    {3, "x86_avx512_n16k4s64", Arch::x86_64,
     IsaSet{Isa::avx512f, Isa::avx512bw, Isa::avx512vnni}, 16, 4, 64, true},
    // aarch64: 8 columns; 16-byte plane chunks (one 128-bit vector per shift-and-mask); kr is
    // what each ISA's instruction reads: 1 (smlal by lane), 4 (sdot), 8 (smmla).
    {32, "arm_neon_n8k1s16", Arch::arm64, IsaSet{Isa::neon}, 8, 1, 16, true},
    {33, "arm_dotprod_n8k4s16", Arch::arm64, IsaSet{Isa::neon, Isa::dotprod}, 8, 4, 16, true},
    {34, "arm_i8mm_n8k8s16", Arch::arm64, IsaSet{Isa::neon, Isa::dotprod, Isa::i8mm}, 8, 8, 16, true},
    // x86-64 with column sums at the end of each panel (format/layout.h).
    {4, "x86_avx2_n8k4s32_sums", Arch::x86_64, IsaSet{Isa::avx2, Isa::fma}, 8, 4, 32, true, true},
    {5, "x86_avx512_n16k4s64_sums", Arch::x86_64,
     IsaSet{Isa::avx512f, Isa::avx512bw, Isa::avx512vnni}, 16, 4, 64, true, true},
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
