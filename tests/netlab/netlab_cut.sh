#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netlab_cut.sh - a host cut off the network in the middle of a broadcast loop.
# 4 hosts x 2 ranks loop 1 MiB broadcasts from rank 0 with OBC_TIMEOUT=6; after about
# 1 s of good rounds `netlab cut 2` takes host 2's link down (ranks 4 and 5: alive, but
# unreachable). Every rank on the other hosts must fail (exit 2, an obc error) within
# OBC_TIMEOUT + 4 s of the cut, with a message that names rank 4 or rank 5, and the
# job as a whole must fail. The cut-off ranks must end by themselves too (no hang).
# obct: timeout=120
. "$(dirname "$0")/nljob.sh"
nlj_init
PROG=$OBCT_BINDIR/nl_bcast_loop
nlj_need_prog "$PROG"
TIMEOUT=6
VICTIM=2
LIMIT=$(nlj_calc 't + 4 * m' "t=$TIMEOUT" "m=$NLJ_SCALE")

nlj_lab_up cut 4
nlj_launch 4 2 OBC_TIMEOUT=$TIMEOUT "$PROG" -s 1M -t 120
nlj_wait_looping 30 || nlj_give_up "the broadcasts did not get going: no fault injected"
T0=$(nlj_now)
"$NETLAB" cut "$VICTIM" >/dev/null
T1=$(nlj_now)
echo "cut host $VICTIM at $T0 (netlab cut took $(nlj_since "$T0" "$T1") s)"
if nlj_wait $((TIMEOUT + 30)); then
    nlj_fail "the job as a whole reported success despite the cut"
else
    nlj_ok "the job as a whole reported failure"
fi
echo "times from the cut (t=0):"
nlj_table "$T0"
for ((r = 0; r < NLJ_N; r++)); do
    if [ "$(nlj_host_of "$r")" = "$VICTIM" ] && [ "${NLJ_KILLED[r]}" = 1 ]; then
        nlj_fail "cut-off rank $r hung: still running $((TIMEOUT + 30)) s after the cut"
    fi
done
nlj_check_survivors "$VICTIM" "$T0" "$LIMIT" cut 4 5
nlj_finish "OBC_TIMEOUT=$TIMEOUT: slowest survivor exited $NLJ_WORST s after the cut (limit $LIMIT s)"
