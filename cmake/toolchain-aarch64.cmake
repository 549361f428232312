# Cross build for aarch64 Linux with Debian's g++-aarch64-linux-gnu; binaries run under
# qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR, so gtest_discover_tests and try-runs work).
#
# The arm64 libraries lowbit links (cpuinfo, zlib) and a cross-built GoogleTest
# live in a sysroot unpacked from Debian's arm64 .debs (scripts/test_aarch64.sh makes it);
# glibc and libstdc++ come from the cross toolchain under /usr/aarch64-linux-gnu.
#   LOWBIT_AARCH64_SYSROOT  that sysroot (default: <source>/build-aarch64/sysroot)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT LOWBIT_AARCH64_SYSROOT)
  if(DEFINED ENV{LOWBIT_AARCH64_SYSROOT})
    set(LOWBIT_AARCH64_SYSROOT "$ENV{LOWBIT_AARCH64_SYSROOT}")
  else()
    get_filename_component(LOWBIT_AARCH64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../build-aarch64/sysroot" ABSOLUTE)
  endif()
endif()
set(LOWBIT_AARCH64_SYSROOT "${LOWBIT_AARCH64_SYSROOT}" CACHE PATH "arm64 sysroot of lowbit's dependencies")
# try_compile projects re-read this file: pass the variable on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LOWBIT_AARCH64_SYSROOT)

set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-aarch64;-L;/usr/aarch64-linux-gnu")

set(CMAKE_FIND_ROOT_PATH "${LOWBIT_AARCH64_SYSROOT};/usr/aarch64-linux-gnu")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config must read the arm64 .pc files only, and prefix their paths with the sysroot.
set(ENV{PKG_CONFIG_LIBDIR} "${LOWBIT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${LOWBIT_AARCH64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${LOWBIT_AARCH64_SYSROOT}")

# The dependencies' shared objects need each other at link time (libcpuinfo.so.0 etc.).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${LOWBIT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${LOWBIT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
