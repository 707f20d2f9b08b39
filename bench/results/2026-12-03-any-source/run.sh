#!/bin/bash
# The any-source receive latency before and after the doorbell (34e5cd5): the library of OLD
# (default 211178f, built in a /tmp worktree as bench/ab_libs.sh does) and this build's,
# alternating, twice, at 3 and 4 ranks on one host and 4 ranks on two fake hosts (TCP).
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
OLD=${1:-211178f}
OLD_DIR=/tmp/obc-old-$OLD
if [ ! -f "$OLD_DIR/build/lib/libobc.so" ]; then
    git -C "$TOP" worktree add -f "$OLD_DIR" "$OLD" >/dev/null 2>&1 || exit 1
    cmake -S "$OLD_DIR" -B "$OLD_DIR/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
        cmake --build "$OLD_DIR/build" -j2 --target obc >/dev/null || exit 1
fi
BIN=/tmp/obc-any-latency
cc -O2 -std=c11 -D_GNU_SOURCE -I"$TOP/include" "$HERE/any_latency.c" -L"$TOP/build/lib" \
    -Wl,-rpath,"$TOP/build/lib" -lobc -o "$BIN" || exit 1
{
    echo "# $(date -u +%FT%TZ) old=$OLD new=$(git -C "$TOP" rev-parse --short HEAD)"
    for r in 1 2; do
        for c in "3" "4" "4 OBC_HOST_ID=rank/2"; do
            # shellcheck disable=SC2086 # NP, then the variables for the ranks: words on purpose
            set -- $c
            np=$1
            shift
            echo "r$r old np $c: $(env LD_LIBRARY_PATH="$OLD_DIR/build/lib" "$@" "$TOP/build/bin/obcrun" -n "$np" "$BIN")"
            echo "r$r new np $c: $(env "$@" "$TOP/build/bin/obcrun" -n "$np" "$BIN")"
        done
    done
} | tee "$HERE/run.txt"
