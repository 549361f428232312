// x86-64 micro-kernels (declarations only: each is defined in a TU built with its ISA's
// flags and may be called only when the CPU has that ISA; the registry guarantees it).
// docs/x86-kernels.md describes them; gemv.h and gemm.h hold the loops.
#pragma once

#include "format/row_quant.h"
#include "registry/kernel.h"

namespace lowbit {

// AVX2 (vpmaddubsw / vpmaddwd), layout x86_avx2_n8k4s32_sums.
void qa8_qw_gemv_1x8c4__avx2(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemv_1x8c4_sums__avx2(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c4__avx2(const GemmShape& shape, const UKernelArgs& args);
// Their activation quantizer (and AVX-VNNI's): quantize_row with 256-bit vectors.
RowQuant f32_qa8_quantize_row__avx2(const float* x, size_t k, int8_t* q);
// AVX2 table lookup (vpshufb), layout x86_avx2_lut_n32k4s32 (kernels/x86/lut.h).
void qa8_qw_lut_gemv_1x32__avx2(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_lut_gemm_4x32__avx2(const GemmShape& shape, const UKernelArgs& args);
// Their lookup-table builder (and AVX-512's): lut_tables with 256-bit vectors.
void qa8_lut4_tables__avx2(const int8_t* q, size_t k, int32_t zx, size_t mr, uint8_t* out);
// AVX-VNNI (256-bit vpdpbusd / vpdpwssd), same layout as AVX2.
void qa8_qw_gemv_1x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemv_1x8c4_sums__avxvnni(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_4x8c4__avxvnni(const GemmShape& shape, const UKernelArgs& args);
// AVX-512 VNNI (512-bit vpdpbusd / vpdpwssd), layout x86_avx512_n16k4s64_sums.
void qa8_qw_gemv_1x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_gemm_8x16c4__avx512vnni(const GemmShape& shape, const UKernelArgs& args);
// The GEMV with GFNI affine unpacking and, at 1 bit, VPOPCNTDQ column sums (same layout).
void qa8_qw_gemv_1x16c4__avx512vnnigfni(const GemmShape& shape, const UKernelArgs& args);
// AVX-512 F/BW table lookup (vpshufb on zmm), layout x86_avx512_lut_n64k4s64 (kernels/x86/lut.h).
void qa8_qw_lut_gemv_1x64__avx512(const GemmShape& shape, const UKernelArgs& args);
void qa8_qw_lut_gemm_4x64__avx512(const GemmShape& shape, const UKernelArgs& args);
// The VNNI kernels' activation quantizer: quantize_row with 512-bit vectors.
RowQuant f32_qa8_quantize_row__avx512vnni(const float* x, size_t k, int8_t* q);

}  // namespace lowbit
