#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/netlab/alltoall.sh - alltoall across emulated hosts (issue #14): obc-perf -o alltoall
# against Open MPI's MPI_Alltoall (bench/anchors/mpi_coll_bench.c over btl tcp) on one netlab
# lab, one rank per host, and the bound the links allow; beside them, what TCP itself reaches
# there (raw_alltoall.c: plain sockets, one thread, no copies of its own, the same meeting
# between iterations).
#
# The bound: in an alltoall of B bytes per rank (B / H to each of H hosts), every host sends
# (H - 1) / H x B over its link and receives as much; links are full duplex and shaped per
# direction, so the shortest possible time is (H - 1) / H x B / rate. The `of_link` column
# of alltoall.csv is that time over the measured one. The bound ignores the headers (at MTU
# 1500, TCP carries 1448 bytes of each 1514-byte frame: 95.6%) and TCP's own dynamics, so the
# raw row is the practical ceiling of this lab.
#
# obc runs twice: with obc-perf's checks (every byte filled and validated, untimed, the row
# `obc`) and without them (`obc_nocheck`). The lab's hosts share this machine's CPUs, so a
# rank that has finished its call and checks its buffers takes CPU from the other hosts'
# ranks still in theirs, which on real hosts it would not; raw TCP checks two bytes per
# block. The Open MPI anchor runs with its checks, as `obc` does.
#
# Usage: bash bench/netlab/alltoall.sh [quick] [OUTDIR]
#   full (default): 4 hosts at 1gbit, 4 MiB .. 256 MiB per rank (x4), OUTDIR
#                   bench/results/<date>-netlab-alltoall; about 5 minutes.
#   quick:          4 .. 16 MiB, fewer iterations (a check of the script); OUTDIR
#                   /tmp/obc-netlab-alltoall-quick.
# Writes OUTDIR/alltoall.csv (impl,hosts,rate_mbit,bytes,usec,bound_usec,of_link,of_raw), the anchor
# CSV rows (raw.csv) and every program's output (logs/). Needs root (else exit 77).
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
    OUT=${1:-/tmp/obc-netlab-alltoall-quick} MIN=4M MAX=16M ITERS=(-w 1 -m 3 -n 5 -t 0.2)
    RAW_ITERS=5
else
    OUT=${1:-$SRC/bench/results/$(date -u +%F)-netlab-alltoall} MIN=4M MAX=256M
    ITERS=(-w 2 -m 10 -n 20 -t 2)
    RAW_ITERS=20
fi
HOSTS=4 RATE=1gbit RATE_MBIT=1000
mkdir -p "$OUT/logs" || exit 1
OUT=$(cd "$OUT" && pwd)

# shellcheck disable=SC1091 # (run shellcheck -x from the repository root to follow it)
. "$SRC/tests/netlab/nljob.sh"
nlj_init # root + namespaces (else exit 77); removes every lab on exit

BUILD=$SRC/build
MPI_BIN=$BUILD/bench/mpi_coll_bench
make -C "$BUILD" -j2 obc-perf obcrun >"$OUT/logs/build.log" 2>&1 || {
    tail -20 "$OUT/logs/build.log"
    exit 1
}
HAVE_MPI=0
mkdir -p "$BUILD/bench"
if command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -O2 -o "$MPI_BIN" "$SRC/bench/anchors/mpi_coll_bench.c" && HAVE_MPI=1
fi
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git -C "$SRC" rev-parse HEAD 2>/dev/null)"
    echo "lab: $HOSTS hosts, --rate $RATE, one rank per host"
    echo "cpus: $(nproc), open mpi: $(mpirun.openmpi --version 2>/dev/null | head -1)"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

nlj_lab_up a2a "$HOSTS" --rate "$RATE"
: >"$OUT/raw.csv"

echo "== obc"
nlj_launch "$HOSTS" 1 "$BUILD/bin/obc-perf" -o alltoall --csv -v -b "$MIN" -e "$MAX" -f 4 "${ITERS[@]}"
nlj_wait 1200
OBC_RC=$?
cp "$NLJ_DIR/rank0.log" "$OUT/logs/obc.log"
grep -E '^obc,' "$OUT/logs/obc.log" | tee -a "$OUT/raw.csv"

echo "== obc without checks"
nlj_launch "$HOSTS" 1 "$BUILD/bin/obc-perf" -o alltoall --csv -v -b "$MIN" -e "$MAX" -f 4 "${ITERS[@]}" \
    -c 0 --label obc_nocheck
nlj_wait 1200
NOCHECK_RC=$?
cp "$NLJ_DIR/rank0.log" "$OUT/logs/obc_nocheck.log"
grep -E '^obc_nocheck,' "$OUT/logs/obc_nocheck.log" | tee -a "$OUT/raw.csv"

echo "== raw tcp"
RAW_BIN=$BUILD/bench/raw_alltoall
RAW_RC=0
cc -O2 -o "$RAW_BIN" "$SRC/bench/netlab/raw_alltoall.c" || RAW_RC=1
ips=()
for ((i = 0; i < HOSTS; i++)); do ips+=("$("$NETLAB" ip "$i")"); done
: >"$OUT/logs/raw.log"
for ((bytes = $(numfmt --from=iec "$MIN"); RAW_RC == 0 && bytes <= $(numfmt --from=iec "$MAX"); bytes *= 4)); do
    pids=() port=$((31000 + RANDOM % 2000)) # every host listens on it, each in its namespace
    for ((h = HOSTS - 1; h >= 0; h--)); do
        timeout -k 5 600 "$NETLAB" exec "$h" "$RAW_BIN" "$h" "$HOSTS" $((bytes / HOSTS)) "$RAW_ITERS" \
            "$port" "${ips[@]}" >>"$OUT/logs/raw.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || RAW_RC=1; done
done
grep -E '^raw,' "$OUT/logs/raw.log" | tee -a "$OUT/raw.csv"

MPI_RC=127
if [ "$HAVE_MPI" = 1 ]; then
    echo "== openmpi"
    hosts=$(for ((i = 0; i < HOSTS; i++)); do printf 'h%d,' "$i"; done)
    timeout -k 10 1200 "$NETLAB" exec 0 mpirun.openmpi --allow-run-as-root -np "$HOSTS" \
        --host "${hosts%,}" --mca plm_rsh_agent "$SRC/tools/netlab/netlab-rsh" --mca pml ob1 \
        --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
        "$MPI_BIN" -i openmpi -o alltoall -b "$MIN" -e "$MAX" -f 4 "${ITERS[@]}" -v \
        >"$OUT/logs/openmpi.log" 2>&1 </dev/null
    MPI_RC=$?
    grep -E '^openmpi,' "$OUT/logs/openmpi.log" | tee -a "$OUT/raw.csv"
fi
nlj_lab_down

echo "impl,hosts,rate_mbit,bytes,usec,bound_usec,of_link,of_raw" >"$OUT/alltoall.csv"
# of_raw: raw TCP's time over this one at the same size (1: as fast as plain sockets)
awk -F, -v OFS=, -v h="$HOSTS" -v mbit="$RATE_MBIT" '
NR == FNR { if ($1 == "raw") raw[$3] = $4; next }
{
    bound = ($3 * (h - 1) / h) * 8 / (mbit * 1e6) * 1e6
    of_raw = ($3 in raw) ? sprintf("%.3f", raw[$3] / $4) : ""
    printf "%s,%d,%d,%s,%s,%.0f,%.3f,%s\n", $1, h, mbit, $3, $4, bound, bound / $4, of_raw
}' "$OUT/raw.csv" "$OUT/raw.csv" >>"$OUT/alltoall.csv"
column -s, -t "$OUT/alltoall.csv"
echo "obc exit $OBC_RC (without checks $NOCHECK_RC), raw tcp exit $RAW_RC, openmpi exit $MPI_RC"
[ "$OBC_RC" = 0 ] && [ "$NOCHECK_RC" = 0 ]
