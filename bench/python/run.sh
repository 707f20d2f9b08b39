#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/python/run.sh [RESULTS_DIR] - the Python binding's benchmarks of
# docs/perf/python.md, each implementation in its own launch, alternated REPS
# times so that machine drift hits everyone alike:
#   1. sync_module of an 8 x 8192^2 model (537M float32 parameters, 2 GiB) over
#      4 ranks: obc vs gloo (dist.broadcast per tensor) vs gloo_coalesced;
#   2. a training step of a 25M-parameter MLP at 2 and 4 ranks, batch 32 and 4
#      per rank (the smaller batch makes communication a larger share of the
#      step): obc's GradientAverager vs torch DDP on gloo vs no communication.
# Writes sync_module.csv, train_step.csv and machine.txt to RESULTS_DIR
# (default bench/results/<date>-python), then plots docs/perf/python_*.png.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RES=${1:-$TOP/bench/results/$(date -u +%Y-%m-%d)-python}
REPS=${REPS:-2}
OBCRUN=$TOP/build/bin/obcrun
PY=/usr/bin/python3
export PYTHONPATH=$TOP/python
mkdir -p "$RES"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "git commit: $(git -C "$TOP" rev-parse HEAD) ($(git -C "$TOP" status --porcelain | wc -l) uncommitted paths)"
    echo "cpus (nproc): $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "memory: $(grep MemTotal /proc/meminfo | awk '{printf "%.1f GiB", $2 / 1048576}')"
    echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "python: $($PY --version); torch $($PY -c 'import torch; print(torch.__version__)')"
    echo "reps: $REPS (each a separate launch; sync_module: 3 timed syncs per launch)"
} >"$RES/machine.txt"

port=29600 # gloo's rendezvous: a fresh port per launch (TIME_WAIT of the last one)

echo "impl,nranks,params,bytes,median_s,min_s,per_receiver_GBps,extra_rss_MiB,peak_rss_MiB,wrong" >"$RES/sync_module.csv"
for rep in $(seq "$REPS"); do
    for impl in obc gloo gloo_coalesced; do
        echo "sync_module rep $rep: $impl" >&2
        port=$((port + 1))
        "$OBCRUN" -n 4 --timeout 900 $PY "$TOP/bench/python/bench_sync_module.py" --impl $impl \
            --port $port | tail -n 1 >>"$RES/sync_module.csv"
    done
done

echo "impl,nranks,params,grad_bytes,batch,median_ms,min_ms,consistent" >"$RES/train_step.csv"
for batch in 32 4; do
    for rep in $(seq "$REPS"); do
        for np in 2 4; do
            for impl in obc ddp_gloo local; do
                echo "train_step batch $batch rep $rep: $impl at $np ranks" >&2
                port=$((port + 1))
                "$OBCRUN" -n $np --timeout 900 $PY "$TOP/bench/python/bench_train_step.py" \
                    --impl $impl --batch $batch --port $port | tail -n 1 >>"$RES/train_step.csv"
            done
        done
    done
done
$PY "$TOP/bench/python/plot_python.py" "$RES" "$TOP/docs/perf"
