#!/bin/bash
# obcrun --bind core (rank r on CPU r mod ncpus) against --bind none (the scheduler places
# the ranks) with more ranks than CPUs, Open MPI (--oversubscribe, unbound) beside them.
# Rounds idle, then rounds beside one `yes >/dev/null`. Each line: MODE rN NP OP IMPL, then
# size:maxrank:span (µs, medians of the timed iterations). Usage: run.sh [ROUNDS] [BUSY_ROUNDS]
set -u
ROUNDS=${1:-3} BUSY_ROUNDS=${2:-2}
B=build/bin A=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sizes=(-b 8 -e 16M -f 8 -t 0.3)
# the '#' detail line of each size: bytes=, maxrank_median_usec=, span_median_usec=
pairs() { sed -n 's/.*bytes=\([0-9]*\) .*maxrank_median_usec=\([0-9.]*\) .*span_median_usec=\([0-9.]*\) .*/\1:\2:\3/p' | tr '\n' ' '; }
obc() {
    local x=()
    [ "$op" = broadcast ] && x=(-i 1)
    "$B/obcrun" --bind "$1" -n "$np" "$B/obc-perf" -o "$op" "${sizes[@]}" "${x[@]}" -v --csv 2>&1 | pairs
}
ompi() {
    local bench=("$A/mpi_coll_bench.openmpi" -o "$op")
    [ "$op" = broadcast ] && bench=("$A/mpi_bcast_bench.openmpi")
    mpirun.openmpi --oversubscribe -n "$np" "${bench[@]}" "${sizes[@]}" -v 2>/dev/null | pairs
}
round() {
    for np in 4 8; do
        for op in broadcast allreduce; do
            echo "$1 $np $op core $(obc core)"
            echo "$1 $np $op none $(obc none)"
            echo "$1 $np $op ompi $(ompi)"
        done
    done
}
for r in $(seq "$ROUNDS"); do round "idle r$r"; done
for r in $(seq "$BUSY_ROUNDS"); do
    yes >/dev/null &
    busy=$!
    round "busy r$r"
    kill "$busy"
done
