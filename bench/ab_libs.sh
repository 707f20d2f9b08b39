#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/ab_libs.sh - the library of an older commit against this build's, with Open MPI beside
# them: for each collective, obc-perf under the old library, the new, the new again and the old
# again (so the machine's drift within a round hits both alike), then mpi_coll_bench under Open
# MPI. Rounds idle, then rounds beside one busy process (`yes >/dev/null`). The old library is
# built from git in /tmp/obc-old-COMMIT (a worktree) unless it is there already.
# Prints "MODE rN OP IMPL size,usec size,usec ..." lines (max over ranks, µs), then per mode,
# collective and size the median of each implementation's runs (min-max in brackets).
# Broadcast's anchor is mpi_bcast_bench (MPI_Bcast, in place): compare it with `-x "-i 1"`.
# Usage: bench/ab_libs.sh -O COMMIT -o "alltoall" [-n NP] [-b 4K] [-e 1M] [-t 1] [-R 3] [-B 2]
#        [-x "more obc-perf options"] [-A OFF[,STEP]] [-T]
# -A places every program's buffers OFF + rank*STEP bytes past a page boundary (obc-perf's -A).
# -T: every rank its own host, so that both move data over loopback TCP: obc with
# OBC_HOST_ID=rank/1, Open MPI with btl tcp,self.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
OLD="" OPS="" NP=2 MINB=4K MAXB=1M BUDGET=1 ROUNDS=3 BUSY_ROUNDS=2 EXTRA="" OFFSET=0
obc_env=() mpi_net=()
while getopts "O:o:n:b:e:t:R:B:x:A:T" opt; do
    case $opt in
    O) OLD=$OPTARG ;;
    o) OPS=$OPTARG ;;
    n) NP=$OPTARG ;;
    b) MINB=$OPTARG ;;
    e) MAXB=$OPTARG ;;
    t) BUDGET=$OPTARG ;;
    R) ROUNDS=$OPTARG ;;
    B) BUSY_ROUNDS=$OPTARG ;;
    x) EXTRA=$OPTARG ;;
    A) OFFSET=$OPTARG ;;
    T) obc_env=(OBC_HOST_ID=rank/1) mpi_net=(--mca btl "tcp,self") ;;
    *) sed -n '3,16p' "$0" >&2; exit 2 ;;
    esac
done
if [ -z "$OLD" ] || [ -z "$OPS" ]; then
    sed -n '3,16p' "$0" >&2
    exit 2
fi
OLD_LIB=$("$HERE/old_lib.sh" "$OLD") || exit 1
BUILD=$TOP/build
ANCH=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
oversub=()
[ "$NP" -gt "$(nproc)" ] && oversub=(--oversubscribe)
sizes=(-b "$MINB" -e "$MAXB" -f 2 -t "$BUDGET" -A "$OFFSET")
# obcrun's environment reaches the ranks; LD_LIBRARY_PATH beats obc-perf's RUNPATH
# shellcheck disable=SC2086 # EXTRA is a list of options
obc() { env "${obc_env[@]}" "$@" "$BUILD/bin/obcrun" -n "$NP" "$BUILD/bin/obc-perf" -o "$op" "${sizes[@]}" $EXTRA --csv | cut -d, -f3,4 | tr '\n' ' '; }
ompi() {
    local bench=("$ANCH/mpi_coll_bench.openmpi" -o "$op")
    [ "$op" = broadcast ] && bench=("$ANCH/mpi_bcast_bench.openmpi")
    mpirun.openmpi "${oversub[@]}" "${mpi_net[@]}" -n "$NP" "${bench[@]}" "${sizes[@]}" 2>/dev/null | grep -v '^#' | cut -d, -f3,4 | tr '\n' ' '
}
round() {
    for op in $OPS; do
        echo "$1 $op old  $(obc LD_LIBRARY_PATH="$OLD_LIB")"
        echo "$1 $op new  $(obc OBC_AB=new)"
        echo "$1 $op new  $(obc OBC_AB=new)"
        echo "$1 $op old  $(obc LD_LIBRARY_PATH="$OLD_LIB")"
        echo "$1 $op ompi $(ompi)"
    done
}
runs() {
    echo "# $(date -u +%FT%TZ) np=$NP old=$OLD new=$(git -C "$TOP" rev-parse --short HEAD) obc-perf options: ${EXTRA:-none} -A $OFFSET ${obc_env[*]} ${mpi_net[*]} (size,usec ...)"
    for ((r = 1; r <= ROUNDS; r++)); do round "idle r$r"; done
    if [ "$BUSY_ROUNDS" -gt 0 ]; then
        yes >/dev/null &
        busy=$!
        for ((r = 1; r <= BUSY_ROUNDS; r++)); do round "busy r$r"; done
        kill "$busy"
    fi
}
lines=$(runs)
echo "$lines"
echo "$lines" | /usr/bin/python3 "$HERE/ab_medians.py"
