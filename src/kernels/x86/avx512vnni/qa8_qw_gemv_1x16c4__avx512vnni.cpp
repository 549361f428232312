// 1 row x 16 columns x 4 k per step, AVX-512 VNNI: decode. Four panels (64 columns) at a time.
// Every bit width 1-8, zero points, bias, clamp; the loop lives in gemv.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx512vnni/traits.h"
#include "kernels/x86/gemv.h"

namespace lowbit {

void qa8_qw_gemv_1x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemv<x86::Avx512Vnni, 4, x86::OffsetTerm::kStart>(shape, args);
}

}  // namespace lowbit
