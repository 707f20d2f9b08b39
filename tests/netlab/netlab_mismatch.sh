#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netlab_mismatch.sh - a mismatched call between ranks on different hosts. 2 hosts x 2
# ranks loop 1 MiB broadcasts; at broadcast 10 the last rank (on host 1) calls an
# allreduce of the same bytes instead. With OBC_TIMEOUT=30, every rank must fail with
# OBC_ERR_MISMATCH (exit 2, "ranks disagree"), not by the timeout: within 5 s of the
# last rank finishing broadcast 9 (the measured time is printed), every message but the
# odd rank's naming rank 3. Run twice: as is (found when the waits stall) and with
# OBC_CHECK=1 (the calls compared before data moves, every message naming both calls).
# obct: timeout=120
. "$(dirname "$0")/nljob.sh"
nlj_init
PROG=$OBCT_BINDIR/nl_bcast_loop
nlj_need_prog "$PROG"
TIMEOUT=30
AT=10
LIMIT=$(nlj_calc '5 * m' "m=$NLJ_SCALE")
ODD=3

# check_mismatch CHECK: one job with OBC_CHECK=CHECK, and its checks.
check_mismatch() {
    local check=$1 r t0 t line msg dt
    nlj_launch 2 2 OBC_TIMEOUT=$TIMEOUT OBC_CHECK="$check" "$PROG" -s 1M -n 100 -k "$AT" -x "$AT" -q
    if nlj_wait 60; then
        nlj_fail "OBC_CHECK=$check: the job reported success despite the mismatched call"
        return
    fi
    # t0: the last rank to finish the broadcast before the odd call.
    t0=0
    for ((r = 0; r < NLJ_N; r++)); do
        line=$(grep -E "^rank $r: iteration $AT done at " "$NLJ_DIR/rank$r.log" | tail -n 1)
        t=${line##* at }
        [ -n "$t" ] && t0=$(nlj_calc 'a > b ? a : b' "a=$t" "b=$t0")
    done
    for ((r = 0; r < NLJ_N; r++)); do
        line=$(nlj_result_line "$r")
        msg=$(nlj_err_msg "$r")
        dt=$(nlj_since "$t0" "$(nlj_err_time "$r")")
        if [ "${NLJ_RC[r]}" != 2 ] || ! printf '%s\n' "$line" | grep -q "ERROR ranks disagree"; then
            nlj_fail "OBC_CHECK=$check: rank $r: want OBC_ERR_MISMATCH, got exit ${NLJ_RC[r]}: $(printf '%s' "$line" | cut -c1-240)"
            continue
        fi
        if awk -v d="$dt" -v l="$LIMIT" 'BEGIN { exit !(d >= 0 && d <= l) }'; then
            nlj_ok "OBC_CHECK=$check: rank $r: MISMATCH $dt s after broadcast $((AT - 1)) (<= $LIMIT s): $msg"
        else
            nlj_fail "OBC_CHECK=$check: rank $r: MISMATCH $dt s after broadcast $((AT - 1)) (want <= $LIMIT s)"
        fi
        if [ "$r" != "$ODD" ] && ! nlj_names_rank "$msg" "$ODD"; then
            nlj_fail "OBC_CHECK=$check: rank $r's message does not name rank $ODD: $msg"
        fi
        if [ "$check" = 1 ] && ! printf '%s\n' "$msg" | grep -q " called .* while rank "; then
            nlj_fail "OBC_CHECK=$check: rank $r's message does not name both calls: $msg"
        fi
    done
}

nlj_lab_up mis 2
check_mismatch 0
check_mismatch 1
nlj_finish "a call mismatched across hosts is OBC_ERR_MISMATCH on every rank (limit $LIMIT s)"
