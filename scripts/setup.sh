#!/usr/bin/env bash
# Installs the Debian packages a command needs, only those that are missing.
# Usage: scripts/setup.sh [build|run|test|bench|cross]   (default: build)
#   build  the library and the lowbit command: compiler, CMake, cpuinfo, pthreadpool, zlib
#   run    build + OpenBLAS (the f32 baseline `lowbit run` times next to lowbit)
#   test   run + GoogleTest, SIMDe (emulated AVX-512 / AVX-VNNI kernels), qemu-user, oneDNN
#          (the optional int8 baseline, so its configure path is tested), and the Python package's
#          build and tests: Python headers, pybind11, numpy, pytest, PyTorch (python3-torch,
#          libtorch-dev) for torch.ops.lowbit
#   bench  run + Google Benchmark and oneDNN
#   cross  the aarch64 cross compiler and qemu-user
set -euo pipefail
want=(cmake ninja-build g++ make pkg-config zlib1g-dev libcpuinfo-dev libpthreadpool-dev)
case "${1:-build}" in
  build) ;;
  run)   want+=(libopenblas-dev) ;;
  test)  want+=(libopenblas-dev libdnnl-dev libgtest-dev libgmock-dev libsimde-dev qemu-user
               python3-dev pybind11-dev python3-numpy python3-pytest python3-torch libtorch-dev) ;;
  bench) want+=(libopenblas-dev libdnnl-dev libbenchmark-dev) ;;
  cross) want+=(qemu-user g++-aarch64-linux-gnu) ;;
  *) echo "setup.sh: unknown profile '$1' (build|run|test|bench|cross)" >&2; exit 2 ;;
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
