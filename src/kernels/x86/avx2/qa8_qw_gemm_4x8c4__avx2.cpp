// 4 rows x 8 columns x 4 k per step, AVX2 (vpmaddubsw): prefill and small batches.
// Two panels (16 columns) at a time share each activation broadcast (one panel: one broadcast
// per vpmaddubsw, and those take the shuffle pipes); the f32 sums live in L1, as on AVX-VNNI.
// Every bit width 1-8, zero points, bias, clamp; the loop lives in gemm.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/traits.h"
#include "kernels/x86/gemm.h"

namespace lowbit {

void qa8_qw_gemm_4x8c4__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm<x86::Avx2, 4, 2, 1024, true>(shape, args);
}

}  // namespace lowbit
