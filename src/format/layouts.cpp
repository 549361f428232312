#include "format/layouts.h"

#include <cstring>

namespace lowbit {

namespace {

constexpr IsaSet kAvx2{Isa::avx2, Isa::fma};
constexpr IsaSet kAvx512Vnni{Isa::avx512f, Isa::avx512bw, Isa::avx512vnni};
constexpr IsaSet kAvx512Bw{Isa::avx512f, Isa::avx512bw};
using L = LayoutDesc;

const LayoutDesc kLayouts[] = {
    L::family(layout_id::portable_n1k1s1, "portable_n1k1s1", Arch::unknown, IsaSet{})
        .panel(1, 1, 1).bf16_scales_when_exact(),
    // x86-64: one vector = one k-block of nr columns x 4 k; plane chunks of one vector.
    // 2 and 3 have no kernels any more (superseded by 4 and 5, which add column sums): files
    // packed for them still load, and `repack` converts them.
    L::family(layout_id::x86_avx2_n8k4s32, "x86_avx2_n8k4s32", Arch::x86_64, kAvx2)
        .panel(8, 4, 32).bf16_scales_when_exact(),
    L::family(layout_id::x86_avx512_n16k4s64, "x86_avx512_n16k4s64", Arch::x86_64, kAvx512Vnni)
        .panel(16, 4, 64).bf16_scales_when_exact(),
    // aarch64: 8 columns; 16-byte plane chunks (one 128-bit vector per shift-and-mask); kr is
    // what each ISA's instruction reads: 1 (smlal by lane), 4 (sdot), 8 (smmla).
    L::family(layout_id::arm_neon_n8k1s16, "arm_neon_n8k1s16", Arch::arm64, IsaSet{Isa::neon})
        .panel(8, 1, 16).bf16_scales_when_exact(),
    L::family(layout_id::arm_dotprod_n8k4s16, "arm_dotprod_n8k4s16", Arch::arm64,
              IsaSet{Isa::neon, Isa::dotprod})
        .panel(8, 4, 16).bf16_scales_when_exact(),
    L::family(layout_id::arm_i8mm_n8k8s16, "arm_i8mm_n8k8s16", Arch::arm64,
              IsaSet{Isa::neon, Isa::dotprod, Isa::i8mm})
        .panel(8, 8, 16).bf16_scales_when_exact(),
    // x86-64 with column sums after all panels (format/layout.h).
    L::family(layout_id::x86_avx2_n8k4s32_sums, "x86_avx2_n8k4s32_sums", Arch::x86_64, kAvx2)
        .panel(8, 4, 32).bf16_scales_when_exact().with_col_sums(),
    L::family(layout_id::x86_avx512_n16k4s64_sums, "x86_avx512_n16k4s64_sums", Arch::x86_64, kAvx512Vnni)
        .panel(16, 4, 64).bf16_scales_when_exact().with_col_sums(),
    // x86-64 table lookup (format/layout.h, lut_k4): one index vector = nr columns x 8 k of one
    // bit, nr = 32 bytes a vector (AVX2) or 64 (AVX-512).
    L::family(layout_id::x86_avx2_lut_n32k4s32, "x86_avx2_lut_n32k4s32", Arch::x86_64, kAvx2)
        .panel(32, 4, 32).bf16_scales_when_exact().lut_indices(),
    L::family(layout_id::x86_avx512_lut_n64k4s64, "x86_avx512_lut_n64k4s64", Arch::x86_64, kAvx512Bw)
        .panel(64, 4, 64).bf16_scales_when_exact().lut_indices(),
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
