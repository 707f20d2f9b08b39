#!/bin/sh
# SPDX-License-Identifier: MIT
# any_source_wakeups.sh - the mechanism of a receive from any source, not its
# speed: it sleeps on its rank's doorbell, which every message to the rank
# rings (shared memory and TCP alike), so a late message wakes it once. At
# OBC_DEBUG=TRACE every point-to-point batch logs "W waits" (engine/
# progress.c); p2p_any_late's rank 0 waits 200 ms for each of its messages,
# and its most waits in one batch must stay within BOUND. Before the
# doorbell it looked at the streams in turns of at most 2 ms: 100 and more
# waits per message. On one host (3 ranks) and across two fake hosts (4
# ranks, the sender on the other host: its TCP thread rings).
# Usage: tests/coll/any_source_wakeups.sh build/bin/obcrun build/tests/bin/p2p_any_late
set -u
OBCRUN=${1:?usage: $0 path/to/obcrun path/to/p2p_any_late}
PROG=${2:?usage: $0 path/to/obcrun path/to/p2p_any_late}
MULT=${OBC_TEST_TIMEOUT_MULTIPLIER:-1}
LOG=${TMPDIR:-/tmp}/obc_any_wake.$$
trap 'rm -f "$LOG"' EXIT
BOUND=20 # 200 ms in the library's fallback turns of 20 ms is 10; a few spare
nfail=0

# most_waits NP [VAR=VALUE ...]: rank 0's most waits in one point-to-point batch
most_waits() {
    np=$1
    shift
    env OBC_DEBUG=TRACE "$@" "$OBCRUN" -n "$np" --timeout $((120 * MULT)) "$PROG" \
        >/dev/null 2>"$LOG" || return 1
    grep ':0 TRACE point-to-point batch of [0-9]* ops: [0-9]* waits' "$LOG" |
        sed 's/.* ops: \([0-9]*\) waits.*/\1/' | sort -n | tail -1
}

for case in "3" "4 OBC_HOST_ID=rank/2"; do
    # shellcheck disable=SC2086 # NP and the variable are words on purpose
    waits=$(most_waits $case) || waits=""
    echo "np $case: rank 0's receive from any source waited at most ${waits:-?} times"
    if [ -z "$waits" ] || [ "$waits" -gt "$BOUND" ]; then
        echo "FAIL: np $case: ${waits:-no TRACE line, or the program failed} (bound $BOUND)"
        sed 's/^/    /' "$LOG" | grep -v TRACE | tail -20
        nfail=$((nfail + 1))
    fi
done
echo "any_source_wakeups: $nfail failure(s)"
[ "$nfail" -eq 0 ]
