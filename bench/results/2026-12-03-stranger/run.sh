#!/bin/bash
# Waits that stop yielding beside a CPU-bound stranger: the library of OLD against this build,
# 4 and 8 ranks on the 2 cores (unbound, obcrun's default there), broadcast in place and
# allreduce, old / new / new / old, then Open MPI; rounds beside one `yes`, then idle.
# Each line: MODE rN NP OP IMPL, then size:maxrank:span (µs, medians of the timed iterations).
# Usage: run.sh OLD_LIBDIR [BUSY_ROUNDS] [IDLE_ROUNDS]
set -u
OLD=$1 BUSY_ROUNDS=${2:-2} IDLE_ROUNDS=${3:-2}
B=build/bin A=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sizes=(-b 8 -e 16M -f 8 -t 0.3)
pairs() { sed -n 's/.*bytes=\([0-9]*\) .*maxrank_median_usec=\([0-9.]*\) .*span_median_usec=\([0-9.]*\) .*/\1:\2:\3/p' | tr '\n' ' '; }
obc() {
    local x=()
    [ "$op" = broadcast ] && x=(-i 1)
    env "$@" "$B/obcrun" -n "$np" "$B/obc-perf" -o "$op" "${sizes[@]}" "${x[@]}" -v --csv 2>&1 | pairs
}
ompi() {
    local bench=("$A/mpi_coll_bench.openmpi" -o "$op")
    [ "$op" = broadcast ] && bench=("$A/mpi_bcast_bench.openmpi")
    mpirun.openmpi --oversubscribe -n "$np" "${bench[@]}" "${sizes[@]}" -v 2>/dev/null | pairs
}
round() {
    for np in 4 8; do
        for op in broadcast allreduce; do
            echo "$1 $np $op old $(obc LD_LIBRARY_PATH="$OLD")"
            echo "$1 $np $op new $(obc OBC_AB=new)"
            echo "$1 $np $op new $(obc OBC_AB=new)"
            echo "$1 $np $op old $(obc LD_LIBRARY_PATH="$OLD")"
            echo "$1 $np $op ompi $(ompi)"
        done
    done
}
for r in $(seq "$BUSY_ROUNDS"); do
    yes >/dev/null &
    busy=$!
    round "busy r$r"
    kill "$busy"
done
for r in $(seq "$IDLE_ROUNDS"); do round "idle r$r"; done
