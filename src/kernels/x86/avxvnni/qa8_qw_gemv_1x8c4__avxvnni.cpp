// 1 row x 8 columns x 4 k per step, AVX-VNNI (256-bit vpdpbusd): decode. Four panels at a time.
// Every bit width 1-8, zero points, bias, clamp; the loop lives in gemv.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avxvnni/traits.h"
#include "kernels/x86/gemv.h"

namespace lowbit {

void qa8_qw_gemv_1x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemv<x86::AvxVnni, 4, x86::OffsetTerm::kPairProduct>(shape, args);
}

}  // namespace lowbit
