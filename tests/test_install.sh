#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds two consumers against it: one with
# find_package(lowbit) (shared and static targets), one with pkg-config. Then what a user without
# the benchmark baselines gets: LOWBIT_BASELINES=OFF configures without them, and the command as
# that configuration builds it (NOBASE_CLI: the build's lowbit_cli_nobaselines, the same objects
# but baselines.cpp; the library does not depend on the baselines) runs, links no baseline and
# says which baselines it lacks.
# Usage: test_install.sh BUILD SRC [NOBASE_CLI]
set -euo pipefail
build=$1; src=$2; nobase_cli=${3:-}
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
  -DLOWBIT_BUILD_TESTS=OFF -DLOWBIT_PYTHON=OFF > "$tmp/nobase.log"
grep -q "lowbit benchmark baselines: OpenBLAS 0, oneDNN 0" "$tmp/nobase.log" ||
  { echo "FAIL: LOWBIT_BASELINES=OFF configured with a baseline" >&2; cat "$tmp/nobase.log" >&2; exit 1; }
if grep -E -q 'openblas|dnnl|gomp' "$tmp/nobase/build.ninja"; then
  echo "FAIL: LOWBIT_BASELINES=OFF links a baseline" >&2; grep -E 'openblas|dnnl|gomp' "$tmp/nobase/build.ninja" >&2; exit 1
fi
if [ -n "$nobase_cli" ]; then
  if readelf -d "$nobase_cli" | grep -E 'NEEDED.*(openblas|dnnl|gomp)'; then
    echo "FAIL: the command without baselines links a baseline" >&2; exit 1
  fi
  "$nobase_cli" --help >/dev/null
  "$nobase_cli" info >/dev/null
  "$nobase_cli" bench --quick --reps 1 > "$tmp/bench.txt"
  grep -q "this build has no OpenBLAS and oneDNN baseline" "$tmp/bench.txt" ||
    { echo "FAIL: bench does not say which baselines are missing" >&2; cat "$tmp/bench.txt" >&2; exit 1; }
fi
echo "install consumers ok (and the command without baselines)"
