#!/usr/bin/env bash
# Runs the test binaries under qemu CPU models that lack features of this machine: Nehalem
# (no AVX: the portable path only) and Haswell (AVX2, no AVX-512). An illegal instruction
# anywhere kills the run (SIGILL), and the selection tests assert the family picked.
set -euo pipefail
build="${1:-build}"
for cpu in Nehalem Haswell; do
  for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    # Timing-free, CPU-dependent tests only; concurrency tests need real threads more than ISA.
    echo "--- qemu-x86_64 -cpu $cpu $name"
    qemu-x86_64 -cpu "$cpu" "$t" --gtest_brief=1 --gtest_filter="-*Concurrency*:*LargeShape*"
  done
done
