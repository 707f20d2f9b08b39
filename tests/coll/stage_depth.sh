#!/bin/sh
# SPDX-License-Identifier: MIT
# stage_depth.sh - the arena broadcast's staging rings (setup_arena.c): 8
# slots, and a second ring of 64 for larger messages when a host has more
# ranks than CPUs; OBC_PIPELINE_DEPTH sets the first and turns the second
# off (out of range: a clear error). The ranks are pinned with taskset, so
# the answer does not depend on this machine's CPU count. Each run
# broadcasts 256 KiB-4 MiB validated (obc-perf -c 1): 256 KiB and 1 MiB
# through the first ring, 4 MiB (larger than 8 x 256 KiB) through the
# second where there is one. It checks the geometry, the data, and the
# ring each size took, as the algorithm line at OBC_DEBUG=INFO names it.
# Usage: tests/coll/stage_depth.sh build/bin/obcrun build/bin/obc-perf
set -u
OBCRUN=${1:?usage: $0 path/to/obcrun path/to/obc-perf}
PERF=${2:?usage: $0 path/to/obcrun path/to/obc-perf}
MULT=${OBC_TEST_TIMEOUT_MULTIPLIER:-1}
LOG=${TMPDIR:-/tmp}/obc_stage_depth.$$
trap 'rm -f "$LOG"' EXIT
nfail=0

# rings NP CPUS [VAR=VALUE ...]: the staging rings the ranks logged, one
# line per distinct geometry ("8 x 262144, deep 64"; deep 0: none), or
# nothing if the run failed.
rings() {
    np=$1 cpus=$2
    shift 2
    # shellcheck disable=SC2068 # the variables are words on purpose
    env OBC_DEBUG=INFO OBC_DEBUG_SUBSYS=init "$@" taskset -c "$cpus" "$OBCRUN" -n "$np" \
        --timeout $((120 * MULT)) "$PERF" -b 256K -e 4M -f 4 -c 1 -w 2 -m 10 -n 10 -t 0.01 \
        >/dev/null 2>"$LOG" || return 1
    grep -o "staging ring [0-9]* x [0-9]* bytes, deep ring [0-9]*" "$LOG" |
        sed 's/staging ring //; s/ bytes, deep ring/, deep/' | sort -u
}

# ring_for BYTES [VAR=VALUE ...]: the ring 3 ranks on one CPU broadcast
# BYTES through, as every rank's algorithm lines name it ("deep" or
# "staging"; two words if the ranks or calls differ), or nothing if the
# run failed.
ring_for() {
    bytes=$1
    shift
    # shellcheck disable=SC2068 # the variables are words on purpose
    env OBC_DEBUG=INFO OBC_DEBUG_SUBSYS=coll "$@" taskset -c 0 "$OBCRUN" -n 3 \
        --timeout $((120 * MULT)) "$PERF" -b "$bytes" -e "$bytes" -c 1 -w 1 -m 2 -n 2 -t 0.01 \
        >/dev/null 2>"$LOG" || return 1
    grep "broadcast #[0-9]*: $bytes bytes: algorithm arena" "$LOG" |
        sed 's/.*deep ring.*/deep/; t; s/.*/staging/' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# expect WHAT WANT GOT
expect() {
    if [ "$3" = "$2" ]; then
        echo "ok: $1: $3"
    else
        echo "FAIL: $1: staging ring '${3:-(none: the run failed)}', want '$2'"
        sed 's/^/    /' "$LOG" | tail -20
        nfail=$((nfail + 1))
    fi
}

expect "3 ranks on 1 CPU" "8 x 262144, deep 64" "$(rings 3 0)"
expect "3 ranks on 1 CPU, OBC_PIPELINE_DEPTH=8" "8 x 262144, deep 0" \
    "$(rings 3 0 OBC_PIPELINE_DEPTH=8)"
expect "3 ranks on 1 CPU, OBC_PIPELINE_DEPTH=64" "64 x 262144, deep 0" \
    "$(rings 3 0 OBC_PIPELINE_DEPTH=64)"
expect "3 ranks on 1 CPU, OBC_CHUNK_BYTES=64K" "8 x 65536, deep 64" \
    "$(rings 3 0 OBC_CHUNK_BYTES=64K)"
expect "3 ranks on 1 CPU, 1 MiB: ring" "staging" "$(ring_for 1048576)"
expect "3 ranks on 1 CPU, 4 MiB: ring" "deep" "$(ring_for 4194304)"
expect "3 ranks on 1 CPU, 4 MiB, OBC_PIPELINE_DEPTH=8: ring" "staging" \
    "$(ring_for 4194304 OBC_PIPELINE_DEPTH=8)"
if [ "$(nproc)" -ge 2 ]; then
    expect "2 ranks on 2 CPUs" "8 x 262144, deep 0" "$(rings 2 0,1)"
else
    echo "skipped: 2 ranks on 2 CPUs (this machine has one)"
fi
if rings 2 0 OBC_PIPELINE_DEPTH=1 >/dev/null; then
    echo "FAIL: OBC_PIPELINE_DEPTH=1 was accepted"
    nfail=$((nfail + 1))
elif ! grep -q "OBC_PIPELINE_DEPTH (1) 2 .. 1024" "$LOG"; then
    echo "FAIL: OBC_PIPELINE_DEPTH=1 was refused without saying why:"
    sed 's/^/    /' "$LOG" | tail -5
    nfail=$((nfail + 1))
else
    echo "ok: OBC_PIPELINE_DEPTH=1 refused"
fi
echo "stage_depth: $nfail failure(s)"
[ "$nfail" -eq 0 ]
