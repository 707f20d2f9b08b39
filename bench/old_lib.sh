#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/old_lib.sh COMMIT - build libobc of an older commit (a git worktree in
# /tmp/obc-old-COMMIT, the library target only; kept for the next call) and
# print the folder that holds it, for LD_LIBRARY_PATH: a program linked
# against this build then runs on the old library (LD_LIBRARY_PATH beats the
# RUNPATH). Used by ab_libs.sh and the results folders' A/B scripts.
set -eu
COMMIT=${1:?usage: $0 COMMIT}
TOP=$(cd "$(dirname "$0")/.." && pwd)
DIR=/tmp/obc-old-$COMMIT
if [ ! -f "$DIR/build/lib/libobc.so" ]; then
    [ -d "$DIR" ] || git -C "$TOP" worktree add -f "$DIR" "$COMMIT" >/dev/null 2>&1
    cmake -S "$DIR" -B "$DIR/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$DIR/build" -j2 --target obc >/dev/null
fi
echo "$DIR/build/lib"
