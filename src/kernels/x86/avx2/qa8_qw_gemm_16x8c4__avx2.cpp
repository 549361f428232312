// Prefill: 16 rows x 8 columns x 4 k, avx2, in slices of 4 rows over each (panel, group)
// unpacked once; every bit width 1-8, zero points, bias, clamp (gemm_impl.h: gemm_wide).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/traits.h"
#include "kernels/x86/gemm_impl.h"

namespace lowbit {

void qa8_qw_gemm_16x8c4__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm_wide<x86::Avx2, 16, 4, 1>(shape, args);
}

}  // namespace lowbit
