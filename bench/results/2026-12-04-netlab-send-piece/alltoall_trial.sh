#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kept as the record of what ran: it needs a scratch build at /tmp/exp whose SEND_PIECE
# reads HACK_SEND_PIECE (README.md), which was not committed.
# experiment: TCP SEND_PIECE on netlab alltoall (4 hosts, 1gbit), obc from /tmp/exp build
set -u
SRC=/work/main
OUT=${1:-/tmp/mb/piece}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
. "$SRC/tests/netlab/nljob.sh"
nlj_init
nlj_lab_up a2a 4 --rate 1gbit
for ((r = 1; r <= ROUNDS; r++)); do
  for p in ${PIECES:-32768 131072 1048576}; do
    NLJ_RANK_ENV="HACK_SEND_PIECE=$p LD_LIBRARY_PATH=/tmp/exp/build/lib"
    nlj_launch 4 1 /tmp/exp/build/bin/obc-perf -o alltoall --csv -b 4M -e 16M -f 4 -w 2 -m 10 -n 20 -t 2
    nlj_wait 600
    grep -E '^obc,' "$NLJ_DIR/rank0.log" | sed "s/^obc/piece$p/;s/$/,r$r/" | tee -a "$OUT/res.csv"
  done
done
nlj_lab_down
