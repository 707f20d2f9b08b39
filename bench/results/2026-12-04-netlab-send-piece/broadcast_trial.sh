#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kept as the record of what ran: it needs a scratch build at /tmp/exp whose SEND_PIECE
# reads HACK_SEND_PIECE (README.md), which was not committed.
# experiment: TCP SEND_PIECE on netlab broadcast (H hosts at RATE)
set -u
SRC=/work/main
OUT=${1:-/tmp/mb/piece_b}; H=${H:-8}; RATE=${RATE:-500mbit}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
. "$SRC/tests/netlab/nljob.sh"
nlj_init
nlj_lab_up bc "$H" --rate "$RATE"
for ((r = 1; r <= ROUNDS; r++)); do
  for p in ${PIECES:-32768 65536 262144}; do
    NLJ_RANK_ENV="HACK_SEND_PIECE=$p"
    nlj_launch "$H" 1 /tmp/exp/build/bin/obc-perf -o broadcast --csv -b 16M -e 64M -f 4 -w 1 -m 3 -n 5 -t 1
    nlj_wait 600
    grep -E '^obc,' "$NLJ_DIR/rank0.log" | sed "s/^obc/piece$p/;s/$/,h$H,$RATE,r$r/" | tee -a "$OUT/res.csv"
  done
done
nlj_lab_down
