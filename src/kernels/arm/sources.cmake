# aarch64 micro-kernels: one TU per kernel, each built with its ISA's -march only (the last
# -march on the command line wins over the armv8-a baseline of cmake/lowbit_flags.cmake).
set(LOWBIT_ARM_NEON_FLAGS "-march=armv8-a")
set(LOWBIT_ARM_DOTPROD_FLAGS "-march=armv8.2-a+dotprod")
set(LOWBIT_ARM_I8MM_FLAGS "-march=armv8.2-a+dotprod+i8mm")

lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_ARM_NEON_FLAGS}"
  kernels/arm/neon/qa8_qw_gemv_1x8c1__neon.cpp
  kernels/arm/neon/qa8_qw_gemm_4x8c1__neon.cpp)
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_ARM_DOTPROD_FLAGS}"
  kernels/arm/dotprod/qa8_qw_gemv_1x8c4__dotprod.cpp
  kernels/arm/dotprod/qa8_qw_gemm_4x8c4__dotprod.cpp)
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_ARM_I8MM_FLAGS}"
  kernels/arm/i8mm/qa8_qw_gemv_1x8c8__i8mm.cpp
  kernels/arm/i8mm/qa8_qw_gemm_4x8c8__i8mm.cpp)
