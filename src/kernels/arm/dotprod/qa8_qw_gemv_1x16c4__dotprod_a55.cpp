#include "kernels/arm/dotprod/dotprod_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemv_1x16c4__dotprod_a55(const GemmShape& shape, const UKernelArgs& args) { arm::run<arm::DotGemv<true>>(shape, args); }

}  // namespace lowbit
