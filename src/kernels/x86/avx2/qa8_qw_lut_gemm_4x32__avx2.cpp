// 4 rows x 32 columns per index vector, AVX2 table lookup (vpshufb): prefill and small batches
// on weights in the x86_avx2_lut_n32k4s32 layout. The index vectors are extracted once for the
// 4 rows, each row looks them up in its own tables. Zero points, bias, clamp; the loop lives
// in lut.h, this TU supplies the ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/lut_traits.h"
#include "kernels/x86/lut.h"

namespace lowbit {

void qa8_qw_lut_gemm_4x32__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::lut_gemm<x86::LutAvx2, 4>(shape, args);
}

}  // namespace lowbit
