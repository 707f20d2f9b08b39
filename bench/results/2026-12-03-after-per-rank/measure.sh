#!/bin/bash
# after-CI measurements: alltoall (idle 8 ranks, busy 2 ranks) vs Open MPI; torch per-call 8 B vs gloo
cd "$(dirname "$0")/../../../build" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi() { mpirun.openmpi --oversubscribe -n $1 /tmp/obc-anchors-build/mpi_coll_bench.openmpi -o alltoall -b $2 -e $3 -f 2 -t 0.5 2>/dev/null | cut -d, -f3,4 | tr '\n' ' '; }
obcp() { ./bin/obcrun -n $1 ./bin/obc-perf -o alltoall -b $2 -e $3 -f 2 -t 0.5 --csv | cut -d, -f3,4 | tr '\n' ' '; }
echo "== alltoall 8 ranks idle, maxrank (size,usec)"
for r in 1 2; do echo "r$r obc  $(obcp 8 1M 16M)"; echo "r$r ompi $(ompi 8 1M 16M)"; done
echo "== alltoall 2 ranks beside one busy process, maxrank"
yes > /dev/null & BUSY=$!
for r in 1 2; do echo "r$r obc  $(obcp 2 64K 16M)"; echo "r$r ompi $(ompi 2 64K 16M)"; done
kill $BUSY
echo "== torch dist.all_reduce 8 B per call"
for n in 2 4; do for r in 1 2; do for b in obc gloo; do
  env PYTHONPATH=../python OBC_LIBRARY=$PWD/lib/libobc.so OMP_NUM_THREADS=1 ./bin/obcrun -n $n /usr/bin/python3 ../bench/python/bench_torch_backend.py --backend $b --widths 256 --steps 3 --calls 2000 2>&1 | grep "8 B"
done; done; done
