#include "kernels/arm/dotprod/dotprod_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemm_4x8c4__dotprod(const GemmShape& shape, const UKernelArgs& args) { arm::run<arm::DotKern<4>>(shape, args); }

}  // namespace lowbit
