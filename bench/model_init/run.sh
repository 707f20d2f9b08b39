#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - the model-initialisation benchmark of issue #13: rank 0's GPT-like
# model (gpt_model.h: 148 tensors, 441.8 MB) reaches every rank, per-tensor
# MPI_Bcast under Open MPI (mpi_model_init.c) against obc's grouped broadcast
# (obc_model_init.c), with the tensors in malloc'd buffers and in one
# obc_mem_alloc block. Rounds alternate the implementations, so the
# machine's drift (large on a shared VM) hits all alike; each run's figure is
# the median of its repetitions of the slowest rank's time.
# Writes DIR/model_init.csv (impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong,round)
# and prints the median per implementation and NP, with the ratio to Open MPI.
# Usage: bench/model_init/run.sh [-n "2 4"] [-R ROUNDS] [-r REPS] [-U BUSY] [-o DIR]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(git -C "$HERE" rev-parse --show-toplevel)
BUILD=${OBC_BUILD:-$TOP/build}
CBUILD=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
NPS="2 4" ROUNDS=5 REPS=3 BUSY=0 RES=""
while getopts "n:R:r:U:o:" opt; do
    case $opt in
    n) NPS=$OPTARG ;;
    R) ROUNDS=$OPTARG ;;
    r) REPS=$OPTARG ;;
    U) BUSY=$OPTARG ;;
    o) RES=$OPTARG ;;
    *) sed -n '2,13p' "$0" >&2; exit 2 ;;
    esac
done
RES=${RES:-$TOP/bench/results/$(date -u +%Y-%m-%d)-model-init}
mkdir -p "$RES" "$CBUILD"
flags=(-O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra)
mpicc.openmpi "${flags[@]}" -o "$CBUILD/mpi_model_init" "$HERE/mpi_model_init.c"
cc "${flags[@]}" -I"$TOP/include" -I"$BUILD/include" "$HERE/obc_model_init.c" \
    -L"$BUILD/lib" -Wl,-rpath,"$BUILD/lib" -lobc -o "$CBUILD/obc_model_init"

busy_pids=()
stop_busy() { [[ ${#busy_pids[@]} -eq 0 ]] || kill "${busy_pids[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
for ((i = 0; i < BUSY; i++)); do
    yes >/dev/null &
    busy_pids+=($!)
done

CSV=$RES/model_init.csv
echo "impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong,round" >"$CSV"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git -C "$TOP" rev-parse --short HEAD)"
    echo "cpus: $(nproc), busy processes: $BUSY, rounds: $ROUNDS, repetitions per run: $REPS"
    echo "open mpi: $(mpirun.openmpi --version 2>&1 | head -1)"
} >"$RES/machine.txt"
for ((round = 1; round <= ROUNDS; round++)); do
    for np in $NPS; do
        oversub=()
        [[ $np -gt $(nproc) ]] && oversub=(--oversubscribe)
        rows=(
            "$(mpirun.openmpi --allow-run-as-root "${oversub[@]}" -n "$np" \
                "$CBUILD/mpi_model_init" -r "$REPS")"
            "$("$BUILD/bin/obcrun" -n "$np" "$CBUILD/obc_model_init" -r "$REPS")"
            "$("$BUILD/bin/obcrun" -n "$np" "$CBUILD/obc_model_init" -r "$REPS" -s)"
        )
        for row in "${rows[@]}"; do
            echo "$row,$round" | tee -a "$CSV"
        done
    done
done
/usr/bin/python3 - "$CSV" <<'PY' | tee "$RES/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((int(r["nranks"]), r["impl"]), []).append(float(r["usec"]) / 1e3)
for np_ in sorted({k[0] for k in by}):
    ref = statistics.median(by[(np_, "openmpi")])
    for (n, impl), v in sorted(by.items()):
        if n == np_:
            m = statistics.median(v)
            print(f"np {n} {impl:20s} median {m:8.1f} ms  (runs {' '.join(f'{x:.0f}' for x in v)})"
                  f"  Open MPI / this = {ref / m:.2f}")
PY
