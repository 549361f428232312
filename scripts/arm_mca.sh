#!/usr/bin/env bash
# Static throughput of the aarch64 kernels with llvm-mca-19 (docs/arm-kernels.md), next to
# KleidiAI's hand-written kernels when their source is given, both through one loop extraction.
#   bench/arm_mca/lowbit_mca.cpp   each registered kernel's panel loop with the group size fixed
#                                  at 32: one loop iteration = one 32-k group, unpacking and
#                                  per-group scaling included; built with the library's compiler
#                                  and flags (GCC 12 -O3 -ffp-contract=off -fno-math-errno,
#                                  -fno-schedule-insns, dot product -fno-ivopts, -march per ISA)
#   KleidiAI (KAI_SRC=<tree> or KAI_GIT=<bare git of github:ARM-software/kleidiai>): its
#                                  matmul_clamp_f32_qai8dxp_qsi4c32p *neon*_asm.S, assembled
#   bench/arm_mca/extract_group_loop.py   the same loop rule for both (an object file's loop
#                                  holding MACs and scvtf: one 32-k group)
#   bench/arm_mca/mca_tables.py    llvm-mca-19 on Neoverse N2, V2, Cortex-A76 (LLVM 19: the A57
#                                  model), Neoverse N1, Cortex-A55; Markdown tables on stdout
# Usage: [KAI_SRC=… | KAI_GIT=…] scripts/arm_mca.sh [OUT_DIR]   (default: build-aarch64/mca)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build-aarch64/mca}"
command -v llvm-mca-19 >/dev/null || { echo "arm_mca.sh: needs llvm-mca-19 (Debian llvm-19)" >&2; exit 2; }
rm -rf "$out/loops" && mkdir -p "$out/obj" "$out/loops"
declare -A march=([neon]="armv8-a" [dotprod]="armv8.2-a+dotprod" [i8mm]="armv8.2-a+dotprod+i8mm")
cxxflags="-std=c++17 -O3 -ffp-contract=off -fno-math-errno -Isrc -Iinclude"

for isa in neon dotprod i8mm; do
  obj="$out/obj/lowbit_$isa.o"
  aarch64-linux-gnu-g++ $cxxflags -march=${march[$isa]} -DMCA_${isa^^} -c bench/arm_mca/lowbit_mca.cpp -o "$obj" &
done
wait
for isa in neon dotprod i8mm; do
  obj="$out/obj/lowbit_$isa.o"
  for fn in $(aarch64-linux-gnu-nm --defined-only "$obj" | awk '$2 == "T" {print $3}' | grep '^mca_'); do
    python3 bench/arm_mca/extract_group_loop.py "$obj" "$fn" >"$out/loops/lowbit_${fn#mca_}.s"
  done
done

if [ -n "${KAI_SRC:-}${KAI_GIT:-}" ]; then
  kai="$out/kleidiai"
  if [ -n "${KAI_SRC:-}" ]; then kai="$KAI_SRC"
  elif [ ! -d "$kai" ]; then mkdir -p "$kai" && git --git-dir="$KAI_GIT" archive HEAD | tar x -C "$kai"; fi
  for f in "$kai"/kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4c32p/*_neon_*_asm.S; do
    b=$(basename "$f" _asm.S)
    case $b in *i8mm*) m=${march[i8mm]} ;; *) m=${march[dotprod]} ;; esac
    aarch64-linux-gnu-gcc -march=$m -c "$f" -o "$out/obj/$b.o"
    python3 bench/arm_mca/extract_group_loop.py "$out/obj/$b.o" "kai_kernel_${b#kai_}" >"$out/loops/$b.s"
  done
  echo "KleidiAI $(git --git-dir="${KAI_GIT:-$kai/.git}" rev-parse --short HEAD 2>/dev/null || echo "(tree $kai)")"
fi
echo "lowbit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src bench || echo '+changes'), $(aarch64-linux-gnu-g++ --version | head -1)"
python3 bench/arm_mca/mca_tables.py "$out/loops"
