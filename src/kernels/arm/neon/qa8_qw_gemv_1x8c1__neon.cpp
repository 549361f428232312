#include "kernels/arm/neon/neon_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemv_1x8c1__neon(const GemmShape& shape, const UKernelArgs& args) { arm::run<arm::NeonKern<1>>(shape, args); }

}  // namespace lowbit
