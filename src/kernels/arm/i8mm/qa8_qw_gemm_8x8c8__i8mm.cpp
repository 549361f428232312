#include "kernels/arm/i8mm/i8mm_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemm_8x8c8__i8mm(const GemmShape& shape, const UKernelArgs& args) {
  if (args.m <= 4) return arm::run<arm::MmlaGemm<4, 8>>(shape, args);
  arm::run<arm::MmlaGemm<8>>(shape, args);
}

}  // namespace lowbit
