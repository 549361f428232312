#!/usr/bin/env bash
# Static throughput of the x86 kernels at every weight width (docs/x86-kernels.md, "Every
# width"), with llvm-mca-19: the same tracing as scripts/x86_mca.sh (one call traced under gdb,
# instructions this CPU lacks stepped over; one group step cut out), per kernel and width.
#
# Per group step (group 32, no zero points, bf16 scales) and per 1024 MACs: instructions,
# dot instructions, and per CPU model llvm-mca's simulated cycles of the whole step ("cyc")
# and of the step without its dots, loads kept ("rest", bench/x86_mca/strip_dots.py). Then
# the cycles per weight byte the step reads (planes + scales), the figure to compare with a
# core's DRAM read rate in bytes per cycle: "cyc/B" from the simulated cycles, except on
# Zen 4, whose LLVM 19 model issues 512-bit vpdpbusd once per 2 cycles where the CPU issues
# one per cycle (MEASURING.md): there max(rest, dots) / bytes.
#
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/x86_mca_widths}
h=bench/x86_mca
. $h/lowbit_step.sh
mca_harness x86_mca_widths.sh "$out"
bin=$out/harness_lowbit

kernels=${*:-"qa8_qw_gemv_1x8c4__avx2 qa8_qw_gemm_4x8c4__avx2 qa8_qw_gemv_1x8c4__avxvnni
qa8_qw_gemm_4x8c4__avxvnni qa8_qw_gemv_1x16c4__avx512vnni qa8_qw_gemm_8x16c4__avx512vnni"}
bits_list=${BITS:-"1 2 3 4 5 6 7 8"}
cpus_for() {
  case $1 in
    *avx512vnni|*avx512vnnigfni) echo "znver4 sapphirerapids" ;;
    *avxvnni) echo "alderlake znver4" ;;
    *) echo "znver3 znver4" ;;
  esac
}
# Columns per call: the panels a kernel runs at once (one pass over the groups), so the
# traced call has exactly one group loop: the GEMVs four panels (the 256-bit ones two at
# widths of several planes: gemv_panels in their traits), the GEMMs theirs (the AVX2 one a
# single panel at 8 bits: gemm_panels).
cols_for() {  # kernel bits
  case $1 in
    *gemv_1x16*) echo 64 ;;
    *gemv*) case $2 in 1|2|4|8) echo 32 ;; *) echo 16 ;; esac ;;
    *gemm*__avx2) case $2 in 8) echo 8 ;; *) echo 16 ;; esac ;;
    *) echo 16 ;;
  esac
}
rows_for() { local t=${1#*_gemm_}; t=${t#*_gemv_}; echo "${t%%x*}"; }
groups=6 k=$((6 * 32))

mca_cycles() {  # file cpu -> simulated cycles per iteration
  llvm-mca-19 -mtriple=x86_64 -mcpu="$2" -iterations=200 "$1" 2>/dev/null | awk '/^Total Cycles:/ {print $3 / 200}'
}
per() { awk -v v="$1" -v m="$2" 'BEGIN {printf "%.1f", v * 1024 / m}'; }
echo "| kernel | bits | instr | dots | CPU | cyc | rest | cyc/B |"
echo "|---|---|---|---|---|---|---|---|"
for kn in $kernels; do
  m=$(rows_for "$kn")
  case $kn in *avx2) dot=vpmaddubsw ;; *) dot=vpdpbusd ;; esac
  for b in $bits_list; do
    n=$(cols_for "$kn" "$b")
    id=${kn}_b$b
    mca_step "$bin" "$kn" "$m" "$n" $k "$b" $groups "$out/$id.s"
    python3 $h/strip_dots.py "$out/$id.s" $dot 1 >"$out/$id.rest.s"
    macs=$((m * n * 32)) bytes=$((n * 32 * b / 8 + n * 2))
    ins=$(grep -c '^	' "$out/$id.s") dots=$(grep -cE "^	(\{vex\} )?$dot " "$out/$id.s" || true)
    for c in $(cpus_for "$kn"); do
      cyc=$(mca_cycles "$out/$id.s" $c) rest=$(mca_cycles "$out/$id.rest.s" $c)
      [ $c = znver4 ] && [ $dot = vpdpbusd ] && [[ $kn == *avx512vnni* ]] &&
        eff=$(awk -v r="$rest" -v d="$dots" 'BEGIN {print (r > d ? r : d)}') || eff=$cyc
      echo "| $kn | $b | $(per $ins $macs) | $(per $dots $macs) | $c | $(per $cyc $macs) | $(per $rest $macs) | $(awk -v c="$eff" -v b=$bytes 'BEGIN {printf "%.3f", c / b}') |"
    done
  done
done
