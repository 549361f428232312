// 1 row(s) x 8 columns x 4 k per step, avxvnni: every bit width 1-8, zero points, bias,
// clamp. The loop lives in gemm_impl.h; this TU supplies the ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avxvnni/traits.h"
#include "kernels/x86/gemm_impl.h"

namespace lowbit {

void qa8_qw_gemm_1x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm<x86::AvxVnni, 1, 4>(shape, args);
}

}  // namespace lowbit
