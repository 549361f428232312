#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/: clang-19, ASan+UBSan) in build-fuzz, replays the
# checked-in seeds and regression inputs through each, then fuzzes each for SECONDS (default
# 60), new inputs going to build-fuzz/corpus/<harness>, crashes to build-fuzz/artifacts/.
# Prints executions per second and coverage per harness; fails on the first crash.
# Usage: scripts/fuzz.sh [SECONDS] [harness ...]   (harnesses: fuzz/fuzz_<name>.cpp)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(packed_buffer packed_file npy env cpu_spec tuning_record)
# No Python package: the harnesses do not need it, and clang finds no OpenMP for the torch ops.
# -O1 with line tables (the instrumented library builds faster than at -O2 -g) and asserts on.
cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DLOWBIT_PYTHON=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${harnesses[@]/#/fuzz_}"
mkdir -p build-fuzz/artifacts
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
printf '\n%-14s %10s %12s %8s %8s %7s\n' harness seconds "execs/s" cov ft corpus
for h in "${harnesses[@]}"; do
  bin=build-fuzz/fuzz_$h
  mkdir -p "build-fuzz/corpus/$h"
  replay=(fuzz/corpus/"$h"/*)
  [ -d "fuzz/regressions/$h" ] && replay+=(fuzz/regressions/"$h"/*)
  "$bin" "${replay[@]}" > "build-fuzz/$h.replay.log" 2>&1 ||
    { cat "build-fuzz/$h.replay.log"; echo "fuzz: $h fails on a checked-in input" >&2; exit 1; }
  "$bin" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/artifacts/$h-" "build-fuzz/corpus/$h" "fuzz/corpus/$h" \
    > "build-fuzz/$h.log" 2>&1 || { tail -40 "build-fuzz/$h.log"; echo "fuzz: $h found a crash (build-fuzz/artifacts)" >&2; exit 1; }
  last=$(grep -E '^#[0-9]+[[:space:]]+DONE' "build-fuzz/$h.log" | tail -1)
  cov=$(sed -E 's/.*cov: ([0-9]+).*/\1/' <<<"$last")
  ft=$(sed -E 's/.*ft: ([0-9]+).*/\1/' <<<"$last")
  corp=$(sed -E 's/.*corp: ([0-9]+).*/\1/' <<<"$last")
  eps=$(grep -E '^stat::average_exec_per_sec' "build-fuzz/$h.log" | awk '{print $2}')
  printf '%-14s %10s %12s %8s %8s %7s\n' "$h" "$secs" "$eps" "$cov" "$ft" "$corp"
done
