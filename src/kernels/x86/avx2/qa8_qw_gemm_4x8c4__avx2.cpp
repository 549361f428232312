// 4 rows x 8 columns x 4 k per step, AVX2 (vpmaddubsw): prefill and small batches.
// Every bit width 1-8, zero points, bias, clamp; the loop lives in gemm.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/traits.h"
#include "kernels/x86/gemm.h"

namespace lowbit {

void qa8_qw_gemm_4x8c4__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm<x86::Avx2, 4, 1, 1024>(shape, args);
}

}  // namespace lowbit
