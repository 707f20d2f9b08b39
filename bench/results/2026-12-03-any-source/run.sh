#!/bin/bash
# The any-source receive latency before and after the doorbell (02cadc9): the library of OLD
# (default 211178f, built by bench/old_lib.sh), this build's, and Open MPI's MPI_ANY_SOURCE
# (any_latency_mpi.c) in the same rounds, at 3 and 4 ranks on one host (more ranks than this
# VM's 2 cores) and, obc only, 4 ranks on two fake hosts (TCP); two rounds idle, then two
# beside one busy process (`yes >/dev/null`).
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
OLD=${1:-211178f}
OLD_LIB=$("$TOP/bench/old_lib.sh" "$OLD") || exit 1
BIN=/tmp/obc-any-latency
cc -O2 -std=c11 -D_GNU_SOURCE -I"$TOP/include" "$HERE/any_latency.c" -L"$TOP/build/lib" \
    -Wl,-rpath,"$TOP/build/lib" -lobc -o "$BIN" || exit 1
mpicc.openmpi -O2 -std=c11 -D_GNU_SOURCE "$HERE/any_latency_mpi.c" -o "$BIN-mpi" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
round() {
    local label=$1
    for c in "3" "4" "4 OBC_HOST_ID=rank/2"; do
        # shellcheck disable=SC2086 # NP, then the variables for the ranks: words on purpose
        set -- $c
        np=$1
        shift
        echo "$label old np $c: $(env LD_LIBRARY_PATH="$OLD_LIB" "$@" "$TOP/build/bin/obcrun" -n "$np" "$BIN")"
        echo "$label new np $c: $(env "$@" "$TOP/build/bin/obcrun" -n "$np" "$BIN")"
        if [ $# -eq 0 ]; then
            echo "$label ompi np $c: $(mpirun.openmpi --oversubscribe -n "$np" "$BIN-mpi")"
        fi
    done
}
{
    echo "# $(date -u +%FT%TZ) old=$OLD new=$(git -C "$TOP" rev-parse --short HEAD)"
    for r in 1 2; do round "idle r$r"; done
    yes >/dev/null &
    busy=$!
    for r in 1 2; do round "busy r$r"; done
    kill "$busy"
} | tee "$HERE/run.txt"
