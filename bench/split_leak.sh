#!/bin/sh
# SPDX-License-Identifier: MIT
# The leak measurement of issue #14 (docs/subcomm.md): CYCLES (default 1000)
# split/destroy cycles at 4 ranks on one host, at 4 ranks on two fake hosts
# (children cross TCP) and at 8 ranks, each rank printing its fd count,
# threads, this job's /dev/shm entries, RSS and address space before and
# after, and the seconds per cycle. Needs `make` first. Run it on a quiet
# machine for the per-cycle times; the counts do not depend on load.
set -eu
cd "$(dirname "$0")/.."
cycles=${1:-1000}
run() {
    echo "== $*"
    env "$@" build/bin/obcrun -n "$NP" build/tests/bin/split_leak "$cycles" | grep '^split_leak:' | sort
}
NP=4 run OBC_HOST_ID=
NP=4 run OBC_HOST_ID=rank/2
NP=8 run OBC_HOST_ID=
