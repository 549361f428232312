// 1 row x 32 columns per index vector, AVX2 table lookup (vpshufb): decode at low bit widths.
// Weights in the x86_avx2_lut_n32k4s32 layout; zero points, bias, clamp; the loop lives in
// lut.h, this TU supplies the ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/lut_traits.h"
#include "kernels/x86/lut.h"

namespace lowbit {

void qa8_qw_lut_gemv_1x32__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::lut_gemv<x86::LutAvx2, 1>(shape, args);
}

}  // namespace lowbit
