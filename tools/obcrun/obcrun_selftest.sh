#!/bin/sh
# SPDX-License-Identifier: MIT
# obcrun_selftest.sh - checks the launcher's behaviour with plain shell ranks
# (no libobc needed): environment, exit statuses, stopping the other ranks
# within 2 s, signals, --timeout, --tag-output and /dev/shm cleanup.
# Usage: tools/obcrun/obcrun_selftest.sh build/bin/obcrun   (exit 0 = all passed)
# The rank scripts are single-quoted on purpose: each rank expands them.
# shellcheck disable=SC2016
set -u
OBCRUN=${1:?usage: $0 path/to/obcrun}
nfail=0

# Milliseconds on the boot clock (/proc/uptime, 10 ms steps): the wall clock can step mid-test.
now_ms() {
    read -r up _ </proc/uptime
    echo "${up%.*}${up#*.}0"
}

# expect NAME STATUS MAX_MS COMMAND...: runs COMMAND, checks status and duration.
expect() {
    name=$1 want=$2 max_ms=$3
    shift 3
    t0=$(now_ms)
    "$@" >/tmp/obcrun_selftest.$$ 2>&1
    got=$?
    ms=$(($(now_ms) - t0))
    if [ "$got" -ne "$want" ] || [ "$ms" -gt "$max_ms" ]; then
        echo "FAIL $name: status $got (want $want), $ms ms (max $max_ms)"
        sed 's/^/    /' /tmp/obcrun_selftest.$$
        nfail=$((nfail + 1))
    else
        echo "ok   $name ($ms ms)"
    fi
}

# expect_output NAME PATTERN: the last command's output must match PATTERN (grep -E).
expect_output() {
    if ! grep -Eq "$2" /tmp/obcrun_selftest.$$; then
        echo "FAIL $1: output lacks /$2/"
        sed 's/^/    /' /tmp/obcrun_selftest.$$
        nfail=$((nfail + 1))
    fi
}

expect "all ranks exit 0" 0 2000 "$OBCRUN" -n 4 sh -c 'exit 0'
expect "environment" 0 2000 "$OBCRUN" -n 2 sh -c \
    'test "$OBC_NRANKS" = 2 && test -n "$OBC_RANK" &&
     echo "$OBC_BOOTSTRAP" | grep -Eq "^127\.0\.0\.1:[0-9]+$" &&
     echo "$OBC_SECRET" | grep -Eq "^[0-9a-f]{32}$" && test -n "$OBC_JOB_ID"'
expect "torchrun's variables" 0 2000 "$OBCRUN" -n 3 sh -c \
    'test "$RANK" = "$OBC_RANK" && test "$LOCAL_RANK" = "$OBC_RANK" &&
     test "$WORLD_SIZE" = 3 && test "$LOCAL_WORLD_SIZE" = 3 && test "$MASTER_ADDR" = 127.0.0.1 &&
     echo "$MASTER_PORT" | grep -Eq "^[0-9]+$" && test "127.0.0.1:$MASTER_PORT" != "$OBC_BOOTSTRAP"'
expect "torchrun's variables replaced" 0 2000 env RANK=7 WORLD_SIZE=9 MASTER_PORT=1 \
    "$OBCRUN" -n 2 sh -c 'test "$RANK" = "$OBC_RANK" && test "$WORLD_SIZE" = 2 &&
     test "$MASTER_PORT" != 1'
expect "secret passed through" 0 2000 env OBC_SECRET=s3cret "$OBCRUN" -n 2 sh -c \
    'test "$OBC_SECRET" = s3cret'
expect "rank exits 3" 3 2000 "$OBCRUN" -n 4 sh -c \
    '[ "$OBC_RANK" = 1 ] && exit 3; sleep 100'
expect_output "rank exits 3" "rank 1 \(pid [0-9]+\) exited with status 3"
expect "rank killed by SIGKILL" 137 2000 "$OBCRUN" -n 4 sh -c \
    '[ "$OBC_RANK" = 2 ] && kill -9 $$; sleep 100'
expect_output "rank killed by SIGKILL" "rank 2 \(pid [0-9]+\) was killed by signal 9"
expect "ranks ignoring SIGTERM" 5 2500 "$OBCRUN" -n 3 sh -c \
    'trap "" TERM; [ "$OBC_RANK" = 0 ] && exit 5; sleep 100'
expect "SIGINT to obcrun" 130 3000 timeout --preserve-status -s INT 0.5 "$OBCRUN" -n 3 sleep 100
expect "SIGTERM to obcrun" 143 3000 timeout --preserve-status -s TERM 0.5 "$OBCRUN" -n 3 sleep 100
expect "--timeout" 124 2500 "$OBCRUN" -n 3 --timeout 0.5 sleep 100
expect_output "--timeout" "timeout after 0.5 s, stopping 3 ranks"
expect "program not found" 127 2000 "$OBCRUN" -n 2 obcrun-no-such-program
expect "bad -n" 2 2000 "$OBCRUN" -n 0 true
expect "missing program" 2 2000 "$OBCRUN" -n 2
expect "unknown option" 2 2000 "$OBCRUN" -n 2 --frobnicate true
expect "--tag-output" 0 2000 "$OBCRUN" -n 2 --tag-output sh -c \
    'echo out; echo err >&2; printf partial'
expect_output "--tag-output" "^\[rank 1\] err$"
expect_output "--tag-output" "^\[rank 0\] partial$"
# --bind: one CPU per rank, a different one each, when they do not outnumber the CPUs
# (nproc counts the CPUs obcrun may use); none, or too many ranks by default: all of
# them; too many ranks with --bind core: round-robin, rank ncpu where rank 0 is.
ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
    expect "--bind core" 0 2000 "$OBCRUN" -n 2 --bind core --tag-output sh -c 'nproc; taskset -pc $$'
    expect_output "--bind core" "^\[rank 0\] 1$"
    expect_output "--bind core" "^\[rank 1\] 1$"
    if [ "$(grep -c "list: [0-9]*$" /tmp/obcrun_selftest.$$)" -ne 2 ] ||
        [ "$(sed -n 's/.*list: //p' /tmp/obcrun_selftest.$$ | sort -u | wc -l)" -ne 2 ]; then
        echo "FAIL --bind core: the ranks do not run on two different single CPUs"
        sed 's/^/    /' /tmp/obcrun_selftest.$$
        nfail=$((nfail + 1))
    fi
    expect "--bind default" 0 2000 "$OBCRUN" -n 2 --tag-output nproc
    expect_output "--bind default" "^\[rank 1\] 1$"
fi
expect "--bind none" 0 2000 "$OBCRUN" -n 2 --bind none --tag-output nproc
expect_output "--bind none" "^\[rank 1\] $ncpu$"
expect "--bind, outnumbered" 0 2000 "$OBCRUN" -n $((ncpu + 1)) --tag-output nproc
expect_output "--bind, outnumbered" "^\[rank 0\] $ncpu$"
expect "--bind core, outnumbered" 0 2000 "$OBCRUN" -n $((ncpu + 1)) --bind core --tag-output \
    sh -c 'taskset -pc $$'
first=$(sed -n 's/^\[rank 0\] .*list: //p' /tmp/obcrun_selftest.$$)
wrapped=$(sed -n "s/^\[rank $ncpu\] .*list: //p" /tmp/obcrun_selftest.$$)
if [ "$(grep -c "list: [0-9]*$" /tmp/obcrun_selftest.$$)" -ne $((ncpu + 1)) ] ||
    [ -z "$first" ] || [ "$first" != "$wrapped" ]; then
    echo "FAIL --bind core, outnumbered: not one CPU each, rank $ncpu beside rank 0"
    sed 's/^/    /' /tmp/obcrun_selftest.$$
    nfail=$((nfail + 1))
fi
expect "--bind bad" 2 2000 "$OBCRUN" -n 2 --bind sideways true
expect "/dev/shm cleanup" 137 2000 "$OBCRUN" -n 2 sh -c \
    'touch "/dev/shm/obc-$OBC_JOB_ID-selftest"; echo "$OBC_JOB_ID" >/tmp/obcrun_selftest_id.$$;
     kill -9 $$'
if ls /dev/shm/obc-"$(cat /tmp/obcrun_selftest_id.* 2>/dev/null | head -1)"-* >/dev/null 2>&1; then
    echo "FAIL /dev/shm cleanup: files left"
    nfail=$((nfail + 1))
fi
rm -f /tmp/obcrun_selftest.$$ /tmp/obcrun_selftest_id.*

echo "$nfail failed"
[ "$nfail" -eq 0 ]
