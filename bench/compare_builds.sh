#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS] - obc-perf of two builds of obc
# (each a CMake build folder with bin/obcrun and bin/obc-perf), rounds alternating
# old/new in one run so both see the same machine, at 2 and 8 ranks, broadcast and
# allreduce, 8 B .. 64 MiB (x8 steps), validated (-c 1). Prints per case the median
# over rounds of each build's time (slowest rank's own time, obc-perf's default) and
# new/old. Environment: NPS (default "2 8"), OPS (default "broadcast allreduce"),
# PERF_ARGS (default "-b 8 -e 64M -f 8 -t 0.1 -c 1").
set -eu
OLD=${1:?usage: $0 OLD_BUILD NEW_BUILD [ROUNDS]}
NEW=${2:?usage: $0 OLD_BUILD NEW_BUILD [ROUNDS]}
ROUNDS=${3:-3}
NPS=${NPS:-"2 8"}
OPS=${OPS:-"broadcast allreduce"}
PERF_ARGS=${PERF_ARGS:-"-b 8 -e 64M -f 8 -t 0.1 -c 1"}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

for round in $(seq "$ROUNDS"); do
    for np in $NPS; do
        for op in $OPS; do
            for which in old new; do
                if [ "$which" = old ]; then b=$OLD; else b=$NEW; fi
                # shellcheck disable=SC2086
                "$b/bin/obcrun" -n "$np" "$b/bin/obc-perf" -o "$op" $PERF_ARGS --csv |
                    grep -v '^#' | sed "s/^[^,]*,/$which,$op,$round,/" >>"$OUT"
            done
        done
    done
done

# rows: which,op,round,nranks,bytes,usec,algbw,busbw,wrong
awk -F, '
function median(list,    n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$9 != 0 { bad = bad " " $1 "/" $2 "/" $4 "/" $5 }
{ key = $2 "," $4 "," $5; t[$1, key] = t[$1, key] " " $6; keys[key] = 1 }
END {
    for (k in keys) {
        split(k, f, ",")
        o = median(t["old", k]); n = median(t["new", k])
        printf "%-10s %6d %10d %12.2f %12.2f %8.2f\n", f[1], f[2], f[3], o, n, n / o
    }
    if (bad != "") { print "WRONG results in:" bad; exit 1 }
}' "$OUT" >"$OUT.table" || status=$?
printf "%-10s %6s %10s %12s %12s %8s\n" op nranks bytes old_usec new_usec new/old
grep -v '^WRONG' "$OUT.table" | sort -k1,1 -k2,2n -k3,3n
grep '^WRONG' "$OUT.table" || true
rm -f "$OUT.table"
exit "${status:-0}"
