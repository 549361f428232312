#!/usr/bin/env bash
# `make cross-aarch64 PREFIX=<dir>`: cross-builds lowbit for aarch64 Linux and installs the
# library (shared and static), headers, lowbit.pc, the CMake package and the lowbit CLI into
# <dir>, together with the arm64 run-time libraries they need (cpuinfo, zlib;
# OpenBLAS, libgfortran and oneDNN for the CLI), so <dir> works as is on an arm64 machine or
# under qemu-aarch64. Then it cross-compiles docs/examples/cross_check.c against the
# installed tree through pkg-config, exactly as docs/cross-aarch64.md shows, and runs it and
# `lowbit info` under qemu-aarch64.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${1:-}" ]; then
  echo "usage: make cross-aarch64 PREFIX=<install dir>" >&2
  exit 2
fi
prefix="$(realpath -m "$1")"
sysroot="$PWD/build-aarch64/sysroot"
build="$PWD/build-aarch64/dist"
bash scripts/aarch64_sysroot.sh "$sysroot"

# Install rpaths: the CLI finds lib/ next to bin/, liblowbit.so its dependencies beside itself.
# DT_RPATH (not RUNPATH) for the CLI, so it also serves OpenBLAS looking for libgfortran.
cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64.cmake" \
  -DLOWBIT_AARCH64_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=Release \
  -DLOWBIT_BUILD_TESTS=OFF -DLOWBIT_BUILD_TOOLS=ON \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
  '-DCMAKE_INSTALL_RPATH=$ORIGIN;$ORIGIN/../lib' -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags \
  >/dev/null
cmake --build "$build" -j"$(nproc)"
cmake --install "$build" >/dev/null

# The arm64 run-time libraries lowbit and its CLI link, from the sysroot.
multi="$sysroot/usr/lib/aarch64-linux-gnu"
for so in libcpuinfo.so.0 libz.so.1 libopenblas.so.0 libgfortran.so.5 libdnnl.so.2; do
  cp -L "$multi/$so" "$prefix/lib/$so"
done
echo "cross_aarch64.sh: installed into $prefix"

# The documented way to build against it (docs/cross-aarch64.md).
out="$build/cross_check"
# shellcheck disable=SC2046
aarch64-linux-gnu-gcc -O2 -Wall -Wextra docs/examples/cross_check.c -o "$out" \
  $(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config --cflags --libs lowbit) \
  -Wl,-rpath,"$prefix/lib"
for cpu in cortex-a53 cortex-a76 max; do
  printf '  qemu-aarch64 -cpu %-10s ' "$cpu"
  qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "$cpu" "$out"
done
qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max "$prefix/bin/lowbit" info | head -1
