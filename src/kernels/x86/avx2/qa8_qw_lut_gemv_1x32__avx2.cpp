// 1 row x 32 columns per index vector, AVX2 table lookup (vpshufb): decode at low bit widths.
// Two panels at a time, half the call apart, each record prefetched ahead (2 KiB unless the
// tuning record measured another distance): from DRAM
// (14336 x 4096, 1 bit) 1.35x faster than one panel at a time, level with it from L2 at 1 and 2
// bits (docs/lut-kernels.md). Weights in the x86_avx2_lut_n32k4s32 layout; zero points, bias,
// clamp; the loop lives in lut.h, this TU supplies the ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/lut_traits.h"
#include "kernels/x86/lut.h"

namespace lowbit {

void qa8_qw_lut_gemv_1x32__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::lut_gemv<x86::LutAvx2, 2>(shape, args);
}

}  // namespace lowbit
