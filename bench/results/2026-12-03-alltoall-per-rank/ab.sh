#!/bin/bash
# A/B: alltoall 8 ranks, old (global end barrier) vs new (per-rank done count) vs Open MPI
cd /work/main/build
B=${B:-8M}; E=${E:-128M}; NP=${NP:-8}
for round in 1 2 3; do
  for impl in old new ompi; do
    for metric in max span; do
      S=""; [ $metric = span ] && S="-S"
      if [ $impl = ompi ]; then
        out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n $NP /tmp/obc-anchors-build/mpi_coll_bench.openmpi -o alltoall -b $B -e $E -f 2 -t 0.5 $S 2>/dev/null | cut -d, -f3,4 | tr '\n' ' ')
      else
        out=$(LD_LIBRARY_PATH=/tmp/lib_$impl ./bin/obcrun -n $NP ./bin/obc-perf -o alltoall -b $B -e $E -f 2 -t 0.5 $S --csv | cut -d, -f3,4 | tr '\n' ' ')
      fi
      echo "r$round $impl $metric $out"
    done
  done
done
