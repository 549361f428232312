// llvm-mca harness of lowbit's aarch64 kernels (scripts/arm_mca.sh; also the project's copy of
// ../shared/anchors/arm-mca/harness/lowbit_mca.cpp, which run_all.sh uses when it exists).
// Compile with -DMCA_NEON, -DMCA_DOTPROD or -DMCA_I8MM and the ISA's -march. Built only by those
// scripts, never into the library.
//
// Each exported function runs a registered kernel's panel loop with the group size fixed at 32
// at compile time, so one iteration of its group loop is one straight block of code: one 32-k
// group of MR rows x NR columns, unpacking and per-group scaling included, exactly the code the
// registered kernel runs per group (its other part, the stores, is outside the loop).
//   mca_<isa>_mr<MR>_nr<NR>_b<BITS>        symmetric weights, bf16 scales: KleidiAI's
//                                          qsi4c32 semantics, what run_all.sh compares
//   ..._<variant>: _z (zero points), _f32 (f32 scales), _p1 (the GEMMs' second pass: columns
//   of the other parity), and mca_<isa>_a55_... (the _a55 kernels, tuned as their TU is).
// The dot-product and i8mm GEMMs keep one half of a panel's columns per pass: their loop is an
// 8 x 4 tile (1024 MACs per group), run twice per panel. The dot-product GEMVs run two panels
// side by side: 1 x 16 (512 MACs per group).
#if defined(__GNUC__) && !defined(__clang__)
// As src/kernels/arm/sources.cmake builds them.
#if defined(MCA_DOTPROD)
#pragma GCC optimize("no-schedule-insns", "no-peephole2", "no-ivopts")
#else
#pragma GCC optimize("no-schedule-insns", "no-peephole2")
#endif
#endif

#if defined(MCA_NEON)
#include "kernels/arm/neon/neon_impl.h"
#elif defined(MCA_DOTPROD)
#include "kernels/arm/dotprod/dotprod_impl.h"
#elif defined(MCA_I8MM)
#include "kernels/arm/i8mm/i8mm_impl.h"
#else
#error "define MCA_NEON, MCA_DOTPROD or MCA_I8MM"
#endif

namespace lowbit {
namespace arm {

#if defined(MCA_NEON)
#define MCA(name, MR, BITS)                                                                    \
  extern "C" __attribute__((flatten)) void name(const GemmShape& s, const UKernelArgs& a) { \
    run_bits<NeonKern<MR>, BITS, 32>(s, a, lhs_parts(a.lhs, NeonKern<MR>::kLhs, s));          \
  }
#define MCA_BITS(B) MCA(mca_neon_mr1_nr8_b##B, 1, B) MCA(mca_neon_mr4_nr8_b##B, 4, B)
MCA_BITS(1) MCA_BITS(2) MCA_BITS(3) MCA_BITS(4) MCA_BITS(5) MCA_BITS(6) MCA_BITS(7) MCA_BITS(8)
#else

// One pass of a kernel over the panels of the call it runs side by side, group size 32.
template <class Kern, int Bits, bool Zeros, bool Bf16, int Pass>
inline __attribute__((always_inline)) void mca_pass(const GemmShape& s, const UKernelArgs& a) {
  const Lhs lhs = lhs_parts(a.lhs, Kern::kLhs, s);
  const PackedGeometry& g = *s.geo;
  for (size_t p = 0; p + Kern::kPanels <= (a.n + kNr - 1) / kNr; p += Kern::kPanels) {
    const uint8_t* records[Kern::kPanels];
    const uint8_t* sums[Kern::kPanels];
    for (int i = 0; i < Kern::kPanels; ++i) records[i] = a.rhs + (p + i) * g.panel_bytes, sums[i] = a.sums + (p + i) * g.sums_stride;
    Kern kern(lhs);
    run_pass<Bits, Zeros, Bf16, Pass, 32>(kern, g, lhs, records, sums);
    kern.template store<Pass>(a, lhs, p * kNr);
  }
}

#define MCA_FN(name, attr, Kern, BITS, Z, B, P) \
  extern "C" __attribute__((flatten attr)) void name(const GemmShape& s, const UKernelArgs& a) { mca_pass<Kern, BITS, Z, B, P>(s, a); }
#define MCA_NONE

#if defined(MCA_DOTPROD)
using DotGemmInOrder = DotGemm<8, 8, true>;
#define MCA_TILES(B)                                                                        \
  MCA_FN(mca_dotprod_mr1_nr16_b##B, MCA_NONE, DotGemv<false>, B, false, true, 0)                \
  MCA_FN(mca_dotprod_mr8_nr4_b##B, MCA_NONE, DotGemm<8>, B, false, true, 0)                \
  MCA_FN(mca_dotprod_mr8_nr4_b##B##_p1, MCA_NONE, DotGemm<8>, B, false, true, 1)           \
  MCA_FN(mca_dotprod_a55_mr1_nr16_b##B, MCA_A55, DotGemv<true>, B, false, true, 0)             \
  MCA_FN(mca_dotprod_a55_mr8_nr4_b##B, MCA_A55, DotGemmInOrder, B, false, true, 0)             \
  MCA_FN(mca_dotprod_a55_mr8_nr4_b##B##_p1, MCA_A55, DotGemmInOrder, B, false, true, 1)
#define MCA_A55 , target("tune=cortex-a55")
#define MCA_VARIANTS                                                                         \
  MCA_FN(mca_dotprod_mr1_nr16_b4_z, MCA_NONE, DotGemv<false>, 4, true, true, 0)                 \
  MCA_FN(mca_dotprod_mr1_nr16_b4_f32, MCA_NONE, DotGemv<false>, 4, false, false, 0)             \
  MCA_FN(mca_dotprod_mr8_nr4_b4_z, MCA_NONE, DotGemm<8>, 4, true, true, 0)                 \
  MCA_FN(mca_dotprod_mr8_nr4_b4_f32, MCA_NONE, DotGemm<8>, 4, false, false, 0)
#else
#define MCA_TILES(B)                                                              \
  MCA_FN(mca_i8mm_mr1_nr8_b##B, MCA_NONE, MmlaGemv, B, false, true, 0)           \
  MCA_FN(mca_i8mm_mr8_nr4_b##B, MCA_NONE, MmlaGemm<8>, B, false, true, 0)        \
  MCA_FN(mca_i8mm_mr8_nr4_b##B##_p1, MCA_NONE, MmlaGemm<8>, B, false, true, 1)
#define MCA_VARIANTS                                                             \
  MCA_FN(mca_i8mm_mr1_nr8_b4_z, MCA_NONE, MmlaGemv, 4, true, true, 0)            \
  MCA_FN(mca_i8mm_mr1_nr8_b4_f32, MCA_NONE, MmlaGemv, 4, false, false, 0)        \
  MCA_FN(mca_i8mm_mr8_nr4_b4_z, MCA_NONE, MmlaGemm<8>, 4, true, true, 0)         \
  MCA_FN(mca_i8mm_mr8_nr4_b4_f32, MCA_NONE, MmlaGemm<8>, 4, false, false, 0)
#endif
MCA_TILES(1) MCA_TILES(2) MCA_TILES(3) MCA_TILES(4) MCA_TILES(5) MCA_TILES(6) MCA_TILES(7) MCA_TILES(8)
MCA_VARIANTS
#endif

}  // namespace arm
}  // namespace lowbit
