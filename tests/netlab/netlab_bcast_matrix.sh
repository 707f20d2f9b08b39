#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netlab_bcast_matrix.sh - the broadcast matrix (tests/coll/bcast_matrix, OBCT_QUICK=1:
# largest size 4 MiB + odd) on ranks spread over emulated hosts with unshaped links:
# 4 hosts x 2 ranks (shared memory within a host, TCP between hosts), then 3 hosts x 1
# rank (TCP only). Every rank must exit 0.
# obct: timeout=240
. "$(dirname "$0")/nljob.sh"
nlj_init
PROG=$OBCT_BINDIR/bcast_matrix
nlj_need_prog "$PROG"

for shape in "4 2" "3 1"; do
    read -r H R <<<"$shape"
    nlj_lab_up mat "$H"
    t0=$(nlj_now)
    nlj_launch "$H" "$R" OBCT_QUICK=1 OBC_TIMEOUT=30 "$PROG"
    nlj_wait 90
    nlj_expect_all_ok
    echo "job $NLJ_JOB: $H hosts x $R ranks: last rank done after $(nlj_since "$t0" \
        "$(printf '%s\n' "${NLJ_TEXIT[@]}" | sort -n | tail -n 1)") s"
    grep -h '^bcast_matrix:' "$NLJ_DIR/rank0.log" | sed 's/^/    /'
    nlj_lab_down
done
nlj_finish "bcast_matrix quick on 4x2 and 3x1 hosts x ranks"
