#pragma once

#include "registry/kernel.h"

namespace lowbit {

// Portable scalar kernels: any bits, zeros, bias, clamp; read the portable layout (nr=1,
// kr=1) and LHS blocks of 1 or 4 rows (kr=1). Rows m < mr cost proportionally less.
void qa8_qw_gemm_1x1c1__scalar(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x1c1__scalar(const GemmShape& shape, const UKernelArgs& args);

}  // namespace lowbit
