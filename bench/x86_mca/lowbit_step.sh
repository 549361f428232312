# Sourced by scripts/x86_mca_widths.sh and scripts/x86_mca_lut.sh: what both do to get one
# group step of a lowbit kernel as assembly for llvm-mca (the method of scripts/x86_mca.sh).
#
#   mca_harness NAME OUT     checks the tools, builds bench/x86_mca/harness_lowbit.cpp against
#                            $LOWBIT_BUILD/src/liblowbit.a (default build) into OUT/harness_lowbit
#   mca_step BIN KERNEL ROWS COLS K BITS GROUPS OUT.s
#                            traces one call of KERNEL (group 32, no zero points) under gdb,
#                            instructions this CPU lacks stepped over, and cuts the step that
#                            GROUPS group steps into it repeats (bench/x86_mca/groupstep.py)
mca_dir=bench/x86_mca

mca_harness() {
  local name=$1 out=$2 lb=${LOWBIT_BUILD:-build}
  for t in llvm-mca-19 llvm-objdump-19 gdb g++; do
    command -v $t >/dev/null || { echo "$name: needs $t" >&2; exit 2; }
  done
  [ -f "$lb/src/liblowbit.a" ] || { echo "$name: no $lb/src/liblowbit.a (build lowbit_static)" >&2; exit 2; }
  mkdir -p "$out"
  g++ -O1 -g -no-pie -std=c++17 -Isrc -Iinclude $mca_dir/harness_lowbit.cpp "$lb/src/liblowbit.a" \
    $(pkg-config --libs libcpuinfo) -lz -lpthread -o "$out/harness_lowbit"
}

mca_step() {
  local bin=$1 kn=$2 rows=$3 cols=$4 k=$5 bits=$6 groups=$7 s=$8 addr log
  addr=$(nm "$bin" | awk -v s="$kn" '$2 == "T" && index($3, s) > 0 {print $1}' | sed -n 1p)
  [ -n "$addr" ] || { echo "no symbol $kn" >&2; exit 1; }
  log=$(TRACE_ADDR=$addr TRACE_OUT="${s%.s}.pcs" gdb -q -batch -x $mca_dir/trace_gdb.py \
    --args "$bin" "$kn" "$rows" "$cols" "$k" 32 "$bits" 0 2>&1 </dev/null)
  if grep -q WARNING <<<"$log"; then grep WARNING <<<"$log" >&2; exit 1; fi
  python3 $mca_dir/groupstep.py "$bin" "${s%.s}.pcs" "$groups" "$s" >/dev/null
}
