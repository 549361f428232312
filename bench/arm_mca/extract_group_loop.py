#!/usr/bin/env python3
"""Prints, ready for llvm-mca, the per-group loop of one function of an aarch64 object file.
(The project's copy of ../shared/anchors/arm-mca/extract_group_loop.py, also counting NEON's
widening multiply-accumulates as MACs, so its kernels go through the same rule.)

Same rule for every library: disassemble the function with llvm-objdump-19, find every loop
(a backward branch to an address inside the function), keep the loops whose body holds int8
multiply-accumulates (sdot/smmla) AND the per-group int->float scaling (scvtf), and print the
one with the most MACs (ties: the shortest). With the group size 32 this is one iteration per
32-k group:
  * lowbit (bench harness, kGroup = 32): the straight-line group loop (the innermost MAC loop);
  * KleidiAI: its "Block loop" (label_3), which contains the "Sub block loop" (label_4) once --
    with bl = 32, num_subblocks = bl / 32 = 1, so the sub-block loop's backward branch is not
    taken and the dynamic instruction stream of one group is exactly the text from label_3 to
    the backward branch to it. Inner branches are kept as instructions (they are executed).
Branch targets are replaced by a symbolic label so llvm-mca can parse them.

Usage: extract_group_loop.py OBJECT FUNCTION [--info] [--take-forward]
  --info          print the loop table to stderr
  --take-forward  drop the instructions that forward branches inside the loop jump over (the
                  other path of an if-then: for lowbit, no weight zero points + bf16 scales;
                  without it the fall-through path is printed: zero points + f32 scales)
"""
import re
import subprocess
import sys

MAC = re.compile(r"^(sdot|smmla|udot|usdot|ummla|usmmla|smlal2?)\b")
BR = re.compile(r"^(b\.\w+|b|cbn?z|tbn?z)\s+(.*)$")


def disasm(obj, fn):
    # The function's address range from the symbol table (local labels inside hand-written
    # assembly are symbols too, so --disassemble-symbols would stop at the first of them).
    syms = subprocess.run(["llvm-nm-19", "-S", "--defined-only", obj], check=True,
                          capture_output=True, text=True).stdout
    rng = None
    for line in syms.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] == fn:
            rng = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
    if rng is None:
        sys.exit("no symbol " + fn)
    out = subprocess.run(["llvm-objdump-19", "-d", "--no-show-raw-insn", "--mattr=+dotprod,+i8mm,+bf16",
                          "--start-address=%#x" % rng[0], "--stop-address=%#x" % rng[1], obj],
                         check=True, capture_output=True, text=True).stdout
    ins = []
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S.*)$", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).split("//")[0].strip()))
    if not ins:
        sys.exit("no instructions for " + fn)
    return ins


def target(text):
    m = BR.match(text)
    if not m:
        return None
    t = re.search(r"0x([0-9a-f]+)\s*<", m.group(2))
    return int(t.group(1), 16) if t else None


def main():
    obj, fn = sys.argv[1], sys.argv[2]
    ins = disasm(obj, fn)
    index = {a: i for i, (a, _) in enumerate(ins)}
    loops = []
    for i, (a, t) in enumerate(ins):
        tgt = target(t)
        if tgt is not None and tgt <= a and tgt in index:
            lo = index[tgt]
            body = [x for _, x in ins[lo:i + 1]]
            macs = sum(1 for x in body if MAC.match(x))
            scv = sum(1 for x in body if x.startswith("scvtf"))
            loops.append((macs, scv, i - lo + 1, lo, i))
    if "--info" in sys.argv:
        for macs, scv, n, lo, hi in loops:
            print(f"loop {ins[lo][0]:#x}-{ins[hi][0]:#x}: {n} instr, {macs} MAC, {scv} scvtf",
                  file=sys.stderr)
    cand = [l for l in loops if l[0] and l[1]]
    if not cand:
        sys.exit("no group loop (MAC + scvtf) in " + fn)
    macs, scv, n, lo, hi = max(cand, key=lambda l: (l[0], -l[2]))
    body = ins[lo:hi + 1]
    if "--take-forward" in sys.argv:
        keep, skip_to = [], None
        for a, t in body:
            if skip_to is not None and a < skip_to:
                continue
            skip_to = None
            tgt = target(t)
            keep.append((a, t))
            if tgt is not None and a < tgt <= body[-1][0]:
                skip_to = tgt
        body = keep
    for _, t in body:
        m = BR.match(t)
        if m:  # replace the address operand (the last one) by a label
            ops = [o.strip() for o in m.group(2).split(",")]
            ops[-1] = ".Ltarget"
            t = m.group(1) + "\t" + ", ".join(ops)
        print("\t" + t)


if __name__ == "__main__":
    main()
