#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netlab_loss.sh - 1% of the packets arriving at every host dropped (netlab --loss 1%:
# whole skbs, so TCP sees real wire loss and retransmits). 4 hosts x 2 ranks run the
# broadcast matrix (OBCT_QUICK=1), then a loop of 16 MiB broadcasts for 8 s: every rank
# exits 0, every byte right.
# obct: timeout=240
. "$(dirname "$0")/nljob.sh"
nlj_init
MATRIX=$OBCT_BINDIR/bcast_matrix
LOOP=$OBCT_BINDIR/nl_bcast_loop
nlj_need_prog "$MATRIX"
nlj_need_prog "$LOOP"

nlj_lab_up los 4 --loss 1%
t0=$(nlj_now)
nlj_launch 4 2 OBCT_QUICK=1 OBC_TIMEOUT=30 "$MATRIX"
nlj_wait 90
nlj_expect_all_ok
echo "job $NLJ_JOB: bcast_matrix quick done after $(nlj_since "$t0" \
    "$(printf '%s\n' "${NLJ_TEXIT[@]}" | sort -n | tail -n 1)") s"
grep -h '^bcast_matrix:' "$NLJ_DIR/rank0.log" | sed 's/^/    /'

nlj_launch 4 2 OBC_TIMEOUT=60 "$LOOP" -s 16M -t 8 -q
nlj_wait 80
nlj_expect_all_ok
echo "job $NLJ_JOB: $(nlj_result_line 0)"
nlj_finish "bcast_matrix quick and 16 MiB loop on 4x2 with 1% loss"
