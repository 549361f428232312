#!/usr/bin/env bash
# Runs the test binaries and the CLI under qemu CPU models that lack features of this machine:
# Nehalem (no AVX: the portable path only) and Haswell (AVX2, no AVX-512). An illegal
# instruction anywhere kills the run (SIGILL), and test_x86_selection asserts the family the
# planner picked for the CPU it finds itself on.
set -euo pipefail
# OpenBLAS (the CLI's f32 baseline) must detect the emulated CPU: a core type forced in the
# environment (OPENBLAS_CORETYPE=Haswell) runs AVX2 code under -cpu Nehalem (SIGILL).
unset OPENBLAS_CORETYPE
build="${1:-build}"
for cpu in Nehalem Haswell; do
  for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    echo "--- qemu-x86_64 -cpu $cpu $(basename "$t")"
    # Cli.* start the CLI through popen, which runs natively: the CLI is run directly below.
    qemu-x86_64 -cpu "$cpu" "$t" --gtest_brief=1 --gtest_filter="-Cli.*"
  done
  echo "--- qemu-x86_64 -cpu $cpu lowbit (info, explain, run)"
  qemu-x86_64 -cpu "$cpu" "$build/tools/lowbit" info
  qemu-x86_64 -cpu "$cpu" "$build/tools/lowbit" explain --n 512 --k 512 --m 5 --bits 4 --group 32
  qemu-x86_64 -cpu "$cpu" "$build/tools/lowbit" run --model qwen2.5-0.5b --m 4 >/dev/null
done
