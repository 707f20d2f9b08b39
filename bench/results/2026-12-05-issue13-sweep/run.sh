#!/bin/bash
# issue #13's matrix on today's machine: broadcast (in place, MPI_Bcast's form, and out of
# place) and allreduce, idle and busy 2 ranks, crowded 4 and 8 ranks, both metrics.
set -eu
OUT=$1; ROUNDS=${2:-3}
B="$(cd "$(dirname "$0")/../.." && pwd)/run_bench.sh"
for r in $(seq 1 $ROUNDS); do
  for U in 0 1; do
    $B -n 2 -U $U -i "openmpi obc obc_inplace" -b 8 -e 64M -f 4 -t 0.2 -D - -o $OUT/r$r-np2-U$U-bcast >/dev/null 2>&1
    $B -n 2 -U $U -O allreduce -i "openmpi obc" -b 8 -e 64M -f 4 -t 0.2 -D - -o $OUT/r$r-np2-U$U-allreduce >/dev/null 2>&1
  done
  $B -n "4 8" -i "openmpi obc_inplace" -b 8 -e 16M -f 4 -t 0.2 -D - -o $OUT/r$r-crowded-bcast >/dev/null 2>&1
  $B -n "4 8" -O allreduce -i "openmpi obc" -b 8 -e 16M -f 4 -t 0.2 -D - -o $OUT/r$r-crowded-allreduce >/dev/null 2>&1
done
