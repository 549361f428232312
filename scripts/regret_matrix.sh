#!/usr/bin/env bash
# The planner's regret with no record, with the built-in record and with a record `lowbit tune`
# just made, at 1 and 2 threads, for 4-bit g32, 4-bit g128, 2-bit g32 and 8-bit g32 (issue #10's
# matrix). One `lowbit regret --compare none,built-in,TUNED` per cell: the three tunings' choices
# are timed in the same run, so the differences between them are not run-to-run noise. Prints
# geomean and worst per tuning and cell. Usage:
#   scripts/regret_matrix.sh [LOWBIT] [lowbit regret options, e.g. --reps 3]
# A record of this machine in the user's cache would shadow the built-in one: it is set aside
# by pointing XDG_CACHE_HOME at an empty directory. With KEEP=DIR, the tuned record, the tune
# table and every cell's whole `lowbit regret` output (which case was worst) are kept in DIR.
set -euo pipefail
bin=${1:-build/tools/lowbit}
[ $# -gt 0 ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache
# The tune measures plan overrides at every weight format of the matrix (its cross product of
# bit widths and groups), as a user tunes for the formats they run.
echo "lowbit tune --shapes llama3-8b --bits 2,4,8 --group 32,128 -> $work/tuned.json" >&2
SECONDS=0
"$bin" tune --shapes llama3-8b --bits 2,4,8 --group 32,128 --out "$work/tuned.json" > "$work/tune.out"
echo "  $(tail -1 "$work/tune.out") (${SECONDS} s)" >&2
rows=()
for w in "4 32" "4 128" "2 32" "8 32"; do
  read -r bits group <<< "$w"
  for t in 1 2; do
    echo "lowbit regret --threads $t --bits $bits --group $group $* (${SECONDS} s)" >&2
    "$bin" regret --threads $t --bits $bits --group $group --compare none,built-in,"$work/tuned.json" "$@" \
      2>/dev/null > "$work/regret-${bits}b-g$group-t$t.out"
    out=$(grep '^geomean regret' "$work/regret-${bits}b-g$group-t$t.out")
    for tuning in none built-in tuned; do
      line=$(echo "$out" | grep -m1 "] ${tuning/tuned/$work/tuned.json}\$")
      g=$(echo "$line" | sed -E 's/geomean regret ([0-9.]+), worst ([0-9.]+).*/\1/')
      x=$(echo "$line" | sed -E 's/geomean regret ([0-9.]+), worst ([0-9.]+).*/\2/')
      rows+=("$(printf '%-10s %-9s %-8s %16s %16s' "$tuning" "${bits}b g$group" $t "$g" "$x")")
    done
  done
done
echo "done in ${SECONDS} s" >&2
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work"/*.json "$work"/*.out "$KEEP"/; fi
printf '%-10s %-9s %-8s %16s %16s\n' tuning weights threads geomean worst
for tuning in none built-in tuned; do printf '%s\n' "${rows[@]}" | grep "^$tuning "; done
