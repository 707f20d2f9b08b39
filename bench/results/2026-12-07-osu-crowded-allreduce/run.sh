#!/bin/bash
# osu_allreduce (OSU 7.4, MPI_INT, back to back, OSU's average over ranks) at 4 and 8 ranks on
# the machine's CPUs under Open MPI: plain, and preloaded with obc's MPI layer in each MODE.
#   plain     no layer
#   default   the layer, the library's own choice
#   ALGO      the layer with OBC_ALGO=allreduce=ALGO (cma, ring, shm)
# Usage: OSU=/tmp/osu/openmpi [MODES="plain default cma ring"] [BUSY=1] [ITERS=100] \
#            bash run.sh [ROUNDS] > OUT.txt      (lines: round ranks mode bytes usec)
# OSU is built as docs/mpi.md says ("Outside validation"); BUSY=1 runs one CPU-spinning
# process beside every launch.
set -u
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
: "${OSU:?set OSU to a built osu-micro-benchmarks tree (docs/mpi.md)}"
MODES=${MODES:-plain default cma ring} BUSY=${BUSY:-0} ITERS=${ITERS:-100}
ROUNDS=${1:-3}
B=$OSU/c/mpi/collective/blocking/osu_allreduce
L=$TOP/build/lib/libobc_mpi.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BP=
if [ "$BUSY" = 1 ]; then
    sh -c 'while :; do :; done' &
    BP=$!
    trap 'kill "$BP"' EXIT
fi
for r in $(seq 1 "$ROUNDS"); do
    for n in 4 8; do
        for m in $MODES; do
            case $m in
            plain) X=() ;;
            default) X=(-x "LD_PRELOAD=$L") ;;
            *) X=(-x "LD_PRELOAD=$L" -x "OBC_ALGO=allreduce=$m") ;;
            esac
            timeout 300 mpirun.openmpi --oversubscribe -np "$n" "${X[@]}" "$B" -T mpi_int \
                -m 524288:16777216 -i "$ITERS" -x 5 2>&1 |
                awk -v r="$r" -v n="$n" -v m="$m" '/^[0-9]/ { print r, n, m, $1, $2 }'
        done
    done
done
