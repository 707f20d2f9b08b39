#!/bin/bash
# gather and scatter at 2 ranks, 8 KiB - 64 KiB gathered: the library before the single-copy limit
# depended on crowding (OLD, built here from git), the new one, and Open MPI's MPI_Gather and
# MPI_Scatter,
# in the order old new new old Open MPI; three rounds idle, two beside one busy process
# (`yes`). Max over ranks, µs.
# Usage: bash ab.sh [OLD_COMMIT]   (default 4e0e784); writes ab.txt beside itself.
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
OLD=${1:-4e0e784}
OLD_DIR=/tmp/obc-old-$OLD
if [ ! -f "$OLD_DIR/build/lib/libobc.so" ]; then
    git -C "$TOP" worktree add -f "$OLD_DIR" "$OLD" >/dev/null 2>&1 || exit 1
    cmake -S "$OLD_DIR" -B "$OLD_DIR/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
        cmake --build "$OLD_DIR/build" -j2 --target obc >/dev/null || exit 1
fi
BUILD=$TOP/build
ANCH=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sizes=(-b 8K -e 64K -f 2 -t 1)
obc() { env "$@" "$BUILD/bin/obcrun" -n 2 "$BUILD/bin/obc-perf" -o "$OP" "${sizes[@]}" --csv | cut -d, -f3,4 | tr '\n' ' '; }
ompi() { mpirun.openmpi -n 2 "$ANCH/mpi_coll_bench.openmpi" -o "$OP" "${sizes[@]}" 2>/dev/null | grep -v '^#' | cut -d, -f3,4 | tr '\n' ' '; }
round() {
    for OP in gather scatter; do # old new new old: the order's drift hits both alike
        echo "$1 $OP old  $(obc LD_LIBRARY_PATH="$OLD_DIR/build/lib")"
        echo "$1 $OP new  $(obc X=1)"
        echo "$1 $OP new  $(obc X=1)"
        echo "$1 $OP old  $(obc LD_LIBRARY_PATH="$OLD_DIR/build/lib")"
        echo "$1 $OP ompi $(ompi)"
    done
}
{
    echo "# $(date -u +%FT%TZ) old=$OLD new=$(git -C "$TOP" rev-parse --short HEAD) (size,usec ...)"
    for r in 1 2 3; do round "idle r$r"; done
    yes >/dev/null &
    busy=$!
    for r in 1 2; do round "busy r$r"; done
    kill "$busy"
} | tee "$HERE/ab.txt"
