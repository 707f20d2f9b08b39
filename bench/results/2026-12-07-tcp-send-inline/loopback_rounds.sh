#!/usr/bin/env bash
# obc (old: 1bb0e07, every publish wakes the progress thread; new: the rank writes a frame of
# up to 32 KiB it publishes when the thread is not pumping) over loopback TCP, every rank its own host,
# against Open MPI (btl tcp,self), in-place broadcast, no checks, alternating rounds.
# Libraries in /tmp/ns/{old,new} (copies of build/lib/libobc.so*).
set -u
B=/work/main/build
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # setting np busy
    local busy=() r v
    for ((b = 0; b < $3; b++)); do yes >/dev/null & busy+=($!); done
    for ((r = 1; r <= 3; r++)); do
        for v in old new; do
            echo "$1 r$r $v $(LD_LIBRARY_PATH=/tmp/ns/$v OBC_HOST_ID=rank/1 $B/bin/obcrun -n $2 $B/bin/obc-perf -b 8 -e 64M -f 8 -c 0 -i 1 -t 0.3 --csv 2>&1 | grep '^obc,' | cut -d, -f4 | tr '\n' ' ')"
        done
        echo "$1 r$r ompi $(mpirun.openmpi --oversubscribe --mca btl tcp,self -n $2 /tmp/anc/mpi_bcast_bench -b 8 -e 64M -f 8 -c 0 -t 0.3 2>&1 | grep '^mpi,' | cut -d, -f4 | tr '\n' ' ')"
    done
    [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}"
}
run idle_np2 2 0
run busy1_np2 2 1
run idle_np4 4 0
