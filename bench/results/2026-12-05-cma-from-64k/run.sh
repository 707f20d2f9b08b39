#!/usr/bin/env bash
# Alternating rounds, idle (-U 0) and beside one CPU-spinning process (-U 1),
# of the 2-rank broadcast at 16-512 KiB: Open MPI against obc's default
# choice out of place and in place, and single-copy forced
# (OBC_ALGO=broadcast=cma) out of place (obc:cma) and in place (the
# -cma-inplace case, where OBC_ALGO is set for the whole run).
# Usage: bash run.sh OUTDIR [ROUNDS]; then python3 bench/rounds.py OUTDIR
set -e
out=${1:?usage: run.sh OUTDIR [ROUNDS]}
rounds=${2:-4}
cd "$(dirname "$0")/../../.."
for r in $(seq 1 "$rounds"); do
    for U in 0 1; do
        bench/run_bench.sh -n 2 -U $U -k "maxrank span" -i "openmpi obc obc_inplace obc:cma" \
            -b 16K -e 512K -f 2 -t 0.5 -o "$out/r$r-U$U" -D - >/dev/null
        OBC_ALGO=broadcast=cma bench/run_bench.sh -n 2 -U $U -k "maxrank span" \
            -i "openmpi obc_inplace" -b 16K -e 512K -f 2 -t 0.5 \
            -o "$out/r$r-U$U-cma-inplace" -D - >/dev/null
    done
done
