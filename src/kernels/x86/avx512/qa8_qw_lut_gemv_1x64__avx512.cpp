// 1 row x 64 columns per index vector, AVX-512 table lookup (vpshufb on zmm): decode at low bit
// widths. Two panels at a time, half the call apart, each record prefetched ahead (2 KiB as
// the AVX2 one unless the tuning record measured another; not measured on an AVX-512 CPU). Weights in the x86_avx512_lut_n64k4s64
// layout; zero points, bias, clamp; the loop lives in lut.h, this TU supplies the ISA (its
// flags: sources.cmake, AVX-512 F/BW/VL/DQ without VNNI).
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx512/lut_traits.h"
#include "kernels/x86/lut.h"

namespace lowbit {

void qa8_qw_lut_gemv_1x64__avx512(const GemmShape& shape, const UKernelArgs& args) {
  x86::lut_gemv<x86::LutAvx512, 2>(shape, args);
}

}  // namespace lowbit
