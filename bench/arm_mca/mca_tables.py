#!/usr/bin/env python3
"""The static tables of docs/arm-kernels.md from the loops scripts/arm_mca.sh extracted.

For every loop file (one 32-k group of a kernel's steady-state loop) and CPU model:
  llvm-mca-19 -mtriple=aarch64 -mcpu=<cpu> -mattr=+dotprod,+i8mm -iterations=300 <loop.s>
cycles = Total Cycles / 300, MAC/cycle = MACs of one group / cycles. Loops named
lowbit_<isa>[_a55]_mr<MR>_nr<NR>_b<BITS>[_<variant>].s (bench/arm_mca/lowbit_mca.cpp) and
kai_<kernel>.s (KleidiAI's hand-written kernels, when the script had their source).
"Sensitivity": the same loops with every `scvtf ..., #n` (fixed point) costed as the integer
`scvtf`: LLVM 19's Neoverse models charge the fixed-point form one uop on either vector pipe and
the integer form two uops on V0, a difference the cores' optimization guides do not list.
Usage: mca_tables.py LOOP_DIR
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

LOOPS = sys.argv[1]
ITERS = 300
CPUS = ["neoverse-n2", "neoverse-v2", "cortex-a76", "neoverse-n1", "cortex-a55"]
WIDTH_CPUS = ["neoverse-n2", "cortex-a76", "neoverse-n1"]
HAS = {"dotprod": set(CPUS), "i8mm": {"neoverse-n2", "neoverse-v2"},
       "neon": set(CPUS) | {"cortex-a53"}}
LOWBIT = re.compile(r"^lowbit_(neon|dotprod|i8mm)(_a55)?_mr(\d+)_nr(\d+)_b(\d)(?:_(\w+))?\.s$")
# KleidiAI's kernels: (file stem, class, m x n of one group iteration).
KAI = [("kai_matmul_clamp_f32_qai8dxp1x4_qsi4c32p4x4_1x4_neon_dotprod", "dotprod GEMV", 1, 4),
       ("kai_matmul_clamp_f32_qai8dxp1x8_qsi4c32p4x8_1x4x32_neon_dotprod", "dotprod GEMV", 1, 4),
       ("kai_matmul_clamp_f32_qai8dxp1x4_qsi4c32p8x4_1x8_neon_dotprod", "dotprod GEMV", 1, 8),
       ("kai_matmul_clamp_f32_qai8dxp1x8_qsi4c32p8x8_1x8x32_neon_dotprod", "dotprod GEMV", 1, 8),
       ("kai_matmul_clamp_f32_qai8dxp4x4_qsi4c32p8x4_4x8_neon_dotprod", "dotprod GEMM", 4, 8),
       ("kai_matmul_clamp_f32_qai8dxp4x4_qsi4c32p4x4_16x4_neon_dotprod", "dotprod GEMM", 16, 4),
       ("kai_matmul_clamp_f32_qai8dxp4x8_qsi4c32p8x8_4x8x32_neon_i8mm", "i8mm GEMM", 4, 8),
       ("kai_matmul_clamp_f32_qai8dxp4x8_qsi4c32p4x8_8x4x32_neon_i8mm", "i8mm GEMM", 8, 4),
       ("kai_matmul_clamp_f32_qai8dxp4x8_qsi4c32p4x8_16x4x32_neon_i8mm", "i8mm GEMM", 16, 4)]


def mca(path, cpu):
    out = subprocess.run(["llvm-mca-19", "-mtriple=aarch64", "-mcpu=" + cpu, "-mattr=+dotprod,+i8mm",
                          "-iterations=%d" % ITERS, path], capture_output=True, text=True)
    m = re.search(r"Total Cycles:\s+(\d+)", out.stdout)
    return int(m.group(1)) / ITERS if m else None


def insensitive(path):
    """The loop with fixed-point scvtf written as the integer form (same cost class as KleidiAI's)."""
    out = path[:-2] + ".int_scvtf.s"
    with open(path) as f, open(out, "w") as g:
        g.write(re.sub(r"(scvtf\s+v\d+\.4s, v\d+\.4s), #0x\w+", r"\1", f.read()))
    return out


class Loop:
    def __init__(self, name, lib, isa, cls, mr, nr, bits, variant, a55):
        self.name, self.lib, self.isa, self.cls = name, lib, isa, cls
        self.mr, self.nr, self.bits, self.variant, self.a55 = mr, nr, bits, variant, a55
        self.macs = mr * nr * 32
        self.path = os.path.join(LOOPS, name + ".s")
        self.instr = sum(1 for line in open(self.path) if line.strip())
        self.cyc, self.cyc_int = {}, {}


def collect():
    loops = []
    for f in sorted(os.listdir(LOOPS)):
        m = LOWBIT.match(f)
        if m:
            isa, a55, mr, nr, bits, variant = m.group(1), bool(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), m.group(6) or ""
            cls = f"{isa} {'GEMV' if mr == 1 else 'GEMM'}"
            loops.append(Loop(f[:-2], "lowbit", isa, cls, mr, nr, bits, variant, a55))
    for stem, cls, mr, nr in KAI:
        if os.path.exists(os.path.join(LOOPS, stem + ".s")):
            loops.append(Loop(stem, "KleidiAI", cls.split()[0], cls, mr, nr, 4, "", False))
    jobs = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for l in loops:
            for cpu in sorted(HAS[l.isa] & (set(CPUS) | {"cortex-a53"})):
                jobs.append((l.cyc, cpu, ex.submit(mca, l.path, cpu)))
                if l.bits == 4 and not l.variant:
                    jobs.append((l.cyc_int, cpu, ex.submit(mca, insensitive(l.path), cpu)))
        for d, cpu, fut in jobs:
            d[cpu] = fut.result()
    return loops


def label(l):
    if l.lib == "KleidiAI":
        return "KleidiAI " + l.name.replace("kai_matmul_clamp_f32_", "")
    kind = "GEMV" if l.mr == 1 else "GEMM"
    tile = f"{l.mr}x{l.nr}" if l.mr == 1 else f"{l.mr}x8 ({l.mr}x{l.nr} per pass)" if l.isa != "neon" else f"{l.mr}x{l.nr}"
    return f"lowbit {l.isa}{' _a55' if l.a55 else ''} {kind} {tile}"


def cell(l, cpu, d=None):
    d = l.cyc if d is None else d
    c = d.get(cpu)
    return "-" if c is None else f"{c:.1f} ({l.macs / c:.1f})"


def main():
    loops = collect()
    four = [l for l in loops if l.bits == 4 and l.variant in ("", "p1")]
    print("### 4-bit, symmetric weights, bf16 scales (KleidiAI's qsi4c32 semantics): cycles per 32-k group (MAC/cycle)\n")
    print("| loop | MACs/group | instr | " + " | ".join(CPUS) + " |")
    print("|---|---|---|" + "---|" * len(CPUS))
    for l in four:
        name = label(l) + (", 2nd pass" if l.variant == "p1" else "")
        print(f"| {name} | {l.macs} | {l.instr} | " + " | ".join(cell(l, c) for c in CPUS) + " |")

    print("\n### Best of each class (MAC/cycle): lowbit vs KleidiAI\n")
    print("| class | " + " | ".join(f"{c} lowbit / KleidiAI (ratio)" for c in CPUS) + " |")
    print("|---|" + "---|" * len(CPUS))
    for cls in ["dotprod GEMV", "dotprod GEMM", "i8mm GEMM"]:
        cells = []
        for cpu in CPUS:
            def best(lib, a55=None):
                v = [l.macs / l.cyc[cpu] for l in four if l.lib == lib and l.cls == cls and l.cyc.get(cpu)
                     and (a55 is None or l.a55 == a55)]
                return max(v) if v else None
            lb, kb = best("lowbit"), best("KleidiAI")
            cells.append("-" if lb is None or kb is None else f"{lb:.1f} / {kb:.1f} ({lb / kb:.2f})")
        print(f"| {cls} | " + " | ".join(cells) + " |")

    print("\n### Sensitivity: fixed-point `scvtf #n` costed as the integer form (both libraries), MAC/cycle\n")
    print("| loop | " + " | ".join(CPUS) + " |")
    print("|---|" + "---|" * len(CPUS))
    for l in four:
        if l.variant:
            continue
        print(f"| {label(l)} | " + " | ".join(cell(l, c, l.cyc_int) for c in CPUS) + " |")

    variants = [l for l in loops if l.bits == 4 and l.variant in ("z", "f32")]
    if variants:
        print("\n### 4-bit variants: with zero points (_z), f32 scales (_f32)\n")
        print("| loop | " + " | ".join(CPUS) + " |")
        print("|---|" + "---|" * len(CPUS))
        for l in variants:
            print(f"| {label(l)} {l.variant} | " + " | ".join(cell(l, c) for c in CPUS) + " |")

    print("\n### Every width (issue #36): GEMV cycles per weight byte, GEMM MAC/cycle, each relative to 4 bits\n")
    print("GEMV bytes per group: 8 columns x 32 k x b / 8 = 32·b. GEMM: the mean of its two passes.\n")
    kernels = sorted({(l.isa, l.a55, l.mr, l.nr) for l in loops if l.lib == "lowbit"})
    for isa, a55, mr, nr in kernels:
        rows = {}
        for l in loops:
            if (l.lib, l.isa, l.a55, l.mr, l.nr) == ("lowbit", isa, a55, mr, nr) and l.variant in ("", "p1"):
                rows.setdefault(l.bits, []).append(l)
        name = label(next(iter(rows.values()))[0])
        cpus = [c for c in WIDTH_CPUS if c in HAS[isa]]
        print(f"\n{name}\n")
        print("| bits | " + " | ".join(f"{c} {'cyc/byte (vs 4-bit)' if mr == 1 else 'MAC/cyc (vs 4-bit)'}" for c in cpus) + " |")
        print("|---|" + "---|" * len(cpus))
        def metric(b, cpu):
            ls = rows.get(b, [])
            if not ls or any(l.cyc.get(cpu) is None for l in ls):
                return None
            cyc = sum(l.cyc[cpu] for l in ls) / len(ls)
            return cyc / (nr * 32 * b / 8) if mr == 1 else ls[0].macs / cyc
        for b in sorted(rows):
            cells = []
            for cpu in cpus:
                v, v4 = metric(b, cpu), metric(4, cpu)
                cells.append("-" if v is None or v4 is None else f"{v:.3f} ({v / v4:.2f})" if mr == 1 else f"{v:.1f} ({v / v4:.2f})")
            print(f"| {b} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
