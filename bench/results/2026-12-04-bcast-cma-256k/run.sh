#!/usr/bin/env bash
# Six alternating rounds, idle (-U 0) and beside one CPU-spinning process
# (-U 1), of the 2-rank broadcast at 64-256 KiB: Open MPI against obc's two
# staged-or-single-copy choices forced (OBC_ALGO=broadcast=cma / =arena).
# Usage: bash run.sh OUTDIR; then python3 bench/rounds.py OUTDIR
set -e
out=${1:?usage: run.sh OUTDIR}
cd "$(dirname "$0")/../../.."
for r in 1 2 3 4 5 6; do
    for U in 0 1; do
        bench/run_bench.sh -n 2 -U $U -k "maxrank span" -i "openmpi obc:cma obc:arena" \
            -b 64K -e 256K -f 2 -t 1 -o "$out/r$r-U$U" -D - >/dev/null
    done
done
