#include "kernels/arm/dotprod/dotprod_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemm_8x8c4__dotprod_a55(const GemmShape& shape, const UKernelArgs& args) {
  if (args.m <= 4) return arm::run<arm::DotGemm<4, 8>>(shape, args);
  arm::run<arm::DotGemm<8, 8, true>>(shape, args);
}

}  // namespace lowbit
