#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/netlab/alltoall.sh - alltoall across emulated hosts (issue #14): obc-perf -o alltoall
# against Open MPI's MPI_Alltoall (bench/anchors/mpi_coll_bench.c over btl tcp) on one netlab
# lab, one rank per host, and the bound the links allow.
#
# The bound: in an alltoall of B bytes per rank (B / H to each of H hosts), every host sends
# (H - 1) / H x B over its link and receives as much; links are full duplex and shaped per
# direction, so the shortest possible time is (H - 1) / H x B / rate. The `of_link` column
# of alltoall.csv is that time over the measured one.
#
# Usage: bash bench/netlab/alltoall.sh [quick] [OUTDIR]
#   full (default): 4 hosts at 1gbit, 4 MiB .. 256 MiB per rank (x4), OUTDIR
#                   bench/results/<date>-netlab-alltoall; about 6 minutes.
#   quick:          4 .. 16 MiB, fewer iterations (a check of the script); OUTDIR
#                   /tmp/obc-netlab-alltoall-quick.
# Writes OUTDIR/alltoall.csv (impl,hosts,rate_mbit,bytes,usec,bound_usec,of_link), the anchor
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
else
    OUT=${1:-$SRC/bench/results/$(date -u +%F)-netlab-alltoall} MIN=4M MAX=256M
    ITERS=(-w 1 -m 5 -n 10 -t 1)
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

echo "impl,hosts,rate_mbit,bytes,usec,bound_usec,of_link" >"$OUT/alltoall.csv"
awk -F, -v OFS=, -v h="$HOSTS" -v mbit="$RATE_MBIT" '{
    bound = ($3 * (h - 1) / h) * 8 / (mbit * 1e6) * 1e6
    printf "%s,%d,%d,%s,%s,%.0f,%.3f\n", $1, h, mbit, $3, $4, bound, bound / $4
}' "$OUT/raw.csv" >>"$OUT/alltoall.csv"
column -s, -t "$OUT/alltoall.csv"
echo "obc exit $OBC_RC, openmpi exit $MPI_RC"
[ "$OBC_RC" = 0 ]
