#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/netlab/run.sh - the multi-host broadcast benchmark of issue #4 on netlab (network
# namespaces as hosts, tools/netlab/netlab): obc (build/bin/obc-perf) against Gloo
# (torch.distributed) and Open MPI (MPI_Bcast over btl tcp, default and forced pipeline) on
# the same labs, then small-message latency across hosts (bench/netlab/bcast_latency.c).
#
# Usage: bash bench/netlab/run.sh [quick] [OUTDIR]
#   full (default): 4 hosts at 1gbit and 8 hosts at 500mbit, 1 MiB .. 64 MiB (x4) + 256 MiB;
#                   obc 1 and 2 ranks per host, root 0 and root = last rank at 64 MiB;
#                   gloo and Open MPI one process per host; latency lab 8 hosts, --delay 0.2ms.
#                   OUTDIR default bench/results/2026-11-30-netlab. About 14 minutes when idle.
#   quick:          the same steps at 1 .. 4 MiB, fewer iterations (a check of the script);
#                   OUTDIR default /tmp/obc-netlab-quick.
# Environment: IDLE_PCT (10) and IDLE_MAX_S (180): before every step, wait until the machine
# is below IDLE_PCT % busy (1 s sample) or IDLE_MAX_S pass; the busy % seen is recorded.
#
# Writes into OUTDIR: machine.txt, steps.csv (busy % before/during, wall time, exit code of
# every step), bw.csv (anchor CSV rows with the configuration in front), latency.csv,
# wire.csv (bytes each host sent/received per broadcast), logs/ (every program's output),
# run.log (this script's output), multihost.png and tables.md (plot_multihost.py).
# Every lab is created here and removed on exit (tests/netlab/nljob.sh's trap). Needs root
# (else exit 77, as the netlab tests). A failed step (e.g. an anchor) is recorded in steps.csv
# and listed at the end, and the run goes on; exit 0 unless the build or a lab fails.
# The rank environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) comes from
# nljob's nlj_launch; gloo and Open MPI are started as the design's netlab/bench_anchors.sh does
# (kept copies, nothing read from ../shared: gloo_bcast_hosts.py here, mpi_bcast_bench.c in
# bench/anchors/; tools/netlab/netlab-rsh is the remote-launch agent of mpirun).
set -u
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)

MODE=full
case ${1:-} in
    quick | full)
        MODE=$1
        shift
        ;;
esac
if [ "$MODE" = quick ]; then
    OUT=${1:-/tmp/obc-netlab-quick}
else
    OUT=${1:-$SRC/bench/results/2026-11-30-netlab}
fi
mkdir -p "$OUT/logs" || exit 1
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/{steps,bw,latency,wire}.csv "$OUT"/logs/*.log "$OUT"/logs/*.counters

# Everything the run prints also goes to OUTDIR/run.log: this shell runs the benchmark as a
# child writing into a tee (not `exec > >(tee)`: nljob's `wait` would wait for the tee too),
# and turns INT/TERM/HUP into a TERM for it, so that its trap removes the labs.
if [ -z "${OBC_NETLAB_BENCH_CHILD:-}" ]; then
    fifo=$(mktemp -u "${TMPDIR:-/tmp}/obc-netlab-bench.XXXXXX")
    mkfifo "$fifo" || exit 1
    (
        trap '' INT TERM HUP
        exec tee "$OUT/run.log" <"$fifo"
    ) &
    tee_pid=$!
    OBC_NETLAB_BENCH_CHILD=1 bash "$0" "$MODE" "$OUT" >"$fifo" 2>&1 &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null' INT TERM HUP
    while :; do
        wait "$child"
        rc=$?
        kill -0 "$child" 2>/dev/null || break
    done
    wait "$tee_pid"
    rm -f "$fifo"
    exit "$rc"
fi

# shellcheck disable=SC1091 # (run shellcheck -x from the repository root to follow it)
. "$SRC/tests/netlab/nljob.sh"
nlj_init # root + namespaces (else exit 77); removes every lab on exit

BUILD=$SRC/build
OBC_PERF=$BUILD/bin/obc-perf
LAT_BIN=$BUILD/bench/bcast_latency
MPI_BIN=$BUILD/bench/mpi_bcast_bench
RSH=$SRC/tools/netlab/netlab-rsh
PY=/usr/bin/python3
IDLE_PCT=${IDLE_PCT:-10}
IDLE_MAX_S=${IDLE_MAX_S:-180}
T0_RUN=$SECONDS

if [ "$MODE" = quick ]; then
    SWEEP_MIN=1M SWEEP_MAX=4M BIG="" WIRE=4M
    OBC_SWEEP=(-w 1 -m 3 -n 10 -t 0.2)
    GLOO_SIZES=1M,4M GLOO_ITERS=2
    ROOT_ALTS=1 LAT_ITERS=50
else
    SWEEP_MIN=1M SWEEP_MAX=64M BIG=256M WIRE=64M
    OBC_SWEEP=(-w 1 -m 5 -n 50 -t 0.5)
    GLOO_SIZES=1M,4M,16M,64M GLOO_ITERS=5
    ROOT_ALTS=2 LAT_ITERS=200
fi
OBC_BIG=(-w 1 -m 3 -n 3) # 256 MiB: 1 warmup + 3 timed, for every implementation
OBC_ROOT=(-w 1 -m 5 -n 5) # the root pairs at WIRE bytes: 1 warmup + 5 timed

# ---------------------------------------------------------------- build
build_all() {
    local try
    for try in 1 2 3; do
        make -C "$BUILD" -j2 >"$OUT/logs/build.log" 2>&1 && break
        echo "build failed (try $try; another engineer may be editing src/): retry in 60 s"
        [ "$try" = 3 ] && { tail -20 "$OUT/logs/build.log"; exit 1; }
        sleep 60
    done
    mkdir -p "$BUILD/bench"
    cc -std=c11 -O2 -Wall -I"$SRC/include" -I"$BUILD/include" "$HERE/bcast_latency.c" \
        -L"$BUILD/lib" -lobc -Wl,-rpath,"$BUILD/lib" -o "$LAT_BIN" || exit 1
    HAVE_MPI=0
    if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
        mpicc.openmpi -O2 -o "$MPI_BIN" "$HERE/../anchors/mpi_bcast_bench.c" && HAVE_MPI=1
    fi
    HAVE_GLOO=0
    "$PY" -c 'import torch.distributed, numpy' 2>/dev/null && HAVE_GLOO=1
    LIB_STAMP=$(lib_stamp)
}
# The build dir may be shared with someone rebuilding it: note any change of the library.
lib_stamp() { stat -L -c '%y %s' "$BUILD/lib/libobc.so" 2>/dev/null; }
lib_check() {
    local now
    now=$(lib_stamp)
    [ "$now" = "$LIB_STAMP" ] && return
    echo "WARNING: $BUILD/lib/libobc.so changed before step $STEP (now: $now;" \
        "HEAD $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null))" | tee -a "$OUT/machine.txt"
    LIB_STAMP=$now
}

machine_info() {
    {
        echo "date: $(date -u +%FT%TZ)"
        echo "mode: $MODE"
        echo "commit: $(git -C "$SRC" rev-parse HEAD 2>/dev/null)" \
            "($(git -C "$SRC" status --short -- src include 2>/dev/null | wc -l) files of src/ include/ changed)"
        echo "obc: $(awk '/define OBC_VERSION_(MAJOR|MINOR|PATCH)/ { v = v (v == "" ? "" : ".") $3 } END { print v }' "$SRC/include/obc.h")"
        echo "kernel: $(uname -r)"
        echo "cpus: $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
        echo "memory: $(awk '/MemTotal/{printf "%.1f GiB", $2/2^20}' /proc/meminfo)"
        echo "cc: $(cc --version | head -1)"
        echo "open mpi: $(mpirun.openmpi --version 2>/dev/null | head -1) (have=$HAVE_MPI)"
        echo "torch: $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null) (have=$HAVE_GLOO)"
        echo "idle wait: < $IDLE_PCT % busy, at most $IDLE_MAX_S s"
        echo "libobc.so: $LIB_STAMP"
    } >"$OUT/machine.txt"
    cat "$OUT/machine.txt"
}

# ---------------------------------------------------------------- steps
stat_busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
busy_since() { # busy % of the whole machine between snapshot "$1 $2" and now
    local b
    read -ra b <<<"$(stat_busy)"
    echo $((100 * (b[0] - $1) / (b[1] - $2 > 0 ? b[1] - $2 : 1)))
}
# As the design's netlab/bench_anchors.sh: sample 1 s until < IDLE_PCT % busy.
wait_idle() {
    local a t0=$SECONDS
    while :; do
        read -ra a <<<"$(stat_busy)"
        sleep 1
        BUSY=$(busy_since "${a[@]}")
        if [ "$BUSY" -lt "$IDLE_PCT" ] || [ $((SECONDS - t0)) -ge "$IDLE_MAX_S" ]; then
            IDLE_WAIT=$((SECONDS - t0))
            return
        fi
    done
}

STEP=""
step_begin() { # CFG NAME
    STEP=$1.$2
    wait_idle
    lib_check
    echo "== $(date -u +%T) $STEP (machine busy ${BUSY}% before, after ${IDLE_WAIT} s of waiting)"
    "$NETLAB" counters >"$OUT/logs/$STEP.c0" 2>/dev/null
    read -ra STEP_STAT <<<"$(stat_busy)"
    STEP_T0=$EPOCHREALTIME
}
step_end() { # RC
    local rc=$1 during wall
    during=$(busy_since "${STEP_STAT[@]}")
    wall=$(nlj_calc 'b - a' "a=$STEP_T0" "b=$EPOCHREALTIME")
    "$NETLAB" counters >"$OUT/logs/$STEP.c1" 2>/dev/null
    paste "$OUT/logs/$STEP.c0" "$OUT/logs/$STEP.c1" |
        awk 'NR > 1 { print $1, $8 - $2, $9 - $3 }' >"$OUT/logs/$STEP.counters"
    rm -f "$OUT/logs/$STEP.c0" "$OUT/logs/$STEP.c1"
    echo "$STEP,$BUSY,$during,$wall,$rc" >>"$OUT/steps.csv"
    echo "   done in $wall s, exit $rc, machine busy ${during}% during the step"
    [ "$rc" = 0 ] || echo "   FAILED: $STEP (exit $rc): see $OUT/logs/$STEP*.log"
}
# wire.csv: bytes per broadcast of host I = counter delta of the last step / NBCAST.
wire_record() { # CFG IMPL NBCAST
    awk -v c="$1" -v i="$2" -v n="$3" '{ printf "%s,%s,%s,%.3f,%.3f,%d\n", c, i, $1, $2 / n / 2^20, $3 / n / 2^20, n }' \
        "$OUT/logs/$STEP.counters" >>"$OUT/wire.csv"
}
# bw.csv rows: CFG,HOSTS,RATE_MBIT,RANKS_PER_HOST,ROOT, then the anchor CSV row.
bw_rows() { # LOG CFG H RATE R ROOT [IMPL]
    grep -E '^[A-Za-z][A-Za-z0-9_.-]*,[0-9]+,[0-9]+,' "$1" | grep -v '^impl,' |
        awk -F, -v OFS=, -v pre="$2,$3,$4,$5,$6" -v impl="${7:-}" '{ if (impl != "") $1 = impl; print pre, $0 }' \
            >>"$OUT/bw.csv"
}

CFG="" HOSTS=0 RATE_MBIT=0
lab() { # CFG HOSTS NETLAB-OPTIONS...
    CFG=$1 HOSTS=$2
    shift 2
    nlj_lab_up "${CFG:0:3}" "$HOSTS" "$@"
    "$NETLAB" status >"$OUT/logs/$CFG.netlab-status.txt" 2>&1
}

# obc-perf on HOSTS x R ranks (nljob sets RANK/WORLD_SIZE/LOCAL_RANK/MASTER_*).
run_obc() { # NAME R ROOT LABEL OBC-PERF-ARGS...
    local name=$1 r=$2 root=$3 label=$4 rc k
    shift 4
    step_begin "$CFG" "$name"
    nlj_launch "$HOSTS" "$r" "$OBC_PERF" --csv -H -v --label "$label" -r "$root" "$@"
    nlj_wait 900
    rc=$?
    cp "$NLJ_DIR/rank0.log" "$OUT/logs/$STEP.log"
    if [ "$rc" != 0 ]; then
        for ((k = 1; k < NLJ_N; k++)); do cp "$NLJ_DIR/rank$k.log" "$OUT/logs/$STEP.rank$k.log"; done
    fi
    bw_rows "$OUT/logs/$STEP.log" "$CFG" "$HOSTS" "$RATE_MBIT" "$r" "$root"
    grep -v '^#' "$OUT/logs/$STEP.log" | grep -v '^impl,' | sed 's/^/   /'
    step_end "$rc"
    return "$rc"
}

# gloo_bcast_hosts.py, rank I on host I (as the design's netlab/gloo_run.sh).
run_gloo() { # NAME SIZES WARMUP ITERS
    local name=$1 sizes=$2 warmup=$3 iters=$4 port master i rc=0 r pids=()
    step_begin "$CFG" "$name"
    if [ "$HAVE_GLOO" != 1 ]; then
        echo "   gloo not available (/usr/bin/python3 without torch): skipped" | tee "$OUT/logs/$STEP.log"
        step_end 127
        return
    fi
    port=$(nlj_free_port)
    master=$("$NETLAB" ip 0)
    for ((i = 0; i < HOSTS; i++)); do
        timeout -k 10 900 "$NETLAB" exec "$i" "$PY" "$HERE/gloo_bcast_hosts.py" --world "$HOSTS" \
            --rank "$i" --master "$master" --port "$port" --sizes "$sizes" --warmup "$warmup" \
            --iters "$iters" --header >"$OUT/logs/$STEP.rank$i.log" 2>&1 </dev/null &
        pids+=($!)
    done
    for i in "${pids[@]}"; do
        wait "$i" || { r=$?; [ "$r" -gt "$rc" ] && rc=$r; }
    done
    mv "$OUT/logs/$STEP.rank0.log" "$OUT/logs/$STEP.log"
    [ "$rc" = 0 ] && rm -f "$OUT"/logs/"$STEP".rank*.log
    bw_rows "$OUT/logs/$STEP.log" "$CFG" "$HOSTS" "$RATE_MBIT" 1 0 gloo
    grep -E '^gloo-hosts,' "$OUT/logs/$STEP.log" | sed 's/^/   /'
    step_end "$rc"
}
# gloo's own per-rank eth0 counters per broadcast at BYTES (its '#' line) -> wire.csv.
gloo_wire() { # BYTES
    local b
    b=$(awk -v s="$1" 'BEGIN { m = 1; if (s ~ /M$/) m = 2^20; if (s ~ /G$/) m = 2^30; printf "%d", s * m }')
    grep -E "^# bytes=$b per-rank" "$OUT/logs/$STEP.log" | sed 's/.*per-rank median: //' | tr ';' '\n' |
        sed -nE 's/^ *r([0-9]+) .* tx ([0-9.]+) MiB rx ([0-9.]+) MiB.*/\1 \2 \3/p' |
        while read -r r tx rx; do echo "$CFG,gloo,h$r,$tx,$rx,$GLOO_ITERS"; done >>"$OUT/wire.csv"
}

# mpi_bcast_bench under mpirun.openmpi started inside h0, orteds through netlab-rsh.
run_mpi() { # NAME VARIANT MIN MAX WARMUP ITERS
    local name=$1 variant=$2 minb=$3 maxb=$4 warmup=$5 iters=$6 hosts i rc extra
    step_begin "$CFG" "$name"
    if [ "$HAVE_MPI" != 1 ]; then
        echo "   Open MPI not available: skipped" | tee "$OUT/logs/$STEP.log"
        step_end 127
        return
    fi
    hosts=$(for ((i = 0; i < HOSTS; i++)); do printf 'h%d,' "$i"; done)
    case $variant in
        openmpi) extra=(--mca mpi_yield_when_idle 1) ;;
        openmpi_pipeline)
            extra=(--mca mpi_yield_when_idle 1 --mca coll_tuned_use_dynamic_rules 1
                --mca coll_tuned_bcast_algorithm 3 --mca coll_tuned_bcast_algorithm_segmentsize 1048576) ;;
    esac
    timeout -k 10 900 "$NETLAB" exec 0 mpirun.openmpi --allow-run-as-root -np "$HOSTS" \
        --host "${hosts%,}" --mca plm_rsh_agent "$RSH" --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 "${extra[@]}" \
        "$MPI_BIN" -i "$variant" -b "$minb" -e "$maxb" -f 4 -w "$warmup" -n "$iters" -m "$iters" \
        -t 0 -H -v >"$OUT/logs/$STEP.log" 2>&1 </dev/null
    rc=$?
    bw_rows "$OUT/logs/$STEP.log" "$CFG" "$HOSTS" "$RATE_MBIT" 1 0
    grep -E "^$variant," "$OUT/logs/$STEP.log" | sed 's/^/   /'
    step_end "$rc"
}

# ---------------------------------------------------------------- one bandwidth configuration
bandwidth_config() { # CFG HOSTS RATE RATE_MBIT
    local cfg=$1 h=$2 rate=$3 last1 last2 a v
    RATE_MBIT=$4
    lab "$cfg" "$h" --rate "$rate"
    last1=$((h - 1)) last2=$((2 * h - 1))

    # obc: 1 and 2 ranks per host, default algorithm choice, root 0.
    run_obc obc.1rph.sweep 1 0 obc -b "$SWEEP_MIN" -e "$SWEEP_MAX" -f 4 "${OBC_SWEEP[@]}"
    run_obc obc.2rph.sweep 2 0 obc_2rph -b "$SWEEP_MIN" -e "$SWEEP_MAX" -f 4 "${OBC_SWEEP[@]}"
    if [ -n "$BIG" ]; then
        run_obc obc.1rph.big 1 0 obc -b "$BIG" -e "$BIG" "${OBC_BIG[@]}"
        run_obc obc.2rph.big 2 0 obc_2rph -b "$BIG" -e "$BIG" "${OBC_BIG[@]}"
    fi
    # Root independence at WIRE bytes: root 0 and root = last rank, alternated.
    for ((a = 1; a <= ROOT_ALTS; a++)); do
        run_obc "obc.1rph.root0.$a" 1 0 obc_root0 -b "$WIRE" -e "$WIRE" "${OBC_ROOT[@]}"
        [ "$a" = 1 ] && wire_record "$cfg" obc $((1 + 5))
        run_obc "obc.1rph.rootlast.$a" 1 "$last1" obc_rootlast -b "$WIRE" -e "$WIRE" "${OBC_ROOT[@]}"
        run_obc "obc.2rph.root0.$a" 2 0 obc_2rph_root0 -b "$WIRE" -e "$WIRE" "${OBC_ROOT[@]}"
        run_obc "obc.2rph.rootlast.$a" 2 "$last2" obc_2rph_rootlast -b "$WIRE" -e "$WIRE" "${OBC_ROOT[@]}"
    done

    # gloo, one process per host.
    run_gloo gloo.sweep "$GLOO_SIZES" 1 "$GLOO_ITERS"
    gloo_wire "$WIRE"
    [ -n "$BIG" ] && run_gloo gloo.big "$BIG" 1 3

    # Open MPI, one process per host: default algorithm choice and forced pipeline.
    for v in openmpi openmpi_pipeline; do
        if [ "$MODE" = quick ]; then
            run_mpi "$v.sweep" "$v" "$SWEEP_MIN" "$SWEEP_MAX" 1 3
            run_mpi "$v.wire" "$v" "$WIRE" "$WIRE" 1 3
            wire_record "$cfg" "$v" 4
        else
            run_mpi "$v.sweep" "$v" "$SWEEP_MIN" 16M 1 5
            run_mpi "$v.wire" "$v" "$WIRE" "$WIRE" 1 5
            wire_record "$cfg" "$v" 6
            run_mpi "$v.big" "$v" "$BIG" "$BIG" 1 3
        fi
    done
    nlj_lab_down
}

# ---------------------------------------------------------------- latency across hosts
latency_config() {
    local h
    RATE_MBIT=0
    lab lat8 8 --delay 0.2ms
    echo "tool,hosts,delay_ms,root,iters,median_us,p10_us,p90_us,min_us,max_us,span_median_us,bad" \
        >"$OUT/latency.csv"
    for h in 2 4 8; do
        HOSTS=$h
        step_begin lat8 "bcast_latency.${h}hosts"
        nlj_launch "$h" 1 "$LAT_BIN" -n "$LAT_ITERS" -w 10 -s 3
        nlj_wait 300
        local rc=$?
        cp "$NLJ_DIR/rank0.log" "$OUT/logs/$STEP.log"
        sed 's/^/   /' "$OUT/logs/$STEP.log"
        awk -F, -v h="$h" '/^latency,/ { printf "bcast_latency,%d,0.2,%s,%s,%s,%s,%s,%s,%s,,%s\n", h, $5, $6, $7, $8, $9, $10, $11, $12 }' \
            "$OUT/logs/$STEP.log" >>"$OUT/latency.csv"
        step_end "$rc"
    done
    HOSTS=8
    step_begin lat8 "bcast_latency.8hosts.root7"
    nlj_launch 8 1 "$LAT_BIN" -n "$LAT_ITERS" -w 10 -s 3 -r 7
    nlj_wait 300
    local rc=$?
    cp "$NLJ_DIR/rank0.log" "$OUT/logs/$STEP.log"
    sed 's/^/   /' "$OUT/logs/$STEP.log"
    awk -F, '/^latency,/ { printf "bcast_latency,8,0.2,%s,%s,%s,%s,%s,%s,%s,,%s\n", $5, $6, $7, $8, $9, $10, $11, $12 }' \
        "$OUT/logs/$STEP.log" >>"$OUT/latency.csv"
    step_end "$rc"
    for h in 2 8; do
        HOSTS=$h
        run_obc "obc-perf.8B.${h}hosts" 1 0 obc -b 8 -e 8 -w 10 -m "$LAT_ITERS" -n "$LAT_ITERS"
        # maxrank: obc-perf's usec column; span: its -v line; min/max of maxrank.
        sed -nE 's/^# impl=obc bytes=8 iters=([0-9]+) maxrank_median_usec=([0-9.]+) maxrank_min_usec=([0-9.]+) maxrank_max_usec=([0-9.]+) span_median_usec=([0-9.]+).*/\1 \2 \3 \4 \5/p' \
            "$OUT/logs/$STEP.log" | while read -r it med mn mx span; do
            echo "obc-perf,$h,0.2,0,$it,$med,,,$mn,$mx,$span,0"
        done >>"$OUT/latency.csv"
    done
    nlj_lab_down
}

# ---------------------------------------------------------------- main
build_all
machine_info
echo "step,busy_before_pct,busy_during_pct,wall_s,rc" >"$OUT/steps.csv"
echo "config,hosts,rate_mbit,ranks_per_host,root,impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong" \
    >"$OUT/bw.csv"
echo "config,impl,host,tx_MiB_per_bcast,rx_MiB_per_bcast,bcasts" >"$OUT/wire.csv"

bandwidth_config 4x1gbit 4 1gbit 1000
bandwidth_config 8x500mbit 8 500mbit 500
latency_config

echo "== all steps done in $((SECONDS - T0_RUN)) s; failed steps:"
awk -F, 'NR > 1 && $5 != 0 { print "   " $1 " exit " $5 }' "$OUT/steps.csv"
if "$PY" -c 'import matplotlib' 2>/dev/null; then
    "$PY" "$HERE/plot_multihost.py" "$OUT" --png "$OUT/multihost.png" --md "$OUT/tables.md" &&
        echo "plot: $OUT/multihost.png, tables: $OUT/tables.md"
fi
exit 0
