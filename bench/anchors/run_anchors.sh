#!/usr/bin/env bash
# run_anchors.sh - build and run the broadcast anchors, print one combined CSV.
#
# Usage: run_anchors.sh [options]
#   -n "2 4 8"        NP list (default "2 4 8")
#   -i "LIST"         anchors to run, any of:
#                       memcpy        memcpy_limit (large-message physical limit, once)
#                       memcpy_nt     memcpy_limit with glibc's non-temporal-store path
#                                     forced (GLIBC_TUNABLES, threshold $NT_THRESHOLD)
#                       latency       latency_limit (small-message physical limit, once)
#                       openmpi       Open MPI, default MCA settings
#                       openmpi_yield Open MPI with --mca mpi_yield_when_idle 1
#                       mpich         MPICH (hydra)
#                       gloo          torch.distributed gloo (/usr/bin/python3)
#                     default: "memcpy memcpy_nt latency openmpi mpich gloo"
#   -b MIN            smallest message (default 8; K/M/G suffixes ok)
#   -e MAX            largest message (default 256M)
#   -f FACTOR         size step factor (default 2)
#   -t SECONDS        time budget per size for the timed loop (default 0.5)
#   -w WARMUP         warmup iterations per size (default 3)
#   -N MAXIT          max timed iterations per size (default 200)
#   -m MINIT          min timed iterations per size (default 5)
#   -r ROOT           broadcast root (default 0)
#   -M "MIN MAX"      memcpy size range (default "64K 1G")
#   -o FILE           also write the combined CSV to FILE
#   -l FILE           log file for '#' detail lines and stderr
#                     (default /tmp/obc-anchors-build/run_anchors.log)
#   -T SECONDS        timeout of one (anchor, NP) run (default 1800)
#   -I                wait (up to 120 s) for the CPUs to be idle before each run
#   -S                span mode: usec = (latest end over ranks) - (root's start),
#                     from CLOCK_MONOTONIC, instead of the max-over-ranks time
#                     (passes -S to the benchmarks; labels unchanged, so keep
#                     span CSVs in separate files)
#
# Env: OBC_ANCHORS_BUILD  build directory (default /tmp/obc-anchors-build)
#      CC_OPENMPI / CC_MPICH / RUN_OPENMPI / RUN_MPICH / PY   tool overrides
#      NT_THRESHOLD  glibc.cpu.x86_non_temporal_threshold for memcpy_nt
#                    (default 0x100000 = 1 MiB; glibc ignores values <= 0x4040)
#
# stdout: header + CSV rows  impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
#
# SPDX-License-Identifier: MIT
# Kept copy of the design's anchors/run_anchors.sh (../shared), unchanged but for these
# four lines, so that bench/run_bench.sh runs from a fresh clone.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
CC_OPENMPI=${CC_OPENMPI:-mpicc.openmpi}
CC_MPICH=${CC_MPICH:-mpicc.mpich}
RUN_OPENMPI=${RUN_OPENMPI:-mpirun.openmpi}
RUN_MPICH=${RUN_MPICH:-mpirun.mpich}
PY=${PY:-/usr/bin/python3}
NT_THRESHOLD=${NT_THRESHOLD:-0x100000}

NPS="2 4 8"
IMPLS="memcpy memcpy_nt latency openmpi mpich gloo"
MINB=8 MAXB=256M FACTOR=2 BUDGET=0.5 WARMUP=3 MAXIT=200 MINIT=5 ROOT=0
MEMCPY_RANGE="64K 1G"
OUT="" LOG="" RUN_TIMEOUT=1800 WAIT_IDLE=0 SPAN=()

while getopts "n:i:b:e:f:t:w:N:m:r:M:o:l:T:ISh" opt; do
    case $opt in
    n) NPS=$OPTARG ;;
    i) IMPLS=$OPTARG ;;
    b) MINB=$OPTARG ;;
    e) MAXB=$OPTARG ;;
    f) FACTOR=$OPTARG ;;
    t) BUDGET=$OPTARG ;;
    w) WARMUP=$OPTARG ;;
    N) MAXIT=$OPTARG ;;
    m) MINIT=$OPTARG ;;
    r) ROOT=$OPTARG ;;
    M) MEMCPY_RANGE=$OPTARG ;;
    o) OUT=$OPTARG ;;
    l) LOG=$OPTARG ;;
    T) RUN_TIMEOUT=$OPTARG ;;
    I) WAIT_IDLE=1 ;;
    S) SPAN=(-S) ;;
    h | *) sed -n '2,39p' "$0"; exit 2 ;;
    esac
done

mkdir -p "$BUILD"
LOG=${LOG:-$BUILD/run_anchors.log}
: >"$LOG"
log() { printf '# %s\n' "$*" >>"$LOG"; printf '# %s\n' "$*" >&2; }

# ---------------------------------------------------------------- build
build() {
    gcc -O2 -pthread -o "$BUILD/memcpy_limit" "$HERE/memcpy_limit.c"
    gcc -O2 -o "$BUILD/latency_limit" "$HERE/latency_limit.c"
    if command -v "$CC_OPENMPI" >/dev/null; then
        "$CC_OPENMPI" -O2 -o "$BUILD/mpi_bcast_bench.openmpi" "$HERE/mpi_bcast_bench.c"
    else
        log "warning: $CC_OPENMPI not found, Open MPI anchor unavailable"
    fi
    if command -v "$CC_MPICH" >/dev/null; then
        "$CC_MPICH" -O2 -o "$BUILD/mpi_bcast_bench.mpich" "$HERE/mpi_bcast_bench.c"
    else
        log "warning: $CC_MPICH not found, MPICH anchor unavailable"
    fi
}
build

# ---------------------------------------------------------------- helpers
# Busy fraction of all CPUs over ~1 s, in percent (from /proc/stat).
cpu_busy_pct() {
    local a b
    read -r -a a < <(grep '^cpu ' /proc/stat)
    sleep 1
    read -r -a b < <(grep '^cpu ' /proc/stat)
    local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
    local total=0 i
    for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
    (( total > 0 )) || { echo 0; return; }
    echo $(( 100 * (total - idle) / total ))
}

wait_idle() {
    (( WAIT_IDLE )) || return 0
    local waited=0 busy
    while :; do
        busy=$(cpu_busy_pct)
        if (( busy < 10 )); then
            log "cpu busy ${busy}% before run (waited ${waited}s)"
            return 0
        fi
        waited=$(( waited + 1 ))
        if (( waited >= 120 )); then
            log "warning: CPUs still ${busy}% busy after 120 s; running anyway"
            return 0
        fi
    done
}

COMMON=(-b "$MINB" -e "$MAXB" -f "$FACTOR" -r "$ROOT" -w "$WARMUP" -n "$MAXIT"
        -m "$MINIT" -t "$BUDGET" -v "${SPAN[@]}")

TMP=$(mktemp -d /tmp/obc-anchors.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# Run one anchor; CSV rows go to stdout (and $OUT), '#' lines to the log.
run_one() {
    local label=$1; shift
    local raw="$TMP/raw.txt" rc=0
    wait_idle
    log "run $label at $(date +%T): $*"
    local t0=$SECONDS
    timeout --kill-after=10 "$RUN_TIMEOUT" "$@" >"$raw" 2>>"$LOG" || rc=$?
    log "end $label at $(date +%T) rc=$rc wall=$(( SECONDS - t0 ))s loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
    grep '^#' "$raw" >>"$LOG" || true
    grep -v '^#' "$raw" | grep -v '^impl,' | grep ',' | tee -a "${OUT:-/dev/null}" || true
    if (( rc != 0 )); then
        log "warning: $label exited with $rc (timeout=124/137); rows above are partial"
    fi
}

HEADER="impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong"
echo "$HEADER"
[[ -n $OUT ]] && echo "$HEADER" >"$OUT"
log "host: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
log "sizes $MINB..$MAXB x$FACTOR, budget ${BUDGET}s/size, warmup $WARMUP, iters $MINIT..$MAXIT, root $ROOT"

for impl in $IMPLS; do
    if [[ $impl == memcpy ]]; then
        read -r mlo mhi <<<"$MEMCPY_RANGE"
        run_one memcpy "$BUILD/memcpy_limit" -b "$mlo" -e "$mhi" -f 2 -r 7
    elif [[ $impl == memcpy_nt ]]; then
        read -r mlo mhi <<<"$MEMCPY_RANGE"
        # glibc silently ignores out-of-range values: log what it really uses
        log "effective: $(GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=$NT_THRESHOLD \
            /lib64/ld-linux-x86-64.so.2 --list-tunables 2>/dev/null | grep non_temporal || echo unknown)"
        run_one memcpy_nt env GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=$NT_THRESHOLD \
            "$BUILD/memcpy_limit" -l memcpy_nt -b "$mlo" -e "$mhi" -f 2 -r 7
    elif [[ $impl == latency ]]; then
        run_one latency "$BUILD/latency_limit"
    fi
done

for np in $NPS; do
    for impl in $IMPLS; do
        case $impl in
        memcpy | memcpy_nt | latency) ;;
        openmpi | openmpi_yield)
            extra=()
            [[ $impl == openmpi_yield ]] && extra=(--mca mpi_yield_when_idle 1)
            run_one "$impl np=$np" "$RUN_OPENMPI" --allow-run-as-root --oversubscribe \
                "${extra[@]}" -np "$np" "$BUILD/mpi_bcast_bench.openmpi" -i "$impl" "${COMMON[@]}"
            ;;
        mpich)
            run_one "mpich np=$np" "$RUN_MPICH" -np "$np" \
                "$BUILD/mpi_bcast_bench.mpich" -i mpich "${COMMON[@]}"
            ;;
        gloo)
            run_one "gloo np=$np" "$PY" "$HERE/gloo_bcast_bench.py" --np "$np" --impl gloo \
                "${COMMON[@]}"
            ;;
        *) log "warning: unknown anchor '$impl' skipped" ;;
        esac
    done
done
