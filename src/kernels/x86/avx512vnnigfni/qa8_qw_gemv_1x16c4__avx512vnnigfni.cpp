// 1 row x 16 columns x 4 k per step, AVX-512 VNNI with GFNI and VPOPCNTDQ: decode. The loop of
// qa8_qw_gemv_1x16c4__avx512vnni (gemv.h, four panels at a time) with the weights unpacked by
// affine transforms and, at 1 bit, column sums by popcount (avx512vnnigfni/traits.h).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx512vnnigfni/traits.h"
#include "kernels/x86/gemv.h"

namespace lowbit {

void qa8_qw_gemv_1x16c4__avx512vnnigfni(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemv<x86::Avx512VnniGfni, 4, x86::OffsetTerm::kStart>(shape, args);
}

}  // namespace lowbit
