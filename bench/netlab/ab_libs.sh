#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/netlab/ab_libs.sh - libobc builds against each other on one netlab lab, one rank per
# host, in alternating rounds, with Open MPI (btl tcp) in every round: the A/B that
# bench/ab_libs.sh is within a host. Each library is a folder holding libobc.so.0
# (bench/old_lib.sh prints one for a commit; build/lib is this build); obc-perf of this build
# runs on it through LD_LIBRARY_PATH.
#
# Usage: bash bench/netlab/ab_libs.sh [-H HOSTS] [-r RATE] [-R ROUNDS] [-B BUSY]
#            -L "NAME=DIR ..." -- OBC_PERF_OPTIONS
#   -H hosts (4), -r the links' rate (1gbit), -R rounds (3), -B processes spinning on the
#   machine beside the lab (0: the hosts are namespaces of this machine, so they share its
#   CPUs with them). The Open MPI anchor follows obc-perf's -o: broadcast ->
#   mpi_bcast_bench (in place), sendrecv -> mpi_pingpong, the rest -> mpi_coll_bench; it gets
#   obc-perf's -b -e -f -t -c and -S options and nothing else.
# Prints "rN NAME size,usec ..." per run, then the median of each size per name (ab_medians.py).
# Needs root (else exit 77).
set -u
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
HOSTS=4 RATE=1gbit ROUNDS=3 BUSY=0 LIBS=""
while getopts "H:r:R:B:L:" opt; do
    case $opt in
    H) HOSTS=$OPTARG ;;
    r) RATE=$OPTARG ;;
    R) ROUNDS=$OPTARG ;;
    B) BUSY=$OPTARG ;;
    L) LIBS=$OPTARG ;;
    *) sed -n '3,17p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$LIBS" ] || { sed -n '3,17p' "$0" >&2; exit 2; }
PERF=("$@")

# The anchor's program and the options it shares with obc-perf.
op=broadcast mpi_opts=() span=()
for ((i = 0; i < ${#PERF[@]}; i++)); do
    case ${PERF[i]} in
    -o) op=${PERF[i + 1]} ;;
    -b | -e | -f | -t | -c) mpi_opts+=("${PERF[i]}" "${PERF[i + 1]}") ;;
    -S | --span) span=(-S) ;;
    esac
done
case $op in
broadcast) anchor=mpi_bcast_bench mpi_opts+=("${span[@]}") ;;
sendrecv) anchor=mpi_pingpong ;; # a round trip: no span to take
*) anchor=mpi_coll_bench mpi_opts+=(-o "$op" "${span[@]}") ;;
esac

# shellcheck disable=SC1091 # (run shellcheck -x from the repository root to follow it)
. "$SRC/tests/netlab/nljob.sh"
nlj_init # root + namespaces (else exit 77); removes every lab on exit
BUILD=$SRC/build
make -C "$BUILD" -j2 obc-perf obcrun >/dev/null || exit 1
MPI_BIN=$BUILD/bench/$anchor
mkdir -p "$BUILD/bench"
mpicc.openmpi -O2 -o "$MPI_BIN" "$SRC/bench/anchors/$anchor.c" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
hosts=$(for ((i = 0; i < HOSTS; i++)); do printf 'h%d,' "$i"; done)

busy=()
for ((b = 0; b < BUSY; b++)); do
    yes >/dev/null &
    busy+=($!)
done
nlj_lab_up ab "$HOSTS" --rate "$RATE" >/dev/null
lines=$(
    echo "# $(date -u +%FT%TZ) $HOSTS hosts at $RATE, $BUSY busy, obc-perf ${PERF[*]}, anchor $anchor ${mpi_opts[*]}"
    for ((r = 1; r <= ROUNDS; r++)); do
        for lib in $LIBS; do
            NLJ_RANK_ENV="LD_LIBRARY_PATH=${lib#*=}"
            nlj_launch "$HOSTS" 1 "$BUILD/bin/obc-perf" --csv "${PERF[@]}" >/dev/null
            nlj_wait 600 >/dev/null
            echo "r$r ${lib%%=*} $(grep '^obc' "$NLJ_DIR/rank0.log" | cut -d, -f3,4 | tr '\n' ' ')"
        done
        echo "r$r ompi $("$NETLAB" exec 0 timeout -k 10 600 mpirun.openmpi -np "$HOSTS" \
            --host "${hosts%,}" --mca plm_rsh_agent "$SRC/tools/netlab/netlab-rsh" --mca pml ob1 \
            --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
            "$MPI_BIN" "${mpi_opts[@]}" </dev/null 2>/dev/null | grep '^mpi,' | cut -d, -f3,4 | tr '\n' ' ')"
    done
)
nlj_lab_down
[ ${#busy[@]} -eq 0 ] || kill "${busy[@]}"
echo "$lines"
echo "$lines" | /usr/bin/python3 "$SRC/bench/ab_medians.py"
