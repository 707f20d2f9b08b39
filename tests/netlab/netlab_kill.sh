#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netlab_kill.sh - every process of a host SIGKILLed in the middle of a broadcast loop.
# 4 hosts x 2 ranks loop 1 MiB broadcasts from rank 0 with OBC_TIMEOUT=60; after about
# 1 s of good rounds `netlab kill 2` SIGKILLs ranks 4 and 5 (their sockets close, so a
# peer can notice at once rather than by timeout). Every survivor must fail (exit 2, an
# obc error) within 2 s of the kill, naming rank 4 or rank 5.
# obct: timeout=120
. "$(dirname "$0")/nljob.sh"
nlj_init
PROG=$OBCT_BINDIR/nl_bcast_loop
nlj_need_prog "$PROG"
TIMEOUT=60
VICTIM=2
LIMIT=$(nlj_calc '2 * m' "m=$NLJ_SCALE")

nlj_lab_up kil 4
nlj_launch 4 2 OBC_TIMEOUT=$TIMEOUT "$PROG" -s 1M -t 120
nlj_wait_looping 30 || nlj_give_up "the broadcasts did not get going: no fault injected"
T0=$(nlj_now)
"$NETLAB" kill "$VICTIM" KILL >/dev/null
T1=$(nlj_now)
echo "killed host $VICTIM's processes at $T0 (netlab kill took $(nlj_since "$T0" "$T1") s)"
# Far below OBC_TIMEOUT: a survivor that only notices by timeout is killed and fails.
if nlj_wait 20; then
    nlj_fail "the job as a whole reported success despite the kill"
else
    nlj_ok "the job as a whole reported failure"
fi
echo "times from the kill (t=0):"
nlj_table "$T0"
nlj_check_survivors "$VICTIM" "$T0" "$LIMIT" kill 4 5
nlj_finish "OBC_TIMEOUT=$TIMEOUT: slowest survivor exited $NLJ_WORST s after the kill (limit $LIMIT s)"
