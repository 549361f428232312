// Prefill: 16 rows x 16 columns x 4 k, avx512vnni, in slices of 8 rows over each (panel, group)
// unpacked once; every bit width 1-8, zero points, bias, clamp (gemm_impl.h: gemm_wide).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx512vnni/traits.h"
#include "kernels/x86/gemm_impl.h"

namespace lowbit {

void qa8_qw_gemm_16x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm_wide<x86::Avx512Vnni, 16, 8, 2>(shape, args);
}

}  // namespace lowbit
