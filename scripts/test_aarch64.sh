#!/usr/bin/env bash
# The aarch64 stage of `make test`: cross-builds lowbit (library, tests, CLI) with
# g++-aarch64-linux-gnu against an arm64 sysroot (scripts/aarch64_sysroot.sh), then runs every
# test binary under qemu-aarch64 with CPU models that lack / have each feature:
#   cortex-a53  neon only            -> NEON kernels
#   cortex-a76  neon + dotprod       -> dot-product kernels
#   max         + i8mm, sve, sme     -> i8mm kernels (and, capped by LOWBIT_ISA, the others)
# An illegal instruction kills a binary (SIGILL, exit 132) and fails the stage.
# Usage: scripts/test_aarch64.sh [BUILD_DIR]   (default: build-aarch64)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-aarch64}"
sysroot="$PWD/build-aarch64/sysroot"
t0=$(date +%s)

bash scripts/aarch64_sysroot.sh "$sysroot"
cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64.cmake" \
  -DLOWBIT_AARCH64_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=Release \
  -DLOWBIT_BUILD_TESTS=ON -DLOWBIT_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
t_build=$(date +%s)

# Run-time libraries of the sysroot (cpuinfo, OpenBLAS and its libgfortran) for
# the guest's loader only; glibc and libstdc++ come from the cross toolchain's directory.
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$sysroot/usr/lib/aarch64-linux-gnu")
# The CLI tests spawn the CLI through /bin/sh, which qemu-user cannot follow into an aarch64
# binary (no binfmt_misc here); the CLI is run directly below instead.
filter="-Cli.*"
failed=0
run() {  # cpu, label, command...
  local cpu=$1 label=$2; shift 2
  local s rc=0 ms
  s=$(date +%s%N)
  "${qemu[@]}" -cpu "$cpu" "$@" >"$build/qemu-$cpu-$label.log" 2>&1 || rc=$?
  ms=$(( ($(date +%s%N) - s) / 1000000 ))
  printf '  %-12s %-32s rc=%-3s %5d ms  %s\n' "$cpu" "$label" "$rc" "$ms" \
    "$(grep -E 'PASSED|FAILED|smoke ok' "$build/qemu-$cpu-$label.log" | tail -1)"
  if [ "$rc" -ne 0 ]; then
    failed=1
    tail -40 "$build/qemu-$cpu-$label.log"
  fi
}

for cpu in cortex-a53 cortex-a76 max; do
  echo "--- qemu-aarch64 -cpu $cpu: $("${qemu[@]}" -cpu "$cpu" "$build/tools/lowbit" info | head -1)"
  for t in "$build"/tests/test_*; do
    [ -x "$t" ] && [ -f "$t" ] || continue
    run "$cpu" "$(basename "$t")" "$t" --gtest_brief=1 --gtest_filter="$filter"
  done
  [ -x "$build/tests/c_smoke" ] && run "$cpu" c_smoke "$build/tests/c_smoke"
  # The CLI itself: the layout it picks for this CPU model.
  case $cpu in
    cortex-a53) want=arm_neon_n8k1s16 kernel=qa8_qw_gemm_4x8c1__neon ;;
    cortex-a76) want=arm_dotprod_n8k4s16_sums kernel=qa8_qw_gemv_1x16c4__dotprod ;;
    *) want=arm_i8mm_n8k8s16_sums kernel=qa8_qw_gemm_8x8c8__i8mm ;;
  esac
  run "$cpu" lowbit-explain "$build/tools/lowbit" explain --n 256 --k 512 --m 5 --bits 4 --group 32 --zeros
  if ! grep -q -- "-> $want" "$build/qemu-$cpu-lowbit-explain.log"; then
    echo "  lowbit explain under -cpu $cpu did not pick $want"
    failed=1
  fi
  # `lowbit tune` on this CPU (its smoke budget): a record with this ISA's kernels, which the
  # planner then takes its numbers from.
  record="$build/qemu-$cpu-tune.json"
  run "$cpu" lowbit-tune "$build/tools/lowbit" tune --smoke --threads 1 --out "$record"
  run "$cpu" lowbit-explain-tuned -E "LOWBIT_TUNING=$record" "$build/tools/lowbit" explain --n 256 --k 512 --m 5 \
    --bits 4 --group 32
  if ! grep -q "\"name\": \"$kernel\"" "$record" ||
     ! grep -q "numbers: file $record" "$build/qemu-$cpu-lowbit-explain-tuned.log"; then
    echo "  lowbit tune under -cpu $cpu: no entry for $kernel, or explain did not use the record"
    failed=1
  fi
done
# Under `max`, every lower tier through LOWBIT_ISA: each family also runs on the newest CPU.
for cap in scalar neon dotprod; do
  run max "test_kernels.LOWBIT_ISA=$cap" -E "LOWBIT_ISA=$cap" "$build/tests/test_kernels" --gtest_brief=1
  run max "test_arm_selection.LOWBIT_ISA=$cap" -E "LOWBIT_ISA=$cap" "$build/tests/test_arm_selection" --gtest_brief=1
done
t_end=$(date +%s)
echo "aarch64: build $((t_build - t0))s, emulated tests $((t_end - t_build))s"
exit $failed
