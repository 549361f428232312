#include "kernels/arm/dotprod/dotprod_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemm_8x8c4__dotprod(const GemmShape& shape, const UKernelArgs& args) {
  if (args.m <= 4) return arm::run<arm::DotGemm<4, 8>>(shape, args);
  arm::run<arm::DotGemm<8>>(shape, args);
}

}  // namespace lowbit
