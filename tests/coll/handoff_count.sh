#!/bin/sh
# SPDX-License-Identifier: MIT
# handoff_count.sh - the mechanism of issue #13, not its speed: a broadcast
# whose hand-offs do not grow with the message. At OBC_DEBUG=TRACE the
# library logs, for every operation, how often its algorithm waited for
# another rank and how many of those waits slept ("W waits, S sleeps",
# engine/progress.c). Each rank's most waits in one broadcast of the
# single-copy algorithm (cma: every reader pulls the root's buffer in one
# read) must stay within NP + 2 from 64 KiB to 64 MiB, at 2 and 4 ranks
# (a wait for each reader's post, one for the "all done" count, two spare).
# So must the default choice's from 1 MiB when the buffers come from
# obc_mem_alloc (obc-perf -M 1: the readers copy straight out of the root's
# block, bcast_mapped.c); the default's counts with ordinary buffers are
# printed beside them. The single-copy allreduce (cma: pieces claimed by
# whoever runs, reduce_cma.c; the default from 4 MiB when ranks outnumber
# CPUs) has the same bound at 2 and 4 ranks, from 1 MiB to 64 MiB: a wait
# for each peer's post and one for the count at the end.
# Usage: tests/coll/handoff_count.sh build/bin/obcrun build/bin/obc-perf
set -u
OBCRUN=${1:?usage: $0 path/to/obcrun path/to/obc-perf}
PERF=${2:?usage: $0 path/to/obcrun path/to/obc-perf}
MULT=${OBC_TEST_TIMEOUT_MULTIPLIER:-1}
LOG=${TMPDIR:-/tmp}/obc_handoff.$$
trap 'rm -f "$LOG"' EXIT
nfail=0

# most_waits NP SIZE SHARED [VAR=VALUE ...]: the most waits any rank logged
# for one broadcast (COLL=allreduce: allreduce) of SIZE bytes (empty when
# nothing was logged); SHARED is obc-perf's -M (buffers from obc_mem_alloc).
most_waits() {
    np=$1 size=$2 shared=$3 coll=${COLL:-broadcast}
    shift 3
    # shellcheck disable=SC2068 # the variables are words on purpose
    env OBC_DEBUG=TRACE "$@" "$OBCRUN" -n "$np" --timeout $((120 * MULT)) \
        "$PERF" -o "$coll" -b "$size" -e "$size" -M "$shared" -w 1 -m 3 -n 3 -t 0.01 -c 0 \
        >/dev/null 2>"$LOG" || return 1
    grep "$coll #[0-9]*: $size bytes, algorithm .*: [0-9]* waits" "$LOG" |
        sed 's/.*: \([0-9]*\) waits.*/\1/' | sort -n | tail -1
}

for np in 2 4; do
    bound=$((np + 2))
    for size in 65536 1048576 16777216 67108864; do
        cma=$(most_waits "$np" "$size" 0 OBC_ALGO=broadcast=cma) || cma=""
        def=$(most_waits "$np" "$size" 0) || def=""
        shared=$(most_waits "$np" "$size" 1) || shared=""
        echo "np $np, $size bytes: cma at most ${cma:-?} waits per rank, default choice ${def:-?}," \
            "default from obc_mem_alloc buffers ${shared:-?}"
        if [ "$size" -ge 1048576 ] && { [ -z "$shared" ] || [ "$shared" -gt "$bound" ]; }; then
            echo "FAIL: np $np, $size bytes: from shared buffers the default waited" \
                "${shared:-(no TRACE line)} times (bound $bound)"
            nfail=$((nfail + 1))
        fi
        if [ -z "$cma" ] || [ "$cma" -gt "$bound" ]; then
            echo "FAIL: np $np, $size bytes: cma waited ${cma:-(no TRACE line)} times (bound $bound)"
            sed 's/^/    /' "$LOG" | tail -20
            nfail=$((nfail + 1))
        fi
        if [ -z "$def" ]; then
            echo "FAIL: np $np, $size bytes: the default choice logged no hand-off count"
            nfail=$((nfail + 1))
        fi
    done
done
for np in 2 4; do
    bound=$((np + 2))
    for size in 1048576 16777216 67108864; do
        cma=$(COLL=allreduce most_waits "$np" "$size" 0 OBC_ALGO=allreduce=cma) || cma=""
        def=$(COLL=allreduce most_waits "$np" "$size" 0) || def=""
        echo "np $np, $size bytes allreduce: cma at most ${cma:-?} waits per rank," \
            "default choice ${def:-?}"
        if [ -z "$cma" ] || [ "$cma" -gt "$bound" ]; then
            echo "FAIL: np $np, $size bytes allreduce: cma waited ${cma:-(no TRACE line)}" \
                "times (bound $bound)"
            sed 's/^/    /' "$LOG" | tail -20
            nfail=$((nfail + 1))
        fi
        if [ -z "$def" ]; then
            echo "FAIL: np $np, $size bytes allreduce: the default choice logged no hand-off count"
            nfail=$((nfail + 1))
        fi
    done
done
echo "handoff_count: $nfail failure(s)"
[ "$nfail" -eq 0 ]
