#!/bin/bash
# issue #13's crowded rows: 4 and 8 ranks on the machine's CPUs, broadcast in place (MPI_Bcast's
# form) and allreduce, idle and beside one busy process, both metrics, Open MPI in the same run.
# Usage: bash run.sh OUTDIR [ROUNDS]
set -u
OUT=$1 ROUNDS=${2:-2}
B="$(cd "$(dirname "$0")/../.." && pwd)/run_bench.sh"
for r in $(seq 1 "$ROUNDS"); do
    for U in 0 1; do
        "$B" -n "4 8" -U "$U" -i "openmpi obc_inplace" -b 8 -e 16M -f 4 -t 0.2 -D - \
            -o "$OUT/r$r-U$U-crowded-bcast" >/dev/null 2>&1
        "$B" -n "4 8" -U "$U" -O allreduce -i "openmpi obc" -b 8 -e 16M -f 4 -t 0.2 -D - \
            -o "$OUT/r$r-U$U-crowded-allreduce" >/dev/null 2>&1
    done
done
