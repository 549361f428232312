# x86-64 micro-kernels: one TU per kernel, each built with its ISA's flags only.
# -fno-tree-ter: GCC 12's expansion otherwise moves the int16 partial-sum adds of the AVX2
# dot products past all their products, which then go through the stack (docs/x86-kernels.md);
# -fno-tree-reassoc keeps its accumulator chains as written. GCC's flags only (clang: the
# fuzzers) — they change speed, never results.
set(x86_gcc_flags "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(x86_gcc_flags ";-fno-tree-ter;-fno-tree-reassoc")
endif()
set(LOWBIT_X86_AVX2_FLAGS "-mavx2;-mfma;-mf16c${x86_gcc_flags}" CACHE INTERNAL "")
set(LOWBIT_X86_AVXVNNI_FLAGS "-mavx2;-mfma;-mf16c;-mavxvnni${x86_gcc_flags}" CACHE INTERNAL "")
set(LOWBIT_X86_AVX512_FLAGS "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq${x86_gcc_flags}" CACHE INTERNAL "")
set(LOWBIT_X86_AVX512VNNI_FLAGS "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni${x86_gcc_flags}" CACHE INTERNAL "")
set(LOWBIT_X86_AVX512VNNIGFNI_FLAGS "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mgfni;-mavx512vpopcntdq${x86_gcc_flags}" CACHE INTERNAL "")

set(avx2_kernels
  kernels/x86/avx2/qa8_qw_gemv_1x8c4__avx2.cpp
  kernels/x86/avx2/qa8_qw_gemv_1x8c4_sums__avx2.cpp
  kernels/x86/avx2/qa8_qw_gemm_4x8c4__avx2.cpp
  kernels/x86/avx2/f32_qa8_quantize_row__avx2.cpp
  kernels/x86/avx2/qa8_qw_lut_gemv_1x32__avx2.cpp
  kernels/x86/avx2/qa8_qw_lut_gemm_4x32__avx2.cpp
  kernels/x86/avx2/qa8_lut4_tables__avx2.cpp)
set(avxvnni_kernels
  kernels/x86/avxvnni/qa8_qw_gemv_1x8c4__avxvnni.cpp
  kernels/x86/avxvnni/qa8_qw_gemv_1x8c4_sums__avxvnni.cpp
  kernels/x86/avxvnni/qa8_qw_gemm_4x8c4__avxvnni.cpp)
set(avx512vnni_kernels
  kernels/x86/avx512vnni/qa8_qw_gemv_1x16c4__avx512vnni.cpp
  kernels/x86/avx512vnni/qa8_qw_gemm_8x16c4__avx512vnni.cpp
  kernels/x86/avx512vnni/f32_qa8_quantize_row__avx512vnni.cpp)
set(avx512vnnigfni_kernels
  kernels/x86/avx512vnnigfni/qa8_qw_gemv_1x16c4__avx512vnnigfni.cpp)
set(avx512_kernels
  kernels/x86/avx512/qa8_qw_lut_gemv_1x64__avx512.cpp
  kernels/x86/avx512/qa8_qw_lut_gemm_4x64__avx512.cpp)
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_X86_AVX2_FLAGS}" ${avx2_kernels})
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_X86_AVX512_FLAGS}" ${avx512_kernels})
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_X86_AVXVNNI_FLAGS}" ${avxvnni_kernels})
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_X86_AVX512VNNI_FLAGS}" ${avx512vnni_kernels})
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_X86_AVX512VNNIGFNI_FLAGS}" ${avx512vnnigfni_kernels})
# The kernels a CPU may lack, which the tests also run through SIMDe (tests/CMakeLists.txt),
# and the AVX2 quantizer and table builder the AVX-VNNI and AVX-512 ones call. Each file
# defines one function named like it.
set(LOWBIT_X86_EMULATED_KERNELS ${avxvnni_kernels} ${avx512vnni_kernels} ${avx512vnnigfni_kernels} ${avx512_kernels}
    kernels/x86/avx2/f32_qa8_quantize_row__avx2.cpp kernels/x86/avx2/qa8_lut4_tables__avx2.cpp CACHE INTERNAL "")
