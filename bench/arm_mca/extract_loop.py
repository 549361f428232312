#!/usr/bin/env python3
"""Prints the steady-state loop of one function of a GCC aarch64 .s file: the innermost loop
(label ... backward branch to it) holding multiply-accumulate instructions, without labels or
directives, ready for llvm-mca. Usage: extract_loop.py FILE.s FUNCTION"""
import re
import sys

MAC = re.compile(r"^\s*(smmla|sdot|smlal2?|mla)\b")


def function_lines(path, name):
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip() == name + ":")
    end = next(i for i in range(start, len(lines)) if lines[i].strip().startswith(".size\t" + name))
    return lines[start:end]


def main():
    body = function_lines(sys.argv[1], sys.argv[2])
    labels = {l.strip()[:-1]: i for i, l in enumerate(body) if re.match(r"^\.?L\w+:$", l.strip())}
    loops = []
    for i, l in enumerate(body):
        m = re.match(r"^\s*(b\.?(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)?|cbn?z|tbn?z)\s+.*?(\.L\w+)\s*$", l)
        if m and m.group(2) in labels and labels[m.group(2)] < i:
            lo = labels[m.group(2)]
            macs = sum(1 for x in body[lo:i + 1] if MAC.match(x))
            if macs:
                loops.append((i - lo, lo, i))
    if not loops:
        sys.exit("no multiply-accumulate loop in " + sys.argv[2])
    _, lo, hi = min(loops)
    for l in body[lo:hi + 1]:
        s = l.strip()
        if not s or s.endswith(":") or s.startswith("."):
            continue
        print("\t" + s.split("//")[0].strip())


if __name__ == "__main__":
    main()
