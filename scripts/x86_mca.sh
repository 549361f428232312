#!/usr/bin/env bash
# Static throughput of the x86 kernels beside XNNPACK's (docs/x86-kernels.md), with llvm-mca-19.
#
# For every kernel: one call on k = 160 (5 groups of 32, 4-bit, no zero points) is traced
# under gdb (bench/x86_mca/trace_gdb.py; instructions this CPU lacks are stepped over, the
# path is the real one), one whole group step as executed is cut out of the trace
# (bench/x86_mca/groupstep.py), and llvm-mca-19 runs it on each CPU model. Per 4096 MACs:
#   instr   instructions executed
#   cyc     llvm-mca Block RThroughput (resource bound) / simulated cycles
#   rest    Block RThroughput of the step without its dot instructions (vpdpbusd, or
#           vpmaddubsw for AVX2): the work around the dot products, the figure to compare
#           where the model's dot throughput is wrong (LLVM 19's znver5 is its Zen 4 model
#           and issues 512-bit vpdpbusd once per cycle; Zen 5 issues two).
#   rest+ld the same with the loads kept as plain loads: each dot's memory operand and every
#           broadcast from memory (lowbit's AVX-512 kernels broadcast activations inside
#           vpdpbusd, XNNPACK with separate vpbroadcastq) becomes a general-register load.
#
# XNNPACK is built from the sources ../shared/anchors fetches (AB, default
# ~/.cache/lowbit-anchors; only its configure step is needed: the kernel files are compiled
# here with the flags of its flags.make). lowbit is this tree's Release build (LOWBIT_BUILD,
# default build; `cmake --build build --target lowbit_static`).
#
# Usage: scripts/x86_mca.sh [OUT_DIR]   (default build/x86_mca); prints Markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$(realpath -m "${1:-build/x86_mca}")
AB=${AB:-${XDG_CACHE_HOME:-$HOME/.cache}/lowbit-anchors}
lb=${LOWBIT_BUILD:-build}
mca=llvm-mca-19
for t in $mca llvm-objdump-19 gdb gcc g++; do
  command -v $t >/dev/null || { echo "x86_mca.sh: needs $t" >&2; exit 2; }
done
[ -f "$lb/src/liblowbit.a" ] || { echo "x86_mca.sh: no $lb/src/liblowbit.a (build lowbit_static)" >&2; exit 2; }
flags=$AB/xnnpack-build/CMakeFiles/xnnpack-microkernels-prod.dir/flags.make
[ -f "$flags" ] || { echo "x86_mca.sh: no $flags (run ../shared/anchors/build.sh xnnpack)" >&2; exit 2; }
mkdir -p "$out"/{trace,step,mca}
h=bench/x86_mca

# ---- harnesses --------------------------------------------------------------------------
g++ -O1 -g -no-pie -std=c++17 -Isrc -Iinclude $h/harness_lowbit.cpp "$lb/src/liblowbit.a" \
  $(pkg-config --libs libcpuinfo) -lz -lpthread -o "$out/harness_lowbit"
xnn_src() {  # kernel name -> source file
  local k=${1#xnn_qd8_f32_} ; local kind=${k%%_gemm*} ; local tile=${k#*ukernel_}
  echo "src/qd8-f32-$kind-gemm/gen/qd8-f32-$kind-gemm-${tile%%__*}-minmax-${tile#*__}.c" | tr _ -
}
xnn_kernels="xnn_qd8_f32_qb4w_gemm_minmax_ukernel_8x16c8__avx512vnni_prfm
xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x16c8__avx512vnni_prfm
xnn_qd8_f32_qb4w_gemm_minmax_ukernel_3x8c8__avx2
xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x8c8__avx2
xnn_qd8_f32_qc4w_gemm_minmax_ukernel_5x8c8__avxvnni_prfm
xnn_qd8_f32_qc4w_gemm_minmax_ukernel_1x8c8__avxvnni_prfm"
defs=$(sed -n 's/^C_DEFINES = //p' "$flags")
cflags=$(sed -n 's/^C_FLAGS = //p' "$flags")
objs=()
for k in $xnn_kernels; do
  src=$(xnn_src "$k")
  own=$(grep -F "/$src.o_FLAGS" "$flags" | sed 's/.*_FLAGS = //')
  gcc $defs -I"$AB/src/XNNPACK" -I"$AB/src/pthreadpool/include" $cflags $own \
    -c "$AB/src/XNNPACK/$src" -o "$out/$k.o"
  objs+=("$out/$k.o")
done
gcc -O1 -g -no-pie $h/harness_xnn.c "${objs[@]}" -o "$out/harness_xnn"

# ---- traces and group steps -------------------------------------------------------------
# label | harness | symbol | harness args | steps in the call | MACs per step | ISA | dot
# (XNNPACK's qc4w kernels have no groups: their step is one 16-k iteration of the k loop.
# XNNPACK's AVX2 kernels widen to int16 and multiply with vpmaddwd.)
kernels="$(cat <<'EOF'
lb 1x8c4 avx2 (gemv)|lowbit|qa8_qw_gemv_1x8c4__avx2|qa8_qw_gemv_1x8c4__avx2 1 32 160 32 4 0|5|1024|avx2|vpmaddubsw
lb 1x8c4 avx2 (gemv, sums)|lowbit|qa8_qw_gemv_1x8c4_sums__avx2|qa8_qw_gemv_1x8c4_sums__avx2 1 32 160 32 4 0|5|1024|avx2|vpmaddubsw
lb 4x8c4 avx2|lowbit|qa8_qw_gemm_4x8c4__avx2|qa8_qw_gemm_4x8c4__avx2 4 16 160 32 4 0|5|2048|avx2|vpmaddubsw
xnn 1x8c8 avx2|xnn|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x8c8__avx2|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x8c8__avx2 1 8 160 32|5|256|avx2|vpmaddwd
xnn 3x8c8 avx2|xnn|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_3x8c8__avx2|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_3x8c8__avx2 3 8 160 32|5|768|avx2|vpmaddwd
lb 1x8c4 avxvnni (gemv)|lowbit|qa8_qw_gemv_1x8c4__avxvnni|qa8_qw_gemv_1x8c4__avxvnni 1 32 160 32 4 0|5|1024|avxvnni|vpdpbusd
lb 1x8c4 avxvnni (gemv, sums)|lowbit|qa8_qw_gemv_1x8c4_sums__avxvnni|qa8_qw_gemv_1x8c4_sums__avxvnni 1 16 160 32 4 0|5|512|avxvnni|vpdpbusd
lb 4x8c4 avxvnni|lowbit|qa8_qw_gemm_4x8c4__avxvnni|qa8_qw_gemm_4x8c4__avxvnni 4 16 160 32 4 0|5|2048|avxvnni|vpdpbusd
xnn 1x8c8 avxvnni (qc4w)|xnn|xnn_qd8_f32_qc4w_gemm_minmax_ukernel_1x8c8__avxvnni_prfm|xnn_qd8_f32_qc4w_gemm_minmax_ukernel_1x8c8__avxvnni_prfm 1 8 160 32|10|128|avxvnni|vpdpbusd
xnn 5x8c8 avxvnni (qc4w)|xnn|xnn_qd8_f32_qc4w_gemm_minmax_ukernel_5x8c8__avxvnni_prfm|xnn_qd8_f32_qc4w_gemm_minmax_ukernel_5x8c8__avxvnni_prfm 5 8 160 32|10|640|avxvnni|vpdpbusd
lb 1x16c4 avx512vnni (gemv)|lowbit|qa8_qw_gemv_1x16c4__avx512vnni|qa8_qw_gemv_1x16c4__avx512vnni 1 64 160 32 4 0|5|2048|avx512|vpdpbusd
lb 8x16c4 avx512vnni|lowbit|qa8_qw_gemm_8x16c4__avx512vnni|qa8_qw_gemm_8x16c4__avx512vnni 8 16 160 32 4 0|5|4096|avx512|vpdpbusd
xnn 1x16c8 avx512vnni|xnn|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x16c8__avx512vnni_prfm|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x16c8__avx512vnni_prfm 1 16 160 32|5|512|avx512|vpdpbusd
xnn 8x16c8 avx512vnni|xnn|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_8x16c8__avx512vnni_prfm|xnn_qd8_f32_qb4w_gemm_minmax_ukernel_8x16c8__avx512vnni_prfm 8 16 160 32|5|4096|avx512|vpdpbusd
EOF
)"
fail=0
while IFS='|' read -r label harness sym args steps macs isa dot; do
  id=$(echo "$label" | tr -c 'a-z0-9\n' _)
  bin="$out/harness_$harness"
  addr=$(nm "$bin" | awk -v s="$sym" '$2 == "T" && index($3, s) > 0 {print $1}' | sed -n 1p)
  [ -n "$addr" ] || { echo "x86_mca.sh: no symbol $sym in $bin" >&2; exit 1; }
  log=$(TRACE_ADDR=$addr TRACE_OUT="$out/trace/$id.pcs" gdb -q -batch -x $h/trace_gdb.py --args "$bin" $args 2>&1 </dev/null)
  if grep -q WARNING <<<"$log"; then echo "$log" | grep WARNING >&2; fail=1; fi
  python3 $h/groupstep.py "$bin" "$out/trace/$id.pcs" "$steps" "$out/step/$id.s" >/dev/null
done <<<"$kernels"
[ $fail = 0 ] || { echo "x86_mca.sh: a traced path may differ from the real one" >&2; exit 1; }

# ---- llvm-mca ---------------------------------------------------------------------------
iters=200
# "RThroughput simcycles" of FILE on CPU.
run_mca() {
  "$mca" -mtriple=x86_64 -mcpu="$2" -iterations=$iters "$1" 2>/dev/null |
    awk -v n=$iters '/^Total Cycles:/ {c = $3 / n} /^Block RThroughput:/ {r = $3} END {printf "%s %.1f", r, c}'
}
# The step without its dot instructions (bench/x86_mca/strip_dots.py).
strip_dots() {  # file dot-mnemonic loads
  python3 bench/x86_mca/strip_dots.py "$@"
}
cpus_for() {
  case $1 in
    avx512) echo "znver4 znver5 sapphirerapids" ;;
    avxvnni) echo "znver5 sapphirerapids alderlake" ;;
    avx2) echo "znver3 znver5 alderlake" ;;
  esac
}
per() { awk -v v="$1" -v m="$2" 'BEGIN {printf "%.1f", v * 4096 / m}'; }

for isa in avx512 avxvnni avx2; do
  cpus=$(cpus_for $isa)
  echo
  echo "### $isa (per 4096 MACs, group 32, 4-bit)"
  echo
  hdr="| kernel | instr | dots (op) |"; sep="|---|---|---|"
  for c in $cpus; do hdr+=" $c cyc (RT / sim) | rest | rest+ld |"; sep+="---|---|---|"; done
  echo "$hdr"; echo "$sep"
  while IFS='|' read -r label harness sym args steps macs kisa dot; do
    [ "$kisa" = "$isa" ] || continue
    id=$(echo "$label" | tr -c 'a-z0-9\n' _)
    s="$out/step/$id.s"
    strip_dots "$s" $dot 0 >"$out/mca/$id.nodot.s"
    strip_dots "$s" $dot 1 >"$out/mca/$id.nodotld.s"
    n=$(grep -c '^	' "$s")
    nd=$(grep -cE "^	(\{vex\} )?$dot " "$s" || true)
    row="| $label | $(per $n $macs) | $(per $nd $macs) ($dot) |"
    for c in $cpus; do
      read -r rt sim <<<"$(run_mca "$s" $c)"
      read -r rest _ <<<"$(run_mca "$out/mca/$id.nodot.s" $c)"
      read -r restld _ <<<"$(run_mca "$out/mca/$id.nodotld.s" $c)"
      row+=" $(per $rt $macs) / $(per $sim $macs) | $(per $rest $macs) | $(per $restld $macs) |"
    done
    echo "$row"
  done <<<"$kernels"
done
# Peak references: independent dot instructions, MACs per cycle.
echo
echo "Peak (independent dots, llvm-mca MAC/cycle):"
{ for i in $(seq 0 11); do echo "	vpdpbusd %zmm30, %zmm31, %zmm$i"; done; } >"$out/mca/peak_avx512.s"
{ for i in $(seq 0 11); do echo "	{vex} vpdpbusd %ymm14, %ymm15, %ymm$i"; done; } >"$out/mca/peak_avxvnni.s"
{ for i in $(seq 0 11); do echo "	vpmaddubsw %ymm14, %ymm15, %ymm$i"; done; } >"$out/mca/peak_avx2.s"
for isa in avx512 avxvnni avx2; do
  macs=$([ $isa = avx512 ] && echo 768 || echo 384)
  line="  $isa:"
  for c in $(cpus_for $isa); do
    read -r rt sim <<<"$(run_mca "$out/mca/peak_$isa.s" $c)"
    line+=" $c $(awk -v m=$macs -v s=$sim 'BEGIN {printf "%.0f", m / s}')"
  done
  echo "$line"
done
