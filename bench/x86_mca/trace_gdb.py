# gdb script: the instructions one call of a function executes, as a PC trace.
#
#   TRACE_ADDR=<hex entry address> TRACE_OUT=<file> gdb -q -batch -x trace_gdb.py --args <harness> <args>
# (the harness is linked -no-pie, so the address is the one `nm` prints)
#
# Single-steps from the function's entry until it returns. Instructions this CPU cannot
# execute (EVEX-encoded AVX-512, VEX mask-register ops, AVX-VNNI's VEX vpdp*, or anything
# else that raises SIGILL, e.g. GFNI) are recorded and stepped over without executing: the kernels' control flow depends only on scalar
# counters, never on vector data, so the path is the one the real CPU takes. The one way
# scalar state goes through skipped instructions, a scalar kept in a vector or mask register
# (vmovd/vmovq/kmov from a GPR or memory, register copies between vector registers, and
# back), is replayed from a shadow copy; any
# other skipped instruction that writes a general-purpose register or the flags is reported
# (the path after it could differ), and scripts/x86_mca.sh fails then.
import os
import re

import gdb

out = open(os.environ["TRACE_OUT"], "w")
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("handle SIGILL stop print nopass")
gdb.execute("break *0x" + os.environ["TRACE_ADDR"])
gdb.execute("run", to_string=True)
inf = gdb.selected_inferior()
arch = gdb.selected_frame().architecture()
ret = int(gdb.parse_and_eval("*(unsigned long *)$rsp"))
entry_sp = int(gdb.parse_and_eval("$rsp"))

PREFIXES = {0x66, 0x67, 0xF2, 0xF3, 0x2E, 0x3E, 0x26, 0x64, 0x65, 0x36}
VNNI = re.compile(r"^\{?(vex\}\s*)?vpdp(busd|busds|wssd|wssds)\b")
GPR = re.compile(r"%(r[a-z0-9]+|e[a-z]{2}|[a-d]x|[sd]il?|[bs]pl?|r\d+[dwb]?)$")


def lacks(pc, ins):
    """True when this CPU (AVX2, no AVX-512 / AVX-VNNI) cannot execute the instruction."""
    code = inf.read_memory(pc, ins["length"]).tobytes()
    i = 0
    while i < len(code) and code[i] in PREFIXES:
        i += 1
    op = code[i]
    text = ins["asm"]
    mnem = text.split()[0]
    if op == 0x62:  # EVEX (BOUND does not exist in 64-bit mode)
        return True
    if op in (0xC4, 0xC5) and (mnem.startswith("k") or VNNI.match(text)):
        return True
    return False


MOV = re.compile(r"^(vmov[dq]|kmov[bwdq])\s+([^,]+),\s*(%\w+)$")
COPY = re.compile(r"^(vmovdq[au](?:32|64)?|vmov[au]p[sd])\s+(%[xyz]mm\d+),\s*(%[xyz]mm\d+)$")
MEM = re.compile(r"^(-?(?:0x)?[0-9a-f]*)\((%\w+)?(?:,(%\w+),(\d))?\)$")
WIDTH = {"b": 1, "w": 2, "d": 4, "q": 8}
shadow = {}  # vector or mask register -> the scalar value skipped moves put there


def vreg(r):
    return re.sub(r"^%[xyz]mm", "%vec", r) if re.match(r"%[xyz]mm|%k\d", r) else None


def replay_move(text):
    """Replays a skipped scalar move into or out of a vector / mask register (GCC keeps
    spilled GPRs there): GPR or memory -> shadow, shadow -> GPR. False if not one."""
    c = COPY.match(text)  # a register copy of a spilled scalar (one spill slot to another)
    if c and vreg(c.group(2)) in shadow:
        shadow[vreg(c.group(3))] = shadow[vreg(c.group(2))]
        return True
    m = MOV.match(text)
    if not m:
        return False
    nbytes = WIDTH[m.group(1)[-1]]
    mask = (1 << (8 * nbytes)) - 1
    src, dst = m.group(2).strip(), m.group(3)
    if vreg(dst) and not vreg(src):
        a = MEM.match(src)
        if a:
            addr = int(a.group(1) or "0", 0)
            for reg, scale in ((a.group(2), 1), (a.group(3), int(a.group(4) or 1))):
                if reg:
                    addr += scale * int(gdb.parse_and_eval("$" + reg[1:]))
            value = int.from_bytes(inf.read_memory(addr & 0xFFFFFFFFFFFFFFFF, nbytes).tobytes(), "little")
        elif src.startswith("%"):
            value = int(gdb.parse_and_eval("$" + src[1:])) & mask
        else:
            return False
        shadow[vreg(dst)] = value
        return True
    if vreg(src) in shadow and not vreg(dst):
        gdb.execute("set $%s = %d" % (dst[1:], shadow[vreg(src)] & mask))
        return True
    return False


KTEST = re.compile(r"^k(or)?test([bwdq])\s+(%k\d),\s*(%k\d)$")


def replay_ktest(text):
    """Replays kortest / ktest of mask registers whose values the shadow knows: sets ZF and
    CF as the instruction would. False if not one or a value is unknown."""
    m = KTEST.match(text)
    if not m or m.group(3) not in shadow or m.group(4) not in shadow:
        return False
    mask = (1 << (8 * WIDTH[m.group(2)])) - 1
    a, b = shadow[m.group(3)] & mask, shadow[m.group(4)] & mask
    zf = ((a | b) if m.group(1) else (a & b)) == 0
    cf = ((a | b) == mask) if m.group(1) else ((~a & b) & mask) == 0
    flags = int(gdb.parse_and_eval("$eflags")) & ~0x41
    gdb.execute("set $eflags = %d" % (flags | (0x40 if zf else 0) | (1 if cf else 0)))
    return True


steps = skipped = 0
warnings = []
while True:
    pc = int(gdb.parse_and_eval("$pc"))
    if pc == ret and int(gdb.parse_and_eval("$rsp")) > entry_sp:
        break
    ins = arch.disassemble(pc)[0]
    out.write("%x\n" % pc)
    steps += 1
    illegal = lacks(pc, ins)
    if not illegal:
        gdb.execute("stepi", to_string=True)
        # An instruction the encoding test missed (e.g. GFNI): SIGILL leaves the PC in place.
        illegal = int(gdb.parse_and_eval("$pc")) == pc and \
            int(gdb.parse_and_eval("$_siginfo.si_signo")) == 4
    if illegal:
        skipped += 1
        text = ins["asm"]
        dst = text.split(",")[-1].strip()
        if replay_move(text) or replay_ktest(text):
            pass
        elif GPR.search(dst) or text.split()[0] in ("kortestw", "kortestb", "kortestd", "kortestq",
                                                    "ktestw", "ktestb", "ktestd", "ktestq"):
            warnings.append("%#x %s" % (pc, text))
        gdb.execute("set $pc = %d" % (pc + ins["length"]))
out.close()
print("trace: %d instructions, %d stepped over" % (steps, skipped))
for w in warnings:
    print("WARNING: stepped over an instruction writing a GPR or the flags: " + w)
gdb.execute("kill")
