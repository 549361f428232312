// Prefill: 16 rows x 8 columns x 4 k, avxvnni, in slices of 4 rows over each (panel, group)
// unpacked once; every bit width 1-8, zero points, bias, clamp (gemm_impl.h: gemm_wide).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avxvnni/traits.h"
#include "kernels/x86/gemm_impl.h"

namespace lowbit {

void qa8_qw_gemm_16x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm_wide<x86::AvxVnni, 16, 4, 2>(shape, args);
}

}  // namespace lowbit
