#!/usr/bin/env python3
"""The peer anchors (../shared/anchors: lowbit, XNNPACK, ggml) timed in interleaved rounds.

On a machine shared with other work, times taken minutes apart differ by up to 1.5x
(/work/shared/MEASURING.md). This runs every (case, threads) of every contender one after
the other, ROUNDS times over, each run a short median of its own (the harnesses' --min-time),
and reports per row the median over the rounds, then lowbit's speed relative to the others.

  scripts/anchors_rounds.py [--rounds 5] [--case decode] [--threads 1,2] [--min-time 0.3]
                            [--peer NAME=BINARY ...] [--raw FILE]

Default peers: lowbit, xnnpack and ggml from $AB/bin (AB: ~/.cache/lowbit-anchors; build them
with ../shared/anchors/build.sh, and lowbit with `build.sh lowbit PREFIX`). `--peer` adds a
binary under another name (e.g. lowbit-base=/tmp/ab-base/bin/lowbit_bench, a build of another
commit); its rows are labelled with that name.
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys

CASES = ["decode_cold", "decode_hot", "m8_cold", "prefill_4096", "prefill_14336"]

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--case", default="", help="substring filter on the case names")
ap.add_argument("--threads", default="1,2")
ap.add_argument("--min-time", default="0.3")
ap.add_argument("--peer", action="append", default=[], help="NAME=BINARY, timed like the others")
ap.add_argument("--raw", help="also write every ROW line (with its round) to this file")
args = ap.parse_args()

ab = os.environ.get("AB", os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "lowbit-anchors"))
peers = [(p, os.path.join(ab, "bin", p + "_bench")) for p in ("lowbit", "xnnpack", "ggml")]
peers += [tuple(p.split("=", 1)) for p in args.peer]
for name, binary in peers:
    if not os.access(binary, os.X_OK):
        sys.exit("anchors_rounds.py: no %s (%s)" % (binary, name))

times = collections.defaultdict(list)  # (case, threads, row label) -> per-round medians
raw = open(args.raw, "w") if args.raw else None
cases = [c for c in CASES if args.case in c]
for r in range(args.rounds):
    for case in cases:
        for t in args.threads.split(","):
            for name, binary in peers:
                out = subprocess.run([binary, "--case", case, "--threads", t, "--min-time", args.min_time],
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    # XNNPACK's harness stops at its AVX-512-only variant (qdu8) on CPUs without
                    # it, after printing the others: keep what it printed.
                    if "ROW" not in out.stdout:
                        sys.exit("anchors_rounds.py: %s failed:\n%s" % (name, out.stderr))
                    warned = getattr(sys, "_anchor_warned", set())
                    if name not in warned:
                        print("anchors_rounds.py: %s exited with %d after some rows: %s" %
                              (name, out.returncode, out.stderr.strip().splitlines()[-1]), file=sys.stderr)
                        warned.add(name)
                        sys._anchor_warned = warned
                for line in out.stdout.splitlines():
                    if not line.startswith("ROW"):
                        continue
                    f = line.split("\t")
                    label = f[6] if f[6] != "lowbit" or name == "lowbit" else name
                    times[(f[1], int(f[5]), label)].append(float(f[7]))
                    if raw:
                        raw.write("%d\t%s\t%s\n" % (r, label, line))
    print("round %d/%d done" % (r + 1, args.rounds), file=sys.stderr)

print("| case | threads | contender | median µs (over %d rounds) | spread | lowbit speed ÷ it |" % args.rounds)
print("|---|---|---|---|---|---|")
for case in cases:
    for t in sorted({k[1] for k in times if k[0] == case}):
        rows = sorted((k[2], statistics.median(v), min(v), max(v)) for k, v in times.items() if k[:2] == (case, t))
        lb = next((m for label, m, _, _ in rows if label == "lowbit"), None)
        for label, med, lo, hi in rows:
            ratio = "%.2f" % (med / lb) if lb else "-"
            print("| %s | %d | %s | %.1f | %.0f–%.0f | %s |" % (case, t, label, med, lo, hi, ratio))
