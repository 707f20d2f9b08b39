#!/bin/sh
# SPDX-License-Identifier: MIT
# perf_selftest.sh - obc-perf end to end through obcrun: every collective at 2
# and 3 ranks, small odd sizes, a few dtypes (float16 and int8 always) and
# operators, out of place, in place and non-blocking, each forced algorithm
# once, and -X (the checker must count exactly one injected error per call).
# A run passes when it exits 0 and every CSV row has wrong == 0.
# Usage: tools/obc-perf/perf_selftest.sh build/bin/obcrun build/bin/obc-perf  (exit 0 = all passed)
set -u
OBCRUN=${1:?usage: $0 path/to/obcrun path/to/obc-perf}
PERF=${2:?usage: $0 path/to/obcrun path/to/obc-perf}
MULT=${OBC_TEST_TIMEOUT_MULTIPLIER:-1}
OUT=${TMPDIR:-/tmp}/obc_perf_selftest.$$
trap 'rm -f "$OUT" "$OUT.err"' EXIT
# Odd sizes (3 B .. 12 KiB), so counts are odd and do not divide by the rank count.
SIZES="-b 3 -e 12345 -f 9 -w 1 -m 2 -n 3 -t 0.01 -c 1 --csv"
nfail=0
nrun=0

# run NAME NP [VAR=VALUE ...] -- OBC-PERF ARGS...: one obc-perf run, checked.
run() {
    name=$1 np=$2
    shift 2
    envs=""
    while [ "$1" != "--" ]; do
        envs="$envs $1"
        shift
    done
    shift
    nrun=$((nrun + 1))
    # shellcheck disable=SC2086 # $envs and $SIZES are word lists on purpose
    env $envs "$OBCRUN" -n "$np" --timeout $((60 * MULT)) "$PERF" $SIZES "$@" >"$OUT" 2>"$OUT.err"
    rc=$?
    rows=$(grep -cv '^#' "$OUT")
    bad=$(grep -v '^#' "$OUT" | awk -F, 'NF != 7 || $7 != 0' | wc -l)
    if [ "$rc" -ne 0 ] || [ "$rows" -eq 0 ] || [ "$bad" -ne 0 ]; then
        echo "FAIL $name (np $np): status $rc, $rows rows, $bad bad (wrong != 0): $envs obc-perf $*"
        sed 's/^/    /' "$OUT" "$OUT.err"
        nfail=$((nfail + 1))
    else
        echo "ok   $name (np $np, $rows sizes)"
    fi
}

# expect_label NAME LABEL: every row of the last run has impl LABEL.
expect_label() {
    if grep -v '^#' "$OUT" | grep -qv "^$2,"; then
        echo "FAIL $1: impl column is not '$2'"
        sed 's/^/    /' "$OUT"
        nfail=$((nfail + 1))
    fi
}

for np in 2 3; do
    for op in allreduce reduce reduce_scatter; do
        run "$op float16 sum" "$np" -- -o "$op" -d float16 --op sum -r $((np - 1))
        run "$op int8 prod in place" "$np" -- -o "$op" -d int8 --op prod -i 1 -r $((np - 1))
        run "$op bfloat16 avg async" "$np" -- -o "$op" -d bfloat16 --op avg -a 1
        run "$op int32 min in place async" "$np" -- -o "$op" -d int32 --op min -i 1 -a 1
        run "$op float64 max" "$np" -- -o "$op" -d float64 --op max
        run "$op uint8 avg" "$np" -- -o "$op" -d uint8 --op avg
    done
    run "allgather float16" "$np" -- -o allgather -d float16
    run "allgather int8 in place" "$np" -- -o allgather -d int8 -i 1
    run "allgather float32 async" "$np" -- -o allgather -a 1
    run "allgather int64 in place async" "$np" -- -o allgather -d int64 -i 1 -a 1
    run "sendrecv uint8" "$np" -- -o sendrecv
    run "sendrecv float16 async" "$np" -- -o sendrecv -d float16 -a 1
done
run "sendrecv across fake hosts" 3 OBC_HOST_ID=rank/2 -- -o sendrecv -d int32
# The personalised ones at 3 ranks only (CI time): a root that is not 0,
# out of place and in place + async.
for op in gather scatter alltoall; do
    run "$op float16 root 2" 3 -- -o "$op" -d float16 -r 2
    run "$op int8 in place async" 3 -- -o "$op" -d int8 -i 1 -a 1 -r 1
done
# alltoallv (no in-place form): through the channels, and with every block
# read single copy (the limit at 1 byte)
run "alltoallv float16" 3 -- -o alltoallv -d float16
run "alltoallv int8 async, single copy" 3 OBC_ALLTOALL_CMA_MIN_BYTES=1 -- -o alltoallv -d int8 -a 1
# allgatherv: 3 ranks have blocks of one, two and three units; out of place,
# and in place (the own block already in recvbuf) + async
run "allgatherv float16" 3 -- -o allgatherv -d float16
run "allgatherv int8 in place async" 3 -- -o allgatherv -d int8 -i 1 -a 1

# Buffers at page offsets where a string copy (memcpy's middle sizes, the
# kernel's process_vm_readv/writev) is slow: a destination 16 bytes after its
# source modulo 4 KiB, so the library's loop and bounce paths carry the data
# (core/copy.c, shm_cma.c). Ranks 0, 1 and 2 start 16, 0 and 4080 bytes into
# a page; single copy from 4 KiB, and the arena's page-aligned slots filled
# from rank 2's buffer (16 bytes before a page) and read into rank 0's.
CMA4K="OBC_ALGO=broadcast=cma OBC_ALLTOALL_CMA_MIN_BYTES=4K OBC_GATHER_CMA_MIN_BYTES=4K"
# shellcheck disable=SC2086 # CMA4K is a list of settings
for op in broadcast gather scatter alltoall; do
    run "$op single copy, buffers 16 bytes apart" 3 $CMA4K -- -o "$op" -d int8 -A 16,4080 -r 1
done
# alltoallv's blocks are uneven, so its pairs' distances differ: these offsets give a slow one
# shellcheck disable=SC2086
run "alltoallv single copy, buffers 16 bytes apart" 3 $CMA4K -- -o alltoallv -d int8 -A 8,24
# shellcheck disable=SC2086
run "broadcast in place single copy, buffers 16 bytes apart" 3 $CMA4K -- -o broadcast -i 1 -A 16,4080 -r 1
run "broadcast through the arena, buffers 16 bytes from the slots" 3 OBC_ALGO=broadcast=arena -- -o broadcast -d int8 -A 16,4080 -r 2
run "allreduce, buffers beside the windows" 3 -- -o allreduce -d int32 -A 16,16
run "allgather, buffers 16 bytes apart" 3 -- -o allgather -d int8 -A 0,16

# Each algorithm the library accepts in OBC_ALGO, once, and the label it gives.
for spec in allreduce=shm allreduce=ring allreduce=recdbl allreduce=hier reduce=shm reduce=ring \
    allgather=shm allgather=ring reduce_scatter=shm reduce_scatter=ring alltoall=pairwise \
    alltoall=cma; do
    op=${spec%%=*} algo=${spec#*=}
    redop="--op sum"
    case $op in allgather | alltoall) redop="" ;; esac
    # shellcheck disable=SC2086
    run "$op forced to $algo" 3 "OBC_ALGO=broadcast=eager,$spec" -- -o "$op" -d float16 $redop
    expect_label "$op forced to $algo" "obc_$algo"
done

# The checker itself: -X damages one output byte per call; obc-perf exits 0
# only if exactly that many wrong bytes or elements were counted, so the
# wrong column is non-zero here and run() must not look at it.
for op in allreduce reduce allgather reduce_scatter gather scatter alltoall alltoallv allgatherv; do
    nrun=$((nrun + 1))
    "$OBCRUN" -n 3 --timeout $((60 * MULT)) "$PERF" -o "$op" -d int8 -b 64 -e 4K -f 8 -w 1 -m 2 \
        -n 2 -t 0.01 -r 1 -X >"$OUT" 2>"$OUT.err"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q "self-test" "$OUT"; then
        echo "FAIL $op -X (np 3): status $rc"
        sed 's/^/    /' "$OUT" "$OUT.err"
        nfail=$((nfail + 1))
    else
        echo "ok   $op -X (np 3)"
    fi
done

# sendrecv's damaged copy is rank 0's (the ranks between the pair are idle).
nrun=$((nrun + 1))
if "$OBCRUN" -n 3 --timeout $((60 * MULT)) "$PERF" -o sendrecv -b 64 -e 4K -f 8 -w 1 -m 2 -n 2 \
    -t 0.01 -X >"$OUT" 2>"$OUT.err" && grep -q "self-test" "$OUT"; then
    echo "ok   sendrecv -X (np 3)"
else
    echo "FAIL sendrecv -X (np 3)"
    sed 's/^/    /' "$OUT" "$OUT.err"
    nfail=$((nfail + 1))
fi

echo "$nrun runs, $nfail failed"
[ "$nfail" -eq 0 ]
