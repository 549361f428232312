#include "kernels/arm/i8mm/i8mm_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemm_4x8c8__i8mm(const GemmShape& shape, const UKernelArgs& args) { arm::run<arm::MmlaKern<4>>(shape, args); }

}  // namespace lowbit
