#!/bin/bash
# SPDX-License-Identifier: MIT
# alltoallv (obc-perf -o alltoallv: blocks of 1-3 half-blocks, as mpi_coll_bench -o alltoallv)
# before and after the pulled messages, beside Open MPI's MPI_Alltoallv, max over ranks.
# Usage: run.sh OLD_COMMIT [ROUNDS]
set -u
TOP=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$TOP" || exit 1
OLD_LIB=$(bench/old_lib.sh "${1:?old commit}") || exit 1
ROUNDS=${2:-2}
ANCH=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SZ=(-b 1K -e 16M -f 4 -t 0.3)
obc() { env "$@" build/bin/obcrun -n "$np" build/bin/obc-perf -o alltoallv "${SZ[@]}" --csv | cut -d, -f3,4 | tr '\n' ' '; }
for ((r = 1; r <= ROUNDS; r++)); do
    for np in 2 4 8; do
        echo "r$r np$np old  $(obc LD_LIBRARY_PATH="$OLD_LIB")"
        echo "r$r np$np new  $(obc OBC_AB=new)"
        echo "r$r np$np ompi $(mpirun.openmpi --oversubscribe -n "$np" "$ANCH/mpi_coll_bench.openmpi" -o alltoallv "${SZ[@]}" 2>/dev/null | grep -v '^#' | cut -d, -f3,4 | tr '\n' ' ')"
    done
done
