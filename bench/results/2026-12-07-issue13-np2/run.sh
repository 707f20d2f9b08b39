#!/bin/bash
# issue #13's 2-rank rows: broadcast (out of place, and in place: MPI_Bcast's form) and
# allreduce, idle and beside one busy process, both metrics, Open MPI in the same run.
# Usage: bash run.sh OUTDIR [ROUNDS]
set -u
OUT=$1 ROUNDS=${2:-3}
B="$(cd "$(dirname "$0")/../.." && pwd)/run_bench.sh"
for r in $(seq 1 "$ROUNDS"); do
    for U in 0 1; do
        "$B" -n 2 -U "$U" -i "openmpi obc obc_inplace" -b 8 -e 64M -f 4 -t 0.2 -D - \
            -o "$OUT/r$r-np2-U$U-bcast" >/dev/null 2>&1
        "$B" -n 2 -U "$U" -O allreduce -i "openmpi obc" -b 8 -e 64M -f 4 -t 0.2 -D - \
            -o "$OUT/r$r-np2-U$U-allreduce" >/dev/null 2>&1
    done
done
