#pragma once

#include "registry/kernel.h"

namespace lowbit {

// Portable scalar kernel: any bits, zeros, bias, clamp; reads the portable layout
// (nr=1, kr=1) and LHS blocks of 4 rows (kr=1). Rows m < 4 cost proportionally less.
void qa8_qw_gemm_4x1c1__scalar(const GemmShape& shape, const UKernelArgs& args);

}  // namespace lowbit
