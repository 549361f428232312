#!/usr/bin/env bash
# Static throughput of the table-lookup kernels (docs/lut-kernels.md) beside the dot-product
# ones at 1, 2 and 3 bits, with llvm-mca-19: the method of scripts/x86_mca.sh (one call traced
# under gdb, bench/x86_mca/trace_gdb.py, instructions this CPU lacks stepped over; one group
# step of group 32 cut out of it, bench/x86_mca/groupstep.py), lowbit's kernels only (no
# XNNPACK needed). Per 128 MACs of one group step (bf16-exact scales, no zero points):
#   instr   instructions executed
#   cyc     llvm-mca Block RThroughput (resource bound) / simulated cycles
# AVX2 kernels on znver3; AVX-512 ones on znver4 and sapphirerapids.
#
# Usage: scripts/x86_mca_lut.sh [OUT_DIR]   (default build/x86_mca_lut; needs
# $LOWBIT_BUILD/src/liblowbit.a, default build)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build/x86_mca_lut}")
h=bench/x86_mca
. $h/lowbit_step.sh
mca_harness x86_mca_lut.sh "$out"
mkdir -p "$out/step"

# kernel | rows | columns of one step (every panel it reads at once) | ISA
kernels="qa8_qw_gemv_1x8c4__avx2|1|32|avx2
qa8_qw_gemv_1x8c4_sums__avx2|1|32|avx2
qa8_qw_lut_gemv_1x32__avx2|1|32|avx2
qa8_qw_gemm_4x8c4__avx2|4|16|avx2
qa8_qw_lut_gemm_4x32__avx2|4|32|avx2
qa8_qw_gemv_1x16c4__avx512vnni|1|64|avx512
qa8_qw_lut_gemv_1x64__avx512|1|128|avx512
qa8_qw_gemm_8x16c4__avx512vnni|8|16|avx512
qa8_qw_lut_gemm_4x64__avx512|4|64|avx512"
run_mca() {  # file cpu -> "RThroughput simcycles" per step
  llvm-mca-19 -mtriple=x86_64 -mcpu="$2" -iterations=200 "$1" 2>/dev/null |
    awk '/^Total Cycles:/ {c = $3 / 200} /^Block RThroughput:/ {r = $3} END {printf "%s %.1f", r, c}'
}
per() { awk -v v="$1" -v m="$2" 'BEGIN {printf "%.2f", v * 128 / m}'; }
for bits in 1 2 3; do
  echo
  echo "### $bits-bit, group 32 (per 128 MACs)"
  echo
  echo "| kernel | instr | znver3 cyc (RT / sim) | znver4 cyc (RT / sim) | sapphirerapids cyc (RT / sim) |"
  echo "|---|---|---|---|---|"
  while IFS='|' read -r k rows cols isa; do
    id=${k}_b$bits
    s="$out/step/$id.s"
    mca_step "$out/harness_lowbit" "$k" "$rows" "$cols" 160 "$bits" 5 "$s"
    macs=$((rows * cols * 32))
    row="| $k | $(per "$(grep -c '^	' "$s")" $macs) |"
    for c in znver3 znver4 sapphirerapids; do
      if [ "$isa" = avx512 ] && [ $c = znver3 ] || [ "$isa" = avx2 ] && [ $c != znver3 ]; then row+=" |"; continue; fi
      read -r rt sim <<<"$(run_mca "$s" $c)"
      row+=" $(per "$rt" $macs) / $(per "$sim" $macs) |"
    done
    echo "$row"
  done <<<"$kernels"
done
