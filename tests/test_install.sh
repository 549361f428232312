#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds two consumers against it: one with
# find_package(lowbit) (shared and static targets), one with pkg-config.
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/install_consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/consumer_c"
"$tmp/consumer/consumer_static"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" cc -o "$tmp/pc" "$src/tests/c_smoke.c" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs lowbit) -lm
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc"
echo "install consumers ok"
