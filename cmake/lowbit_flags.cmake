# Every translation unit is built for the baseline ISA (x86-64 / armv8-a) and with
# -ffp-contract=off: the bit-exact contract (DESIGN §1) forbids the compiler from fusing or
# splitting f32 operations. ISA-specific kernels get their own flags per file
# (lowbit_isa_sources), and are reached only through the registry.
add_compile_options(-Wall -Wextra -ffp-contract=off -fno-math-errno)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(LOWBIT_ARCH x86_64)
  add_compile_options(-march=x86-64 -mtune=generic)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(LOWBIT_ARCH arm64)
  add_compile_options(-march=armv8-a)
else()
  set(LOWBIT_ARCH other)
endif()

if(LOWBIT_SANITIZE)
  add_compile_options(-fsanitize=${LOWBIT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${LOWBIT_SANITIZE})
endif()

# Sanitizer builds leave the ISA kernel files uninstrumented: instrumented, one kernel file
# took over 5 minutes to compile with GCC 12 (ASan or UBSan alone, -O1 or -O2; 49 s plain), which
# put `make test` past CI's budget. The suite still runs them and checks their bytes; the
# sanitizers see everything around them (packing, planning, threads, the tests' buffers).
set(LOWBIT_KERNEL_SANITIZE_FLAGS "")
if(LOWBIT_SANITIZE OR LOWBIT_UNINSTRUMENTED_KERNELS)
  set(LOWBIT_KERNEL_SANITIZE_FLAGS -fno-sanitize=all)
endif()

# lowbit_isa_sources(<list-var> <flags> <files...>): appends files to the list and gives them
# their ISA's target flags.
function(lowbit_isa_sources listvar flags)
  set(opts ${flags} ${LOWBIT_KERNEL_SANITIZE_FLAGS})
  foreach(f ${ARGN})
    set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${opts}")
  endforeach()
  set(${listvar} ${${listvar}} ${ARGN} PARENT_SCOPE)
endfunction()
