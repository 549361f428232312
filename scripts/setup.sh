#!/usr/bin/env bash
# Installs the Debian packages lowbit needs, only those that are missing.
# Usage: scripts/setup.sh [build|test|bench|cross]   (default: build)
set -euo pipefail
want=(cmake ninja-build g++ make pkg-config zlib1g-dev libcpuinfo-dev libpthreadpool-dev
      libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev libdnnl-dev
      libsimde-dev)  # libsimde-dev: the x86 kernels this CPU lacks run emulated in tests
case "${1:-build}" in
  build) ;;
  test)  want+=(qemu-user) ;;
  bench) want+=(libdnnl-dev) ;;
  cross) want+=(qemu-user g++-aarch64-linux-gnu) ;;
  *) echo "setup.sh: unknown profile '$1' (build|test|bench|cross)" >&2; exit 2 ;;
esac
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
