#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How these results were made: the chain's chunk rule (bcast_relay.c chain_chunk: at least 8
# chunks per hop, none under 64 KiB or over a slot) against the rule before it (one slot,
# 256 KiB, per chunk), obc-perf broadcast on netlab labs, interleaved, 3 rounds.
#   BASE: obc-perf of a build of d93c1bc (git worktree add /tmp/obc-base d93c1bc; cmake; make)
#   NEW:  obc-perf of this build (build/bin/obc-perf)
# Usage (root): bash bench/results/2026-11-30-chain-chunk/run.sh  -> bw.csv here
# Rows: lab,ranks_per_host,round, then obc-perf's CSV row (impl,nranks,bytes,usec,algbw,busbw,wrong).
set -u
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)
source "$SRC/tests/netlab/nljob.sh"
BASE=${BASE:-/tmp/obc-base/build/bin/obc-perf}
NEW=${NEW:-$SRC/build/bin/obc-perf}
rm -f "$HERE/bw.csv"
nlj_init
one() { # LAB HOSTS RANKS_PER_HOST
    local lab=$1 hosts=$2 r=$3 rep impl bin
    for rep in 1 2 3; do
        for impl in base new; do
            bin=$BASE
            [ "$impl" = new ] && bin=$NEW
            nlj_launch "$hosts" "$r" "$bin" --csv -H --label "obc_$impl" -r 0 -b 1M -e 16M -f 4 \
                -w 1 -m 5 -n 20 -t 0.5
            nlj_wait 600 || echo "$lab $r $rep $impl failed"
            grep -v '^#' "$NLJ_DIR/rank0.log" | grep -v '^impl,' | sed "s/^/$lab,$r,$rep,/" |
                tee -a "$HERE/bw.csv"
        done
    done
}
nlj_lab_up c8 8 --rate 500mbit
one 8x500mbit 8 1
one 8x500mbit 8 2
nlj_lab_down
nlj_lab_up c4 4 --rate 1gbit
one 4x1gbit 4 1
