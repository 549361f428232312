#!/usr/bin/env bash
# The whole test suite, as `make test` runs it. With an argument, only that stage.
set -euo pipefail
cd "$(dirname "$0")/.."
stage="${1:-all}"
jobs=$(nproc)
t0=$(date +%s)

configure_build() {  # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DLOWBIT_BUILD_TESTS=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

section() { echo; echo "=== $* ($(( $(date +%s) - t0 ))s)"; }

if [ "$stage" = all ] || [ "$stage" = native ]; then
  section "native build and tests"
  configure_build build -DCMAKE_BUILD_TYPE=Release
  (cd build && ctest --output-on-failure -j2)
  # Every kernel path on this one machine: each LOWBIT_ISA cap.
  for cap in scalar avx2 avx2+avxvnni avx512; do
    section "kernel tests with LOWBIT_ISA=$cap"
    LOWBIT_ISA=$cap ./build/tests/test_kernels --gtest_brief=1
  done
fi

if [ "$stage" = all ] || [ "$stage" = python ]; then
  # Debian's python3 (with torch and numpy), whatever python3 comes first on PATH.
  section "Python package and torch.ops.lowbit (pytest)"
  configure_build build -DCMAKE_BUILD_TYPE=Release -DLOWBIT_PYTHON=ON -DPython_EXECUTABLE=/usr/bin/python3
  cmake --build build --target lowbit_op_overhead  # examples/op_overhead.cpp still builds
  PYTHONPATH="$PWD/build/python" LOWBIT_CLI="$PWD/build/tools/lowbit" /usr/bin/python3 -m pytest -q tests/python
fi

if [ "$stage" = all ] || [ "$stage" = asan ]; then
  section "ASan+UBSan build and tests"
  # -O1 with line tables and asserts on: the build (the suite's longest stage) takes half the
  # time of -O2 -g, and the reports still name file and line.
  configure_build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOWBIT_SANITIZE=address,undefined \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DLOWBIT_EMULATED_TESTS=OFF
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j2)
fi

if [ "$stage" = all ] || [ "$stage" = tsan ]; then
  section "TSan build and concurrency tests"
  # -O1 -g1 as for ASan: the build is most of this stage's time.
  cmake -S . -B build-tsan -G Ninja -DLOWBIT_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOWBIT_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DLOWBIT_BUILD_TOOLS=OFF -DLOWBIT_EMULATED_TESTS=OFF >/dev/null
  cmake --build build-tsan -j"$jobs" --target test_concurrency test_tuning_concurrency test_selection
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure --no-tests=error -L concurrency)
  TSAN_OPTIONS=halt_on_error=1 ./build-tsan/tests/test_selection --gtest_brief=1 --gtest_filter='PerCore.*'
fi

if [ "$stage" = all ] || [ "$stage" = fuzz ]; then
  section "libFuzzer harnesses, 20 s each"
  bash scripts/fuzz.sh 20
fi

if [ "$stage" = all ] || [ "$stage" = qemu-x86 ]; then
  section "x86 CPU-model matrix under qemu"
  bash scripts/test_qemu_x86.sh build
fi

if [ "$stage" = all ] || [ "$stage" = aarch64 ]; then
  if [ -f scripts/test_aarch64.sh ]; then
    section "aarch64 cross build under qemu"
    bash scripts/test_aarch64.sh
  fi
fi
section "done"
