#!/bin/bash
# DDP at 4 ranks on the machine's 2 CPUs, rounds alternating: the compute alone (no DDP),
# obc's default (single-copy allreduce from 1 MiB when ranks outnumber CPUs, d373acd), obc
# with the ring forced (the default before d373acd), gloo.
# Usage: bash run.sh [ROUNDS] [bench_torch_backend.py options]   (from any directory)
set -u
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
ROUNDS=${1:-5}
shift || true
A=("$@")
[ ${#A[@]} -gt 0 ] || A=(--widths 1024 --steps 20 --calls 100 --reps 1)
B="$TOP/bench/python/bench_torch_backend.py"
export PYTHONPATH=$TOP/python
for r in $(seq 1 "$ROUNDS"); do
    for m in local obc obc_ring gloo; do
        echo "== n=4 round=$r mode=$m"
        case $m in
        local) "$TOP/build/bin/obcrun" -n 4 /usr/bin/python3 "$B" --backend gloo --local "${A[@]}" ;;
        obc) "$TOP/build/bin/obcrun" -n 4 /usr/bin/python3 "$B" --backend obc "${A[@]}" ;;
        obc_ring) OBC_ALGO=allreduce=ring "$TOP/build/bin/obcrun" -n 4 /usr/bin/python3 "$B" --backend obc "${A[@]}" ;;
        gloo) "$TOP/build/bin/obcrun" -n 4 /usr/bin/python3 "$B" --backend gloo "${A[@]}" ;;
        esac
    done
done
