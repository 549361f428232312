#!/usr/bin/env python3
"""A traced group step without its dot instructions (scripts/x86_mca.sh, x86_mca_widths.sh).

usage: strip_dots.py STEP.s DOT-MNEMONIC LOADS   (LOADS 1: keep the dots' loads, see below)

With LOADS, the loads stay, as plain loads: each dot's memory operand, and every broadcast
from memory (vpbroadcastd/q), becomes a load into a general register. LLVM's Zen models charge
a broadcast load an FP shuffle slot; on the Zen 3 here it costs none (bench/x86_mca/
bcast_pipes.c), so this is the fairer count of the rest when one kernel broadcasts inside its
dot instructions and the other does not.
"""
import re, sys
path, dot, loads = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
def operands(s):
    return [o.strip() for o in re.split(r",(?![^(]*\))", s.split(" ", 1)[1])] if " " in s else []
for line in open(path):
    s = line.strip()
    if s.startswith("{vex} "):
        s = s[6:]
    ops = operands(s)
    mem = [o for o in ops if "(" in o]
    is_dot = s.startswith(dot + " ")
    is_bcast = re.match(r"vpbroadcast[dq] ", s) is not None and mem
    if not is_dot and not (loads and is_bcast):
        print(line, end="")
        continue
    if not loads or not mem:
        continue
    src = mem[0].split("{")[0]
    if "{1to" in mem[0] or is_bcast:
        print("\t%s %s, %s" % ("movq" if s.startswith("vpbroadcastq") else "movl", src,
                               "%r11" if s.startswith("vpbroadcastq") else "%r11d"))
    else:
        print("\tvmovdqu %s, %%ymm15" % src if "ymm" in s else "\tvmovdqu64 %s, %%zmm31" % src)
