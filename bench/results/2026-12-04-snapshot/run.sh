#!/bin/bash
# run.sh ROUNDS OUT: issue #13's headline cases against Open MPI in the same
# rounds, obc and Open MPI alternating: 2 ranks beside one busy process
# (broadcast in place 64 KiB-4 MiB, allreduce 64 KiB-1 MiB), then idle 4 and 8
# ranks on the 2 cores (broadcast in place 256 KiB-2 MiB). Max over ranks, µs.
# Needs the anchors built in $ANCHORS (mpicc.openmpi -O2 bench/anchors/*.c).
set -u
ROUNDS=${1:-3}
OUT=${2:-rounds.txt}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
ANCHORS=${ANCHORS:-/tmp/obc-anchors-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OBC="$ROOT/build/bin/obcrun"
PERF="$ROOT/build/bin/obc-perf"
MPI="mpirun.openmpi --oversubscribe"
: > "$OUT"
one() { # mode np op min max
    local mode=$1 np=$2 op=$3 lo=$4 hi=$5 inplace=""
    [ "$op" = broadcast ] && inplace="-i 1"
    "$OBC" -n "$np" "$PERF" -o "$op" $inplace -b "$lo" -e "$hi" -f 4 -t 0.3 --csv |
        sed "s/^/$mode,$op,/" >> "$OUT"
    if [ "$op" = broadcast ]; then
        $MPI -n "$np" "$ANCHORS/mpi_bcast_bench.openmpi" -b "$lo" -e "$hi" -f 4 -t 0.3 |
            grep -v '^#' | sed "s/^/$mode,$op,/" >> "$OUT"
    else
        $MPI -n "$np" "$ANCHORS/mpi_coll_bench.openmpi" -o "$op" -b "$lo" -e "$hi" -f 4 -t 0.3 |
            grep -v '^#' | sed "s/^/$mode,$op,/" >> "$OUT"
    fi
}
for r in $(seq 1 "$ROUNDS"); do
    yes > /dev/null &
    busy=$!
    one busy 2 broadcast 64K 4M
    one busy 2 allreduce 64K 1M
    kill "$busy"
    wait "$busy" 2> /dev/null
    one idle 4 broadcast 256K 2M
    one idle 8 broadcast 256K 2M
done
