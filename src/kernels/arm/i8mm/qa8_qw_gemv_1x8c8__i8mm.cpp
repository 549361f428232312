#include "kernels/arm/i8mm/i8mm_impl.h"
#include "kernels/arm/kernels.h"

namespace lowbit {

void qa8_qw_gemv_1x8c8__i8mm(const GemmShape& shape, const UKernelArgs& args) { arm::run<arm::MmlaGemv>(shape, args); }

}  // namespace lowbit
