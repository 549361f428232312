#!/usr/bin/env python3
"""One group step of a kernel call, as executed, from a PC trace (trace_gdb.py).

usage: groupstep.py BINARY PCS GROUPS OUT.s

The traced call runs GROUPS groups over one tile. The group-loop head is the first PC, in
trace order, that runs exactly GROUPS times with identical instruction sequences between its
visits from the 2nd on; the step written to OUT.s is the trace between its 2nd and 3rd visit
(branches as executed, their targets renamed to one dummy label so llvm-mca can read it).
Prints the step's instruction count.
"""
import collections
import re
import subprocess
import sys

binary, pcs_file, groups, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
pcs = [int(line, 16) for line in open(pcs_file) if line.strip()]
lo, hi = min(pcs), max(pcs) + 16
text = subprocess.run(["llvm-objdump-19", "-d", "--no-show-raw-insn", binary,
                       "--start-address=%#x" % lo, "--stop-address=%#x" % hi],
                      capture_output=True, text=True, check=True).stdout
dis = {}
for line in text.splitlines():
    m = re.match(r"\s*([0-9a-f]+):\s+(\S.*)$", line)
    if m:
        ins = re.sub(r"\s+", " ", m.group(2).split("#")[0].strip())
        ins = re.sub(r"^((j[a-z]+|call[a-z]*) )0x[0-9a-f]+( <[^>]*>)?$", r"\1.Ltarget", ins)
        dis[int(m.group(1), 16)] = ins

count = collections.Counter(pcs)
visits = collections.defaultdict(list)
for i, p in enumerate(pcs):
    visits[p].append(i)
if groups < 3:
    sys.exit("groupstep.py: need at least 3 groups")
head = None
seen = set()
for p in pcs:
    if p in seen:
        continue
    seen.add(p)
    if count[p] != groups:
        continue
    v = visits[p]
    steps = {tuple(pcs[v[j]:v[j + 1]]) for j in range(1, groups - 1)}
    if len(steps) == 1:
        head = p
        break
if head is None:
    sys.exit("groupstep.py: no group-loop head in " + pcs_file)
v = visits[head]
step = pcs[v[1]:v[2]]
with open(out, "w") as f:
    f.write("# group step: %d instructions, head %#x, %s\n" % (len(step), head, pcs_file))
    for p in step:
        f.write("\t%s\n" % dis[p])
print("%s: %d instructions" % (out, len(step)))
