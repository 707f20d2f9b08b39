#!/bin/sh
# OSU at 2 ranks beside one busy process, plain Open MPI vs the layer, 3 alternating rounds
cd /work/main
sh -c 'while :; do :; done' & busy=$!
B=/tmp/osu/openmpi/c/mpi/collective/blocking; L=$PWD/build/lib/libobc_mpi.so
for r in 1 2 3; do
  for b in bcast allreduce allgather alltoall; do
    for m in plain layer; do
      X=""; [ $m = layer ] && X="-x LD_PRELOAD=$L"
      printf "%s %s %s: " $r $b $m
      timeout 120 mpirun.openmpi --allow-run-as-root -n 2 $X $B/osu_$b -i 500 -x 50 -m 4194304 -T mpi_int 2>&1 | awk '/^[0-9]+ /{ if ($1==8||$1==1024||$1==4096||$1==65536||$1==1048576||$1==4194304) printf "%s=%s ", $1, $2}'
      echo
    done
  done
done
kill $busy
