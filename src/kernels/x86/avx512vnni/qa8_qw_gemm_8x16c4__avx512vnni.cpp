// 8 rows x 16 columns x 4 k per step, AVX-512 VNNI: prefill and small batches.
// Every bit width 1-8, zero points, bias, clamp; the loop lives in gemm.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx512vnni/traits.h"
#include "kernels/x86/gemm.h"

namespace lowbit {

void qa8_qw_gemm_8x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm<x86::Avx512Vnni, 8, 1, 4096>(shape, args);
}

}  // namespace lowbit
