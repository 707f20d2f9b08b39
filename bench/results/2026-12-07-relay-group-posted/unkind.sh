#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# unkind.sh - group_bench (old and new obc builds) and mpi_group_bench (Open MPI, TCP only)
# in alternating rounds: 2 ranks beside one busy process, and 4 ranks on this 2-CPU machine,
# every obc rank its own "host" (OBC_HOST_ID=rank/1). Prints "setting round impl" before
# each rank's line. The record of the second table of README.md; binaries made by hand:
#   OLD=... NEW=... (group_bench built against each library) MPI=... (mpi_group_bench)
# Usage: OLD=/tmp/gb/gbc_old OLD_RUN=/tmp/a/build/bin/obcrun NEW=... NEW_RUN=... MPI=... unkind.sh
set -u
K=${K:-64} S=${S:-1048576} R=${R:-10} ROUNDS=${ROUNDS:-5}
run() { # setting np busy
    local busy=() r
    for ((b = 0; b < $3; b++)); do yes >/dev/null & busy+=($!); done
    for ((r = 1; r <= ROUNDS; r++)); do
        OBC_HOST_ID=rank/1 "$OLD_RUN" -n "$2" "$OLD" "$K" "$S" "$R" | sed "s/^/$1 r$r old /"
        OBC_HOST_ID=rank/1 "$NEW_RUN" -n "$2" "$NEW" "$K" "$S" "$R" | sed "s/^/$1 r$r new /"
        mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl tcp,self -n "$2" "$MPI" \
            "$K" "$S" "$R" | sed "s/^/$1 r$r ompi /"
    done
    [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}"
}
run busy1_np2 2 1
run idle_np4 4 0
