#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/results/2026-12-07-tcp-send-by-ref/trial.sh - alternating rounds of obc-perf builds on
# one netlab lab (root), each run under /usr/bin/time, and for an alltoall optionally raw TCP
# (bench/netlab/raw_alltoall.c) in the same rounds. The record of what ran for README.md; the
# builds it compares were made by hand (a worktree or clone of the commit, `cmake -B build`).
#
# Environment: VARIANTS="name:BUILD_DIR ..." (each BUILD_DIR has bin/obc-perf and lib/),
# OP (alltoall), HOSTS (4), PER (ranks per host, 1), RATE (1gbit), SIZES (bytes per rank,
# "4194304 16777216"), ROUNDS (3), CHECK (obc-perf -c, 1), ITERS ("-w 2 -m 10 -n 20 -t 2"),
# RAW (1: raw TCP too, alltoall only). Writes OUTDIR/res.csv: obc-perf's CSV line with the
# variant's name for "obc", then user and system CPU seconds summed over the ranks, then the
# round; raw rows have empty CPU fields.
# Usage: VARIANTS="base:/tmp/a/build new:/tmp/b/build" bash trial.sh OUTDIR
set -u
SRC=$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)
OUT=${1:?usage: trial.sh OUTDIR}
OP=${OP:-alltoall} HOSTS=${HOSTS:-4} PER=${PER:-1} RATE=${RATE:-1gbit}
SIZES=${SIZES:-4194304 16777216} ROUNDS=${ROUNDS:-3} CHECK=${CHECK:-1} RAW=${RAW:-0}
read -ra ITERS <<<"${ITERS:--w 2 -m 10 -n 20 -t 2}"
mkdir -p "$OUT"
# shellcheck disable=SC1091
. "$SRC/tests/netlab/nljob.sh"
nlj_init
RAW_BIN=$OUT/raw_alltoall
[ "$RAW" = 1 ] && { cc -O2 -o "$RAW_BIN" "$SRC/bench/netlab/raw_alltoall.c" || exit 1; }
nlj_lab_up trial "$HOSTS" --rate "$RATE"
ips=()
for ((i = 0; i < HOSTS; i++)); do ips+=("$("$NETLAB" ip "$i")"); done
for ((r = 1; r <= ROUNDS; r++)); do
    for s in $SIZES; do
        for v in ${VARIANTS:?}; do
            name=${v%%:*} build=${v#*:}
            NLJ_RANK_ENV="LD_LIBRARY_PATH=$build/lib"
            nlj_launch "$HOSTS" "$PER" /usr/bin/time -f "cpu %U %S" "$build/bin/obc-perf" -o "$OP" \
                --csv -b "$s" -e "$s" -c "$CHECK" "${ITERS[@]}" >/dev/null
            nlj_wait 600
            cpu=$(cat "$NLJ_DIR"/rank*.log | awk '/^cpu /{u+=$2; s+=$3} END{printf "%.2f,%.2f", u, s}')
            grep -E '^obc,' "$NLJ_DIR/rank0.log" | sed "s/^obc/$name/;s/$/,$cpu,r$r/" | tee -a "$OUT/res.csv"
        done
        if [ "$RAW" = 1 ]; then
            port=$((31000 + RANDOM % 2000)) pids=()
            for ((h = HOSTS - 1; h >= 0; h--)); do
                timeout -k 5 600 "$NETLAB" exec "$h" "$RAW_BIN" "$h" "$HOSTS" $((s / HOSTS)) 20 "$port" \
                    "${ips[@]}" >>"$OUT/raw.log" 2>&1 &
                pids+=($!)
            done
            wait "${pids[@]}"
            grep -E '^raw,' "$OUT/raw.log" | tail -1 | sed "s/$/,,,r$r/" | tee -a "$OUT/res.csv"
        fi
    done
done
nlj_lab_down
