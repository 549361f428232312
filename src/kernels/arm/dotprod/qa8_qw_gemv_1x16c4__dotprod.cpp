#include "kernels/arm/dotprod/dotprod_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemv_1x16c4__dotprod(const GemmShape& shape, const UKernelArgs& args) { arm::run<arm::DotGemv<false>>(shape, args); }

}  // namespace lowbit
