// 4 rows x 64 columns per index vector, AVX-512 table lookup (vpshufb on zmm): prefill and small
// batches on weights in the x86_avx512_lut_n64k4s64 layout. The index vectors are extracted
// once for the 4 rows. Zero points, bias, clamp; the loop lives in lut.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx512/lut_traits.h"
#include "kernels/x86/lut.h"

namespace lowbit {

void qa8_qw_lut_gemm_4x64__avx512(const GemmShape& shape, const UKernelArgs& args) {
  x86::lut_gemm<x86::LutAvx512, 4>(shape, args);
}

}  // namespace lowbit
