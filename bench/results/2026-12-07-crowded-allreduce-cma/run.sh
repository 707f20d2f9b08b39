#!/bin/bash
# SPDX-License-Identifier: MIT
# Crowded allreduce from 1 MiB: Open MPI against obc's variants, alternating in each round.
# Usage: bash run.sh OUTDIR ROUNDS [VARIANT ...]
#   VARIANT: words for env(1) before obcrun, e.g. OBC_ALGO=allreduce=ring, or
#   "LD_LIBRARY_PATH=/tmp/lib OBC_ALGO=allreduce=cma" (one quoted argument per variant);
#   default: the library's choice and the ring.
#   COLL names the collective for both programs (default allreduce); BUSY=1 starts one
#   CPU-spinning process beside every run; NPS (default "4 8"), MIN (1M), MAX (256M) and
#   EXTRA (more options for both programs, e.g. "-f 4") shape the sweep.
# Writes OUTDIR/openmpi.csv and OUTDIR/obc-<variant>.csv: round,impl,nranks,bytes,usec,... (max
# over ranks); python3 compare.py OUTDIR prints the medians over rounds.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$TOP/build/bin
MPI_BENCH=$TOP/build/bench/mpi_coll_bench
OUT=${1:?usage: run.sh OUTDIR ROUNDS [VARIANT ...]} ROUNDS=${2:?usage: run.sh OUTDIR ROUNDS [VARIANT ...]}
shift 2
[ $# -gt 0 ] || set -- OBC_DEFAULT=1 OBC_ALGO=allreduce=ring
mkdir -p "$OUT"
BP=
if [ "${BUSY:-0}" = 1 ]; then
    sh -c 'while :; do :; done' &
    BP=$!
    trap 'kill $BP' EXIT
fi
for r in $(seq 1 "$ROUNDS"); do
    for np in ${NPS:-4 8}; do
        # shellcheck disable=SC2086 # EXTRA is a list of options
        mpirun.openmpi -n "$np" --oversubscribe --bind-to none "$MPI_BENCH" -o "${COLL:-allreduce}" \
            -b "${MIN:-1M}" -e "${MAX:-256M}" -t 0.2 ${EXTRA:-} 2>&1 | grep -v '^#' |
            sed "s/^/r$r,/" >>"$OUT/openmpi.csv"
        for v in "$@"; do
            # shellcheck disable=SC2086 # a variant is a list of assignments
            env $v "$BIN/obcrun" -n "$np" "$BIN/obc-perf" -o "${COLL:-allreduce}" -b "${MIN:-1M}" \
                -e "${MAX:-256M}" -t 0.2 --csv ${EXTRA:-} 2>&1 |
                sed "s/^/r$r,/" >>"$OUT/obc-$(echo "$v" | tr '=,/ ' '____').csv"
        done
    done
done
