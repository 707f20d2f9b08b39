#!/bin/bash
# Crowded waits: OBC_YIELD_NS variants (VARIANTS, default "default 0 5000 20000 100000") against the default and Open MPI, 4 and 8 ranks
# on the 2 cores, allreduce and in-place broadcast, both metrics. Prints CSV lines
# round,variant,op,metric,np,bytes,usec.
set -u
ROUNDS=${1:-5}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
OBCRUN="$TOP/build/bin/obcrun"
A=${OBC_ANCHORS_BUILD:-/tmp/obc-anchors-build}
for r in $(seq 1 "$ROUNDS"); do
  for np in 4 8; do
    for m in maxrank span; do
      S=""; [ $m = span ] && S="-S"
      mpirun.openmpi --allow-run-as-root --oversubscribe -np $np $A/mpi_coll_bench.openmpi -o allreduce $S -b 8 -e 1M -f 8 -t 0.2 2>/dev/null | grep -v '^#' | awk -F, -v r=$r -v m=$m '{print r",openmpi,allreduce,"m","$2","$3","$4}'
      mpirun.openmpi --allow-run-as-root --oversubscribe -np $np $A/mpi_bcast_bench.openmpi -i openmpi $S -b 8 -e 1M -f 8 -r 0 -w 3 -n 200 -m 5 -t 0.2 2>/dev/null | grep -v '^#' | awk -F, -v r=$r -v m=$m '{print r",openmpi,broadcast,"m","$2","$3","$4}'
      for v in ${VARIANTS:-default 0 5000 20000 100000}; do
        E=""; [ $v != default ] && E="OBC_YIELD_NS=$v"
        env $E "$OBCRUN" -n $np "$TOP/build/bin/obc-perf" -o allreduce $S -b 8 -e 1M -f 8 -t 0.2 --csv | awk -F, -v r=$r -v m=$m -v v=$v '{print r",obc_y"v",allreduce,"m","$2","$3","$4}'
        env $E "$OBCRUN" -n $np "$TOP/build/bin/obc-perf" -i 1 $S -b 8 -e 1M -f 8 -t 0.2 --csv | awk -F, -v r=$r -v m=$m -v v=$v '{print r",obc_y"v",broadcast,"m","$2","$3","$4}'
      done
    done
  done
done
