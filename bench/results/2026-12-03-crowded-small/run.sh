#!/bin/bash
# Three rounds of small broadcasts and allreduces at 4 and 8 ranks on the 2 cores, both
# metrics, Open MPI and obc interleaved per NP by run_bench.sh. Usage: run.sh OUTDIR
set -eu
out=$1
for r in 1 2 3; do
    bench/run_bench.sh -O broadcast -n "4 8" -i "openmpi obc_inplace" -b 8 -e 4K -f 4 -t 0.3 \
        -o "$out/bcast_r$r" -D - >/dev/null 2>&1
    bench/run_bench.sh -O allreduce -n "4 8" -i "openmpi obc" -b 8 -e 4K -f 4 -t 0.3 \
        -o "$out/allreduce_r$r" -D - >/dev/null 2>&1
done
