// aarch64 micro-kernels (declarations only: each is defined in a TU built with its ISA's
// -march flags and may be called only when the CPU has that ISA; the registry guarantees it).
// Every kernel handles 1-8 bit weights (fast paths for 4 and 8), zero points, bias and clamp,
// bit-exactly (DESIGN §1).
#pragma once

#include "registry/kernel.h"

namespace lowbit {

// NEON, armv8-a (smlal by lane on exact int16 differences), layout arm_neon_n8k1s16.
void qa8_qw_gemv_1x8c1__neon(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c1__neon(const GemmShape& shape, const UKernelArgs& args);
// NEON dot product, armv8.2-a+dotprod (sdot by lane), layout arm_dotprod_n8k4s16.
void qa8_qw_gemv_1x8c4__dotprod(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c4__dotprod(const GemmShape& shape, const UKernelArgs& args);
// Int8 matrix multiply, armv8.2-a+dotprod+i8mm (smmla), layout arm_i8mm_n8k8s16.
void qa8_qw_gemv_1x8c8__i8mm(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c8__i8mm(const GemmShape& shape, const UKernelArgs& args);

}  // namespace lowbit
