// aarch64 micro-kernels (declarations only: each is defined in a TU built with its ISA's
// -march flags and may be called only when the CPU has that ISA; the registry guarantees it).
// Every kernel handles 1-8 bit weights, zero points, bias and clamp, bit-exactly (DESIGN §1).
#pragma once

#include "registry/kernel.h"

namespace lowbit {

// NEON, armv8-a (smlal by lane on exact int16 differences), layout arm_neon_n8k1s16.
void qa8_qw_gemv_1x8c1__neon(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c1__neon(const GemmShape& shape, const UKernelArgs& args);
// NEON dot product, armv8.2-a+dotprod (sdot by lane), layout arm_dotprod_n8k4s16_sums. The
// GEMV runs two 8-column panels side by side; the GEMM computes 4 or 8 rows (code for both).
// _a55: the same contracts scheduled for in-order cores (Cortex-A55 class).
void qa8_qw_gemv_1x16c4__dotprod(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_8x8c4__dotprod(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemv_1x16c4__dotprod_a55(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_8x8c4__dotprod_a55(const GemmShape& shape, const UKernelArgs& args);
// Int8 matrix multiply, armv8.2-a+dotprod+i8mm (smmla), layout arm_i8mm_n8k8s16_sums. The GEMM
// computes 4 or 8 rows (code for both).
void qa8_qw_gemv_1x8c8__i8mm(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_8x8c8__i8mm(const GemmShape& shape, const UKernelArgs& args);

}  // namespace lowbit
