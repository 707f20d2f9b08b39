#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_bench.sh - one comparison run of a collective (broadcast by default): the
# reference rows and anchors of bench/anchors (memcpy and latency limits, Open
# MPI, MPICH, gloo) and obc-perf under obcrun, with the same sizes and method,
# interleaved per NP so that machine drift hits everyone alike. Each metric
# (max-over-ranks, span) gets its own CSV, because plot.py would take medians over
# rows of both kinds; the limits get one CSV shared by both plots. Results and
# machine info go to a results dir; PNGs and markdown tables go to docs/perf/
# (bench/anchors/plot.py for broadcast, bench/plot_coll.py for the others).
# Broadcast anchors come from bench/anchors/run_anchors.sh (kept copies of the design's
# anchors: nothing is read from ../shared); the anchors of the other collectives from
# bench/anchors/ (mpi_coll_bench.c, built into /tmp, and gloo_coll_bench.py), float32
# SUM, sizes and busbw as nccl-tests.
#
# Several rounds of the same run (one results dir each, r<N>[-CASE]): bench/rounds.py
# prints their medians and ratios to Open MPI.
#
# Usage: bench/run_bench.sh [options]
#   -O OP           collective: broadcast allreduce reduce allgather reduce_scatter
#                   gather scatter alltoall alltoallv allgatherv sendrecv (default
#                   broadcast); writes OP_{maxrank,span}.{csv,png,md}
#                   sendrecv: a ping-pong of rank 0 and the last rank, usec = round trip,
#                   busbw = one-way bandwidth; its MPI anchor (anchors/mpi_pingpong.c)
#                   has the maxrank metric only, gloo none
#   -n "2 4 8"      NP list (default "2 4 8")
#   -i "LIST"       what to run (default "memcpy memcpy_nt latency openmpi mpich gloo obc"):
#                     memcpy memcpy_nt latency     reference rows (once, both metrics)
#                     openmpi openmpi_yield mpich gloo   anchors (gloo has no
#                                   reduce_scatter, alltoallv or allgatherv here
#                                   (torch's gloo all_gather refuses uneven blocks):
#                                   skipped with a warning; its alltoall is
#                                   all_to_all_single)
#                     obc           obc-perf -o OP, out of place (label obc)
#                     obc_inplace   in place (label obc_inplace)
#                     obc_async     obc_i<OP> + obc_wait (label obc_async)
#                     obc_shared    buffers from obc_mem_alloc (label obc_shared): a
#                                   broadcast from one is copied once
#                     obc_shared_inplace   the same, in place (MPI_Bcast's form): the
#                                   root has no copy of its own to make, so root and
#                                   readers share the readers' copies
#                     obc:ALGO      OBC_ALGO=OP=ALGO (label obc_ALGO); ALGO is one of
#                                   broadcast: eager arena cma; allreduce: shm ring
#                                   recdbl hier; reduce, allgather, reduce_scatter: shm ring;
#                                   gather, scatter: direct cma; alltoall: pairwise cma;
#                                   alltoallv, allgatherv: pairwise posted
#                     BASE+VAR=VALUE[+VAR=VALUE...]   any obc item above run with
#                                   these environment variables (label: the item as
#                                   written, ':' as '_'), e.g. obc_inplace+OBC_YIELD_NS=0
#                                   beside obc_inplace compares a setting in one run
#   -k "maxrank span"  metrics, each to its own CSV (default both)
#   -b MIN -e MAX -f FACTOR   sizes (default 8, 256M, 2; K/M/G suffixes)
#   -t SECONDS      timed-loop budget per size (default 0.5)
#   -w WARMUP       warmup iterations per size (default 3)
#   -N MAXIT -m MINIT   timed iterations per size (default 200, 5)
#   -r ROOT         root of broadcast and reduce (default 0)
#   -M "MIN MAX"    memcpy_limit size range (default "64K 1G")
#   -o DIR          results dir (default bench/results/<UTC date-time>)
#   -D DIR          PNG + markdown dir (default docs/perf; "-" skips plotting)
#   -B DIR          obc build dir holding bin/obcrun and bin/obc-perf (default build)
#   -T SECONDS      timeout of one (implementation, NP, metric) run (default 1800)
#   -I              wait (up to 120 s) for idle CPUs before each run
#   -q, --quick     a check of the script, not a measurement: NP 2, 8 B .. 64 KiB x8,
#                   memcpy 64K..1M, 0.05 s per size (options given after it still win)
#   -U N, --busy N  start N CPU-spinning processes beside every run (the unkind case of
#                   issue #13: a data loader or compiler sharing the cores), stopped at
#                   exit; machine.txt and the plot titles say how many
#
# Quick check:  bench/run_bench.sh --quick -o /tmp/bench-quick -D /tmp/bench-quick
#               bench/run_bench.sh -O allreduce -n 2 -i "openmpi mpich gloo" -b 8 -e 1M \
#                   -f 16 -t 0.05 -o /tmp/bench-ar -D /tmp/bench-ar
# Env: OBC_ANCHORS_BUILD  where mpi_coll_bench is built (default /tmp/obc-anchors-build)
#      CC_OPENMPI CC_MPICH RUN_OPENMPI RUN_MPICH PY   tool overrides (as run_anchors.sh)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(git -C "$HERE" rev-parse --show-toplevel)
ANCHORS=$HERE/anchors
PY=${PY:-/usr/bin/python3}
CBUILD=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
CC_OPENMPI=${CC_OPENMPI:-mpicc.openmpi}
CC_MPICH=${CC_MPICH:-mpicc.mpich}
RUN_OPENMPI=${RUN_OPENMPI:-mpirun.openmpi}
RUN_MPICH=${RUN_MPICH:-mpirun.mpich}

OP=broadcast
NPS="2 4 8"
IMPLS="memcpy memcpy_nt latency openmpi mpich gloo obc"
METRICS="maxrank span"
MINB=8 MAXB=256M FACTOR=2 BUDGET=0.5 WARMUP=3 MAXIT=200 MINIT=5 ROOT=0
MEMCPY_RANGE="64K 1G"
RES="" DOCS=$TOP/docs/perf BUILD=$TOP/build RUN_TIMEOUT=1800 WAIT_IDLE=0 BUSY=0

ORIG_ARGS="$*"
# The long options become short ones for getopts: --quick -q, --busy -U.
argv=()
for a in "$@"; do
    [[ $a == --quick ]] && a=-q
    [[ $a == --busy ]] && a=-U
    argv+=("$a")
done
set -- "${argv[@]}"
while getopts "O:n:i:k:b:e:f:t:w:N:m:r:M:o:D:B:T:U:Iqh" opt; do
    case $opt in
    O) OP=$OPTARG ;;
    n) NPS=$OPTARG ;;
    i) IMPLS=$OPTARG ;;
    k) METRICS=$OPTARG ;;
    b) MINB=$OPTARG ;;
    e) MAXB=$OPTARG ;;
    f) FACTOR=$OPTARG ;;
    t) BUDGET=$OPTARG ;;
    w) WARMUP=$OPTARG ;;
    N) MAXIT=$OPTARG ;;
    m) MINIT=$OPTARG ;;
    r) ROOT=$OPTARG ;;
    M) MEMCPY_RANGE=$OPTARG ;;
    o) RES=$OPTARG ;;
    D) DOCS=$OPTARG ;;
    B) BUILD=$OPTARG ;;
    T) RUN_TIMEOUT=$OPTARG ;;
    I) WAIT_IDLE=1 ;;
    U) BUSY=$OPTARG ;;
    q) NPS=2 MINB=8 MAXB=64K FACTOR=8 BUDGET=0.05 WARMUP=2 MAXIT=50 MINIT=3
        MEMCPY_RANGE="64K 1M" ;;
    h | *) sed -n '/^set -euo/q; 2,$p' "$0"; exit 2 ;;
    esac
done

case $OP in
broadcast | allreduce | reduce | allgather | reduce_scatter | gather | scatter | alltoall | alltoallv | allgatherv | sendrecv) ;;
*) echo "run_bench.sh: unknown collective '$OP' (-O)" >&2; exit 2 ;;
esac
[[ $BUSY =~ ^[0-9]+$ ]] || { echo "run_bench.sh: --busy wants a count, not '$BUSY'" >&2; exit 2; }
((BUSY == 0 || WAIT_IDLE == 0)) || { echo "run_bench.sh: -I waits for idle CPUs, --busy keeps them busy: pick one" >&2; exit 2; }
IDLE=()
((WAIT_IDLE)) && IDLE=(-I)
RES=${RES:-$TOP/bench/results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$RES/logs"
LOG=$RES/logs/run_bench.log
log() { printf '# %s\n' "$*" | tee -a "$LOG" >&2; }

# An obc item: a base (obc, obc_inplace, ..., obc:ALGO), then any number of
# +VAR=VALUE environment settings, VAR an OBC_ variable.
valid_obc_item() {
    local -a parts
    IFS=+ read -r -a parts <<<"$1"
    [[ ${parts[0]} =~ ^(obc|obc_inplace|obc_async|obc_shared|obc_shared_inplace|obc:[a-z_]+)$ ]] || return 1
    local setting
    for setting in "${parts[@]:1}"; do
        [[ $setting =~ ^OBC_[A-Z0-9_]+=[^,[:space:]]+$ ]] || return 1
    done
}

# Split the selection into the three kinds of runs.
REFS=() ANCH=() OBCS=()
for impl in $IMPLS; do
    case $impl in
    memcpy | memcpy_nt | latency) REFS+=("$impl") ;;
    openmpi | openmpi_yield | mpich | gloo) ANCH+=("$impl") ;;
    obc | obc_inplace | obc_async | obc_shared | obc_shared_inplace | obc:?* | obc*+?*=*)
        valid_obc_item "$impl" || { echo "run_bench.sh: bad obc item '$impl' (BASE+VAR=VALUE...)" >&2; exit 2; }
        OBCS+=("$impl") ;;
    *) echo "run_bench.sh: unknown implementation '$impl'" >&2; exit 2 ;;
    esac
done
for metric in $METRICS; do
    [[ $metric == maxrank || $metric == span ]] || { echo "run_bench.sh: bad metric '$metric'" >&2; exit 2; }
done

OBCRUN=$BUILD/bin/obcrun
PERF=$BUILD/bin/obc-perf
if ((${#OBCS[@]})) && [[ ! -x $OBCRUN || ! -x $PERF ]]; then
    echo "run_bench.sh: $OBCRUN or $PERF missing: build first (make)" >&2
    exit 2
fi

# ---------------------------------------------------------------- machine info
machine_info() {
    local commit dirty
    commit=$(git -C "$TOP" rev-parse -q --verify HEAD || echo "(no commit)")
    dirty=$(git -C "$TOP" status --porcelain 2>/dev/null | wc -l)
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "git commit: $commit ($dirty uncommitted paths)"
    echo "cpus (nproc): $(nproc)"
    echo "cpu model: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "kernel: $(uname -srvm)"
    echo "memory: $(grep MemTotal /proc/meminfo | awk '{printf "%.1f GiB", $2 / 1048576}')"
    echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "glibc non-temporal threshold: $(/lib64/ld-linux-x86-64.so.2 --list-tunables 2>/dev/null |
        grep non_temporal_threshold | awk '{print $2}' || echo unknown)"
    echo "compiler: $(cc --version 2>/dev/null | head -n1)"
    echo "open mpi: $(mpirun.openmpi --version 2>/dev/null | head -n1 || echo none)"
    echo "mpich: $(mpirun.mpich --version 2>/dev/null | grep -m1 Version | xargs || echo none)"
    echo "collective: $OP (float32; reductions: sum)"
    echo "sizes: $MINB..$MAXB x$FACTOR, budget ${BUDGET}s/size, warmup $WARMUP, iters $MINIT..$MAXIT, root $ROOT"
    echo "nps: $NPS; implementations: $IMPLS; metrics: $METRICS"
    echo "busy processes beside the job: $BUSY"
    echo "command: $0 ${ORIG_ARGS:-}"
}

# ---------------------------------------------------------------- helpers
# Busy fraction of all CPUs over ~1 s, in percent, from /proc/stat.
cpu_busy_pct() {
    local a b i total=0
    read -r -a a < <(grep '^cpu ' /proc/stat)
    sleep 1
    read -r -a b < <(grep '^cpu ' /proc/stat)
    for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
    local idle=$(((b[4] + b[5]) - (a[4] + a[5])))
    ((total > 0)) || { echo 0; return; }
    echo $((100 * (total - idle) / total))
}

wait_idle() {
    ((WAIT_IDLE)) || return 0
    local waited=0 busy
    while busy=$(cpu_busy_pct) && ((busy >= 10 && waited < 120)); do
        waited=$((waited + 1))
    done
    log "cpu busy ${busy}% before run (waited ${waited}s)"
}

# Appends the data rows of a benchmark's output file ($1) to a CSV ($2).
keep_rows() {
    grep -v '^#' "$1" | grep -v '^impl,' | grep ',' >>"$2" || true
}

# One obc-perf run under obcrun: $1 NP, $2 variant, $3 metric, $4 CSV.
run_obc() {
    local np=$1 variant=$2 metric=$3 csv=$4
    local args=(-o "$OP" -b "$MINB" -e "$MAXB" -f "$FACTOR" -r "$ROOT" -w "$WARMUP"
        -n "$MAXIT" -m "$MINIT" -t "$BUDGET" --csv -v)
    local -a parts envs=()
    IFS=+ read -r -a parts <<<"$variant" # the base, then its settings
    local base=${parts[0]} label=${variant/:/_}
    args+=(--label "$label")
    [[ $metric == span ]] && args+=(-S)
    case $base in
    obc_inplace) args+=(-i 1) ;;
    obc_async) args+=(-a 1) ;;
    obc_shared) args+=(-M 1) ;;
    obc_shared_inplace) args+=(-M 1 -i 1) ;;
    obc:*) envs=("OBC_ALGO=$OP=${base#obc:}") ;;
    esac
    envs+=("${parts[@]:1}")
    local name=${label}_${metric}_np$np raw="$RES/logs/${label}_${metric}_np$np.out"
    local rc=0 t0=$SECONDS
    wait_idle
    log "run $name at $(date +%T)"
    timeout --kill-after=10 "$RUN_TIMEOUT" env "${envs[@]}" "$OBCRUN" -n "$np" "$PERF" "${args[@]}" \
        >"$raw" 2>>"$RES/logs/$name.err" || rc=$?
    log "end $name rc=$rc wall=$((SECONDS - t0))s loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
    ((rc == 0)) || log "warning: $name exited with $rc (124/137: timeout); its rows may be partial"
    keep_rows "$raw" "$csv"
}

# The anchors for one NP and metric, through run_anchors.sh.
run_anchor_set() {
    local np=$1 metric=$2 csv=$3
    local span=() raw="$RES/logs/anchors_${metric}_np$np.out" rc=0
    [[ $metric == span ]] && span=(-S)
    "$ANCHORS/run_anchors.sh" -n "$np" -i "${ANCH[*]}" -b "$MINB" -e "$MAXB" -f "$FACTOR" \
        -t "$BUDGET" -w "$WARMUP" -N "$MAXIT" -m "$MINIT" -r "$ROOT" -T "$RUN_TIMEOUT" \
        -l "$RES/logs/anchors_${metric}_np$np.log" "${span[@]}" "${IDLE[@]}" >"$raw" || rc=$?
    ((rc == 0)) || log "warning: run_anchors.sh (np=$np, $metric) exited with $rc"
    keep_rows "$raw" "$csv"
}

# The anchors of the collectives other than broadcast, built outside the repo.
build_coll_anchors() {
    mkdir -p "$CBUILD"
    local mpi cc
    for mpi in openmpi mpich; do
        cc=CC_${mpi^^}
        if command -v "${!cc}" >/dev/null; then
            "${!cc}" -O2 -std=c11 -o "$CBUILD/mpi_coll_bench.$mpi" "$HERE/anchors/mpi_coll_bench.c" ||
                log "warning: building mpi_coll_bench.$mpi failed"
            "${!cc}" -O2 -std=c11 -o "$CBUILD/mpi_pingpong.$mpi" "$HERE/anchors/mpi_pingpong.c" ||
                log "warning: building mpi_pingpong.$mpi failed"
        else
            log "warning: ${!cc} not found, the $mpi anchor is unavailable"
        fi
    done
}

# One anchor of OP for one NP and metric: $1 impl, $2 NP, $3 metric, $4 CSV.
run_coll_anchor() {
    local impl=$1 np=$2 metric=$3 csv=$4
    local args=(-o "$OP" -b "$MINB" -e "$MAXB" -f "$FACTOR" -r "$ROOT" -w "$WARMUP" -n "$MAXIT"
        -m "$MINIT" -t "$BUDGET" -v)
    [[ $metric == span ]] && args+=(-S)
    local bench=mpi_coll_bench
    if [[ $OP == sendrecv ]]; then
        if [[ $metric == span || $impl == gloo ]]; then
            log "warning: no $impl anchor of sendrecv for the $metric metric; skipped"
            return 0
        fi
        bench=mpi_pingpong
        args=(-b "$MINB" -e "$MAXB" -f "$FACTOR" -w "$WARMUP" -n "$MAXIT" -m "$MINIT" -t "$BUDGET")
    fi
    local cmd=()
    case $impl in
    openmpi | openmpi_yield)
        cmd=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$RUN_OPENMPI"
            --allow-run-as-root --oversubscribe)
        [[ $impl == openmpi_yield ]] && cmd+=(--mca mpi_yield_when_idle 1)
        cmd+=(-np "$np" "$CBUILD/$bench.openmpi" -i "$impl")
        ;;
    mpich) cmd=("$RUN_MPICH" -np "$np" "$CBUILD/$bench.mpich" -i mpich) ;;
    gloo)
        if [[ $OP == reduce_scatter || $OP == alltoallv || $OP == allgatherv ]]; then
            log "warning: the gloo anchor has no $OP; skipped"
            return 0
        fi
        cmd=("$PY" "$HERE/anchors/gloo_coll_bench.py" --np "$np" --impl gloo)
        ;;
    esac
    local name=${impl}_${metric}_np$np raw="$RES/logs/${impl}_${metric}_np$np.out"
    local rc=0 t0=$SECONDS
    wait_idle
    log "run $name at $(date +%T)"
    timeout --kill-after=10 "$RUN_TIMEOUT" "${cmd[@]}" "${args[@]}" >"$raw" \
        2>>"$RES/logs/$name.err" || rc=$?
    log "end $name rc=$rc wall=$((SECONDS - t0))s loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
    ((rc == 0)) || log "warning: $name exited with $rc (124/137: timeout); its rows may be partial"
    keep_rows "$raw" "$csv"
}

# The busy neighbours: plain shell loops (each wants a whole core, as `yes >/dev/null`
# does), started before the machine info and killed however the script ends.
BUSY_PIDS=()
stop_busy() { ((${#BUSY_PIDS[@]})) && kill "${BUSY_PIDS[@]}" 2>/dev/null; BUSY_PIDS=(); }
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM
for ((b = 0; b < BUSY; b++)); do
    sh -c 'while :; do :; done' &
    BUSY_PIDS+=($!)
done

HEADER="impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong"
: >"$LOG"
((BUSY == 0)) || log "started $BUSY busy processes: ${BUSY_PIDS[*]}"
machine_info >"$RES/machine.txt"
log "results in $RES"

LIMITS=$RES/limits.csv
if ((${#REFS[@]})); then
    echo "$HEADER" >"$LIMITS"
    "$ANCHORS/run_anchors.sh" -i "${REFS[*]}" -M "$MEMCPY_RANGE" -T "$RUN_TIMEOUT" \
        -l "$RES/logs/limits.log" "${IDLE[@]}" >"$RES/logs/limits.out" ||
        log "warning: reference runs failed"
    keep_rows "$RES/logs/limits.out" "$LIMITS"
fi

[[ $OP == broadcast ]] || ((${#ANCH[@]} == 0)) || build_coll_anchors
for metric in $METRICS; do
    csv=$RES/${OP}_$metric.csv
    echo "$HEADER" >"$csv"
    for np in $NPS; do
        if [[ $OP == broadcast ]]; then
            ((${#ANCH[@]} == 0)) || run_anchor_set "$np" "$metric" "$csv"
        else
            for impl in "${ANCH[@]}"; do
                run_coll_anchor "$impl" "$np" "$metric" "$csv"
            done
        fi
        for variant in "${OBCS[@]}"; do
            run_obc "$np" "$variant" "$metric" "$csv"
        done
    done
done
lib=$(cat "$RES"/logs/obc*.out 2>/dev/null | grep -o -m1 'library=obc [^ ]*' || true)
echo "obc library: ${lib#library=obc }" >>"$RES/machine.txt"

# ---------------------------------------------------------------- plots and tables
[[ $DOCS == - ]] && exit 0
mkdir -p "$DOCS"
# plot.py draws broadcast; plot_coll.py adapts it (busbw factor, memcpy bound, titles).
PLOT=("$ANCHORS/plot.py")
[[ $OP == broadcast ]] || PLOT=("$HERE/plot_coll.py" --op "$OP" --anchors "$ANCHORS")
start="the earliest start"
[[ $OP == broadcast || $OP == reduce || $OP == gather || $OP == scatter ]] &&
    start="the root's start"
case $OP in
allreduce) bus="busbw = algbw x 2(n-1)/n" ;;
allgather | reduce_scatter) bus="bytes = the whole gathered buffer, busbw = algbw x (n-1)/n" ;;
gather | scatter) bus="bytes = the root's whole buffer, busbw = algbw x (n-1)/n" ;;
alltoall) bus="bytes = one rank's whole send buffer (bytes/NP to each peer), busbw = algbw x (n-1)/n" ;;
alltoallv) bus="bytes = one rank's nominal send buffer (blocks of 1-3 half-blocks of bytes/NP), busbw = algbw x (n-1)/n" ;;
allgatherv) bus="bytes = the nominal whole gathered buffer (rank r's block 1-3 half-blocks of bytes/NP), busbw = algbw x (n-1)/n" ;;
*) bus="busbw = algbw" ;;
esac
Title=${OP^}
busy_note=""
((BUSY == 0)) || busy_note=", $BUSY busy processes beside"
for metric in $METRICS; do
    csv=$RES/${OP}_$metric.csv
    inputs=("$csv")
    [[ -s $LIMITS ]] && inputs+=("$LIMITS")
    what="max over ranks of each rank's own time" axis="max-over-ranks time"
    [[ $metric == span ]] && what="span (latest end over ranks - $start)" axis="span"
    "$PY" "${PLOT[@]}" "${inputs[@]}" --png "$DOCS/${OP}_$metric.png" \
        --md "$RES/${OP}_${metric}_tables.md" --metric "$axis" \
        --title "$OP, usec = median of the $what ($(nproc) cpus$busy_note)"
    {
        echo "# $Title: obc and the anchors, $metric"
        echo
        echo "usec = median over iterations of the $what. Produced by bench/run_bench.sh."
        [[ $OP == broadcast ]] || echo "float32, reductions with SUM; sizes as nccl-tests ($bus)."
        echo "CSV and machine info: ${RES#"$TOP"/}."
        echo
        echo '```'
        cat "$RES/machine.txt"
        echo '```'
        echo
        echo "![$OP $metric](${OP}_$metric.png)"
        echo
        cat "$RES/${OP}_${metric}_tables.md"
    } >"$DOCS/${OP}_$metric.md"
    log "wrote $DOCS/${OP}_$metric.png and .md"
done
