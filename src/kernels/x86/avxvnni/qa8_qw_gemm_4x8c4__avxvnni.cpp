// 4 rows x 8 columns x 4 k per step, AVX-VNNI (256-bit vpdpbusd): prefill and small batches.
// Every bit width 1-8, zero points, bias, clamp; the loop lives in gemm.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avxvnni/traits.h"
#include "kernels/x86/gemm.h"

namespace lowbit {

void qa8_qw_gemm_4x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm<x86::AvxVnni, 4, 1, 1024>(shape, args);
}

}  // namespace lowbit
