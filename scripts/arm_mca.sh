#!/usr/bin/env bash
# Static throughput of the aarch64 kernels' steady-state loop with llvm-mca-19
# (docs/arm-kernels.md). The harness bench/arm_mca/mca_<isa>.cpp fixes the group size at 32,
# so one iteration of the loop extracted from each function is one 8-column x 32-k block
# of MR rows, unpacking and per-group scaling included. Reference loops: 16 independent
# sdot / smmla accumulators.
# Usage: scripts/arm_mca.sh [OUT_DIR]   (default: build-aarch64/mca); prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build-aarch64/mca}"
mkdir -p "$out"
mca=llvm-mca-19
command -v "$mca" >/dev/null || { echo "arm_mca.sh: needs llvm-mca-19 (Debian llvm-19)" >&2; exit 2; }
iters=300
declare -A flags=([neon]="-march=armv8-a" [dotprod]="-march=armv8.2-a+dotprod"
                  [i8mm]="-march=armv8.2-a+dotprod+i8mm")
for isa in neon dotprod i8mm; do
  aarch64-linux-gnu-g++ -std=c++17 -O3 -ffp-contract=off -fno-math-errno ${flags[$isa]} \
    -Isrc -Iinclude -S "bench/arm_mca/mca_$isa.cpp" -o "$out/mca_$isa.s"
done

# Cycles per iteration of FILE on CPU (empty when the model lacks an instruction).
cycles() {
  "$mca" -mtriple=aarch64 -mcpu="$2" -mattr=+dotprod,+i8mm -iterations=$iters "$1" 2>/dev/null |
    awk -v n=$iters '/^Total Cycles:/ {printf "%.1f", $3 / n}'
}

# Reference loops: independent accumulators, nothing else.
{ for i in $(seq 0 15); do echo "	sdot	v$((i + 16)).4s, v0.16b, v1.16b"; done; } >"$out/ref_sdot.s"
{ for i in $(seq 0 15); do echo "	smmla	v$((i + 16)).4s, v0.16b, v1.16b"; done; } >"$out/ref_smmla.s"

# cortex-a76 is left out: LLVM 19 schedules it with the Cortex-A57 model (same numbers), so
# Neoverse N1 (an A76 derivative) stands for it. A cell is "-" where that core lacks the ISA.
cpus=(cortex-a53 cortex-a55 cortex-a510 neoverse-n1 neoverse-n2)
has_isa() {  # isa cpu
  case "$1:$2" in
    dotprod:cortex-a53 | i8mm:cortex-a53 | i8mm:cortex-a55 | i8mm:neoverse-n1) return 1 ;;
    smmla:cortex-a53 | smmla:cortex-a55 | smmla:neoverse-n1 | sdot:cortex-a53) return 1 ;;
  esac
}
# The row's cells after its first columns: "cycles (MAC/cycle)" per CPU, "-" without the ISA.
cells() {  # isa loop-file macs
  local line="" cpu c
  for cpu in "${cpus[@]}"; do
    has_isa "$1" "$cpu" || { line+=" - |"; continue; }
    c=$(cycles "$2" "$cpu")
    if [ -n "$c" ]; then line+=" $c ($(awk -v m="$3" -v c="$c" 'BEGIN{printf "%.1f", m / c}')) |"; else line+=" n/a |"; fi
  done
  echo "$line"
}
echo "| loop | bits | MACs/iter | instr | $(printf '%s cyc (MAC/cyc) | ' "${cpus[@]}")"
echo "|---|---|---|---|$(printf -- '---|%.0s' "${cpus[@]}")"
for ref in sdot:16:64 smmla:16:128; do  # name:count:MACs x 4
  IFS=: read -r name n per <<<"$ref"
  macs=$((n * per / 4))  # sdot: 16 MACs, smmla: 32
  echo "| $n x $name, independent (peak) | - | $macs | $n |$(cells "$name" "$out/ref_$name.s" "$macs")"
done
for isa in neon dotprod i8mm; do
  for mr in 1 4; do
    for bits in 4 8 3; do
      fn="mca_${isa}_mr${mr}_b${bits}"
      loop="$out/$fn.s"
      python3 bench/arm_mca/extract_loop.py "$out/mca_$isa.s" "$fn" >"$loop"
      macs=$((mr * 8 * 32))
      echo "| $fn | $bits | $macs | $(grep -c . "$loop") |$(cells "$isa" "$loop" "$macs")"
    done
  done
done
