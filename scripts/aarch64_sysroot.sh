#!/usr/bin/env bash
# Makes the arm64 sysroot of lowbit's dependencies for the cross build, without touching the
# host's dpkg configuration: a private apt state (its own lists, arm64 only, the host's
# sources) downloads Debian's arm64 .debs, `dpkg -x` unpacks them, and GoogleTest is
# cross-built from /usr/src/googletest and installed into the same sysroot.
# Usage: scripts/aarch64_sysroot.sh [SYSROOT]   (default: build-aarch64/sysroot)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh cross
sysroot="$(realpath -m "${1:-build-aarch64/sysroot}")"
stamp="$sysroot/.lowbit-sysroot-v4"
[ -f "$stamp" ] && exit 0

work="$(realpath -m "$sysroot/../aarch64-apt")"
debs=(libcpuinfo0 libcpuinfo-dev zlib1g zlib1g-dev
      libopenblas0-pthread libopenblas-pthread-dev libgfortran5   # the CLI's baselines:
      libdnnl2 libdnnl-dev)                                        # OpenBLAS and oneDNN
echo "aarch64_sysroot.sh: downloading arm64 ${debs[*]} into $sysroot"
rm -rf "$work" "$sysroot"
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs" "$sysroot"
touch "$work/state/status"
cat > "$work/apt.conf" <<CONF
Dir::State "$work/state";
Dir::State::status "$work/state/status";
Dir::Cache "$work/cache";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Sandbox::User "root";
CONF
export APT_CONFIG="$work/apt.conf"
apt-get update -qq
(cd "$work/debs" && apt-get download -qq "${debs[@]}")
for d in "$work"/debs/*.deb; do dpkg -x "$d" "$sysroot"; done
# Merged /usr, as on the target: one directory holds every run-time library.
if [ -d "$sysroot/lib" ] && [ ! -L "$sysroot/lib" ]; then
  cp -a "$sysroot/lib/." "$sysroot/usr/lib/"
  rm -rf "$sysroot/lib"
  ln -s usr/lib "$sysroot/lib"
fi
# Absolute symlinks (libz.so -> /lib/aarch64-linux-gnu/...) would point into the host.
find "$sysroot" -type l | while read -r l; do
  t="$(readlink "$l")"
  case "$t" in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$sysroot$t")" "$l" ;; esac
done

# What Debian's alternatives system would link: OpenBLAS as the default cblas / libopenblas.
multi="$sysroot/usr/lib/aarch64-linux-gnu"
for h in cblas.h f77blas.h openblas_config.h; do
  ln -sfn "openblas-pthread/$h" "$sysroot/usr/include/aarch64-linux-gnu/$h"
done
ln -sfn openblas-pthread/libopenblas.so "$multi/libopenblas.so"
ln -sfn openblas-pthread/libopenblas.so.0 "$multi/libopenblas.so.0"

echo "aarch64_sysroot.sh: cross-building GoogleTest"
cmake -S /usr/src/googletest -B "$work/googletest" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64.cmake" -DLOWBIT_AARCH64_SYSROOT="$sysroot" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$sysroot/usr" -DCMAKE_INSTALL_LIBDIR=lib/aarch64-linux-gnu \
  -DBUILD_GMOCK=ON >/dev/null
cmake --build "$work/googletest" >/dev/null
cmake --install "$work/googletest" >/dev/null
rm -rf "$work"
touch "$stamp"
