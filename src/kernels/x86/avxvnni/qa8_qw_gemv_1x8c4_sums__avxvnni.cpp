// 1 row x 8 columns x 4 k per step, AVX-VNNI (256-bit vpdpbusd), reading the layout's column
// sums: decode with the weights in L2 or L3. As qa8_qw_gemv_1x8c4_sums__avx2: the GEMM family
// (gemm.h) at one row, no software prefetch of the weights; per weight vector one vpdpbusd and
// its unpacking, without the byte column sums the streaming GEMV adds. Two panels per activation
// broadcast, not four: with four, GCC spills an unpacked vector and copies accumulators
// (static, per 4096 MACs on the Sapphire Rapids / Alder Lake model: rest 94 cycles with four,
// 85.6 with two).
// Two accumulator chains per panel (the low and the high nibbles' k-blocks): with one, each
// panel's 8 dependent vpdpbusd per group bound the loop (Zen 5, capped to AVX-VNNI, decode
// from L3: 196 -> 167 us, as fast as four panels).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avxvnni/traits.h"
#include "kernels/x86/gemm.h"

namespace lowbit {

void qa8_qw_gemv_1x8c4_sums__avxvnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm<x86::AvxVnni, 1, 2, 0, false, 2>(shape, args);
}

}  // namespace lowbit
