# aarch64 micro-kernels: one TU per kernel, each built with its ISA's -march only (the last
# -march on the command line wins over the armv8-a baseline of cmake/lowbit_flags.cmake).
# The _a55 variants add -mtune=cortex-a55: GCC then schedules them for that in-order pipeline.
# -fno-schedule-insns: GCC 12's first scheduling pass hoists a whole group's loads and unpacking
# ahead of its dot products, which then no longer fit 32 registers (accumulators spill); the
# pass after register allocation still schedules. -fno-peephole2: no load pairs (ldp of two
# q registers is 3 micro-ops where two ldr are 2 on Cortex-A57/A72-class decoders, and blocks
# Cortex-A55's load pipe for 6 cycles). The dot-product TUs add -fno-ivopts: GCC otherwise
# merges the per-group LHS and column-sum pointers into one index register, and a load with a
# register offset is two micro-ops where an immediate offset is one on Cortex-A57/A76-class
# decoders (the 4-bit GEMV's group: 43.2 -> 42.2 cycles in llvm-mca-19's cortex-a76 model,
# Neoverse N2/V2 unchanged; docs/arm-kernels.md). GCC's flags only: they change speed, never
# results.
set(arm_gcc_flags "")
set(arm_gcc_dotprod_flags "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(arm_gcc_flags ";-fno-schedule-insns;-fno-peephole2")
  set(arm_gcc_dotprod_flags "${arm_gcc_flags};-fno-ivopts")
endif()
set(LOWBIT_ARM_NEON_FLAGS "-march=armv8-a")
set(LOWBIT_ARM_DOTPROD_FLAGS "-march=armv8.2-a+dotprod${arm_gcc_dotprod_flags}")
set(LOWBIT_ARM_DOTPROD_A55_FLAGS "-march=armv8.2-a+dotprod;-mtune=cortex-a55${arm_gcc_dotprod_flags}")
set(LOWBIT_ARM_I8MM_FLAGS "-march=armv8.2-a+dotprod+i8mm${arm_gcc_flags}")

lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_ARM_NEON_FLAGS}"
  kernels/arm/neon/qa8_qw_gemv_1x8c1__neon.cpp
  kernels/arm/neon/qa8_qw_gemm_4x8c1__neon.cpp)
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_ARM_DOTPROD_FLAGS}"
  kernels/arm/dotprod/qa8_qw_gemv_1x16c4__dotprod.cpp
  kernels/arm/dotprod/qa8_qw_gemm_8x8c4__dotprod.cpp)
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_ARM_DOTPROD_A55_FLAGS}"
  kernels/arm/dotprod/qa8_qw_gemv_1x16c4__dotprod_a55.cpp
  kernels/arm/dotprod/qa8_qw_gemm_8x8c4__dotprod_a55.cpp)
lowbit_isa_sources(LOWBIT_SOURCES "${LOWBIT_ARM_I8MM_FLAGS}"
  kernels/arm/i8mm/qa8_qw_gemv_1x8c8__i8mm.cpp
  kernels/arm/i8mm/qa8_qw_gemm_8x8c8__i8mm.cpp)
