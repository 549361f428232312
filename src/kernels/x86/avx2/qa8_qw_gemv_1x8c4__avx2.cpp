// 1 row x 8 columns x 4 k per step, AVX2 (vpmaddubsw): decode. Four panels at a time, a
// quarter of the call apart, each stream prefetched ahead: 2 KiB unless the tuning record
// measured another distance on this CPU (docs/x86-kernels.md, "Decode from DRAM").
// Every bit width 1-8, zero points, bias, clamp; the loop lives in gemv.h, this TU supplies the
// ISA (its flags: sources.cmake).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/traits.h"
#include "kernels/x86/gemv.h"

namespace lowbit {

void qa8_qw_gemv_1x8c4__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemv<x86::Avx2, 4, x86::OffsetTerm::kPairProduct>(shape, args);
}

}  // namespace lowbit
