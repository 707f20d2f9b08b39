#!/bin/bash
# run.sh ROUNDS OUT: issue #13's headline cases against Open MPI through
# bench/run_bench.sh (which interleaves the implementations per NP): 2 ranks
# beside one busy process (broadcast in place, MPI_Bcast's form, 64 KiB-4 MiB;
# allreduce 64 KiB-1 MiB), then idle 4 and 8 ranks on the 2 cores (broadcast in
# place, 256 KiB-2 MiB). Max over ranks. OUT/rR-CASE/ holds each run_bench.sh
# results dir; bench/rounds.py OUT prints the medians over rounds.
set -eu
ROUNDS=${1:-3}
OUT=${2:-out}
BENCH="$(cd "$(dirname "$0")/../.." && pwd)/run_bench.sh"
run() { # name, then run_bench.sh options
    local name=$1
    shift
    "$BENCH" -k maxrank -t 0.3 -f 4 -D - -o "$OUT/r$r-$name" "$@" > /dev/null
}
for r in $(seq 1 "$ROUNDS"); do
    run busy-broadcast -U 1 -n 2 -i "openmpi obc_inplace" -b 64K -e 4M
    run busy-allreduce -U 1 -n 2 -i "openmpi obc" -O allreduce -b 64K -e 1M
    run crowded-broadcast -n "4 8" -i "openmpi obc_inplace" -b 256K -e 2M
done
