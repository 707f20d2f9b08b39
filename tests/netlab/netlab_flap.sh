#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netlab_flap.sh - a link that goes down for 3 s and comes back, well inside the timeout.
# 4 hosts x 2 ranks loop 1 MiB broadcasts from rank 0 for 12 s (the root's clock) with
# OBC_TIMEOUT=20; after about 1 s host 2 is cut, 3 s later healed. Nothing may fail:
# every rank exits 0 with every byte of every broadcast right, and the loop must have
# gone on after the heal.
# obct: timeout=120
. "$(dirname "$0")/nljob.sh"
nlj_init
PROG=$OBCT_BINDIR/nl_bcast_loop
nlj_need_prog "$PROG"
TIMEOUT=20
VICTIM=2
CUT_S=3

nlj_lab_up flp 4
nlj_launch 4 2 OBC_TIMEOUT=$TIMEOUT "$PROG" -s 1M -t 12
nlj_wait_looping 30 || nlj_give_up "the broadcasts did not get going: no fault injected"
T0=$(nlj_now)
"$NETLAB" cut "$VICTIM" >/dev/null
sleep "$CUT_S"
TH=$(nlj_now)
"$NETLAB" heal "$VICTIM" >/dev/null
echo "host $VICTIM cut at $T0, healed $(nlj_since "$T0" "$TH") s later"
nlj_wait 60
echo "times from the cut (t=0):"
nlj_table "$T0"
nlj_expect_all_ok
# Rank 0's progress lines ("rank 0: N broadcasts at T"): the count at the heal and the
# first line after it (resumed by then).
read -r n_heal n_end t_resume < <(awk -v th="$TH" '
    /^rank 0: [0-9]+ broadcasts at/ { if ($6 + 0 <= th + 0) nh = $3; else if (tr == "") tr = $6 }
    /^rank 0: OK [0-9]+ broadcasts/ { ne = $4 }
    END { printf "%d %d %s\n", nh, ne, tr == "" ? "none" : tr }' "$NLJ_DIR/rank0.log")
echo "rank 0: $n_heal broadcasts before the heal, $n_end in all;" \
    "first progress line after the heal: $([ "$t_resume" = none ] && echo none || echo "+$(nlj_since "$TH" "$t_resume") s")"
if [ "${n_end:-0}" -gt "${n_heal:-0}" ] && [ "$(nlj_since "$TH" "${NLJ_TEXIT[0]}" | cut -d. -f1)" -ge 2 ]; then
    nlj_ok "broadcasts went on after the heal ($((n_end - n_heal)) more)"
else
    nlj_fail "no broadcasts after the heal"
fi
nlj_finish "cut ${CUT_S} s then heal, OBC_TIMEOUT=$TIMEOUT: $((n_end - n_heal)) broadcasts after the heal"
