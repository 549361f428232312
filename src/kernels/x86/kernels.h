// x86-64 micro-kernels (declarations only: each is defined in a TU built with its ISA's
// flags and may be called only when the CPU has that ISA; the registry guarantees it).
#pragma once

#include "registry/kernel.h"

namespace lowbit {

// AVX2 (vpmaddubsw / vpmaddwd), layout x86_avx2_n8k4s32.
void qa8_qw_gemm_1x8c4__avx2(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c4__avx2(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_16x8c4__avx2(const GemmShape& shape, const UKernelArgs& args);
// AVX-VNNI (256-bit vpdpbusd), same layout as AVX2.
void qa8_qw_gemm_1x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_16x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args);
// AVX-512 VNNI (512-bit vpdpbusd), layout x86_avx512_n16k4s64.
void qa8_qw_gemm_1x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_16x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args);

}  // namespace lowbit
