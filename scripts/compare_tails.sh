#!/usr/bin/env bash
# Latency tails of two lowbit builds side by side: runs `lowbit bench --tails` of A and B
# alternately (A B A B ...), REPS times each, and prints the median over runs of each
# percentile at 1 and N threads, and B / A. Usage:
#   scripts/compare_tails.sh A/lowbit B/lowbit [REPS] [bench --tails options, e.g. --busy 2]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 A/lowbit B/lowbit [REPS] [lowbit bench --tails options]" >&2
  exit 2
fi
a=$1 b=$2
shift 2
reps=15
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then reps=$1; shift; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$reps"); do
  for side in A B; do
    bin=$a; [ $side = B ] && bin=$b
    echo -n "[$r/$reps $side] " >&2
    "$bin" bench --tails --json "$@" > "$out/$side.$r.json"
  done
done
echo >&2
python3 - "$out" "$reps" "$a" "$b" "$*" <<'EOF'
import json, statistics, sys
out, reps, a, b, opts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
keys = ["p50_us", "p90_us", "p99_us", "max_us"]
runs = {s: [json.load(open(f"{out}/{s}.{r}.json")) for r in range(1, reps + 1)] for s in "AB"}
first = runs["A"][0]
print(f"A = {a}\nB = {b}\nlowbit bench --tails {opts}: {first['n']}x{first['k']} m={first['m']} "
      f"{first['bits']}-bit g{first['group']}, {first['calls']} calls per run, {first['busy']} busy; "
      f"medians over {reps} alternating runs of each")
print(f"{'':4}{'threads':>8}" + "".join(f"{k[:-3] + ' us':>11}" for k in keys))
med = {}
for s in "AB":
    for i, t in enumerate(first["tails"]):
        med[s, i] = [statistics.median(run["tails"][i][k] for run in runs[s]) for k in keys]
        print(f"{s:4}{t['threads']:>8}" + "".join(f"{v:>11.1f}" for v in med[s, i]))
for i, t in enumerate(first["tails"]):
    print(f"{'B/A':4}{t['threads']:>8}" + "".join(f"{y / x:>11.3f}" for x, y in zip(med['A', i], med['B', i])))
EOF
