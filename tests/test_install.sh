#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds two consumers against it: one with
# find_package(lowbit) (shared and static targets), one with pkg-config. Then does what a user
# without the benchmark baselines does: configures, builds and installs with
# LOWBIT_BASELINES=OFF (no tests), builds the consumers against that, and checks the installed
# command runs, links no baseline and says which baselines it lacks.
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

consumers() {  # prefix, label
  local prefix=$1 out=$tmp/consumer-$2
  cmake -S "$src/tests/install_consumer" -B "$out" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$out" >/dev/null
  LD_LIBRARY_PATH="$prefix/lib" "$out/consumer_c"
  "$out/consumer_static"
  PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc -o "$out/pc" "$src/tests/c_smoke.c" \
    $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs lowbit) -lm
  LD_LIBRARY_PATH="$prefix/lib" "$out/pc"
}

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
consumers "$tmp/prefix" full

cmake -S "$src" -B "$tmp/nobase" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_BASELINES=OFF \
  -DLOWBIT_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$tmp/nobase-prefix" >/dev/null
cmake --build "$tmp/nobase" >/dev/null
cmake --install "$tmp/nobase" >/dev/null
consumers "$tmp/nobase-prefix" nobase
cli=$tmp/nobase-prefix/bin/lowbit
if readelf -d "$cli" | grep -E 'NEEDED.*(openblas|dnnl|gomp)'; then
  echo "FAIL: LOWBIT_BASELINES=OFF command links a baseline" >&2; exit 1
fi
LD_LIBRARY_PATH="$tmp/nobase-prefix/lib" "$cli" --help >/dev/null
LD_LIBRARY_PATH="$tmp/nobase-prefix/lib" "$cli" info >/dev/null
LD_LIBRARY_PATH="$tmp/nobase-prefix/lib" "$cli" bench --quick --reps 1 > "$tmp/bench.txt"
grep -q "this build has no OpenBLAS and oneDNN baseline" "$tmp/bench.txt" ||
  { echo "FAIL: bench does not say which baselines are missing" >&2; cat "$tmp/bench.txt" >&2; exit 1; }
echo "install consumers ok (with and without baselines)"
