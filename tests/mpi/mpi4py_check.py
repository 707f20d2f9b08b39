# SPDX-License-Identifier: MIT
# mpi4py_check.py - Debian's python3-mpi4py through the layer (mpi_layer.sh
# runs it like mpi_layer_check): the buffer calls on numpy arrays (the
# personalised Alltoall, Gather and Scatter too, in place and not), each one
# MPI call, checked against values computed here; the last line says how
# many the layer should serve (numeric dtypes obc has, ops SUM/PROD/MIN/MAX)
# and pass (MPI.BAND, int16), as mpi_layer_check's does.
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, n = comm.Get_rank(), comm.Get_size()
served = passed = 0
fails = []


def check(what, got, want):
    if not np.array_equal(got, want):
        fails.append(f"{what}: got {got[:4]} want {want[:4]}")


for dt in (np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64):
    x = (np.arange(1000) % 5 + 1 + rank).astype(dt)
    every = [(np.arange(1000) % 5 + 1 + r).astype(dt) for r in range(n)]
    for op, fn in ((MPI.SUM, np.sum), (MPI.MAX, np.max), (MPI.MIN, np.min)):
        want = fn(np.stack(every), axis=0).astype(dt)
        out = np.zeros_like(x)
        comm.Allreduce(x, out, op=op)
        check(f"Allreduce {dt.__name__} {op}", out, want)
        buf = x.copy()
        comm.Allreduce(MPI.IN_PLACE, buf, op=op)
        check(f"Allreduce in place {dt.__name__}", buf, want)
        out = np.zeros_like(x)
        comm.Reduce(x, out, op=op, root=n - 1)
        if rank == n - 1:
            check(f"Reduce {dt.__name__}", out, want)
        served += 3
    b = x.copy() if rank == 0 else np.zeros_like(x)
    comm.Bcast(b, root=0)
    check(f"Bcast {dt.__name__}", b, every[0])
    g = np.zeros(1000 * n, dtype=dt)
    comm.Allgather(x, g)
    check(f"Allgather {dt.__name__}", g, np.concatenate(every))
    rs = np.zeros(1000 // n if 1000 % n == 0 else 0, dtype=dt)
    blk = rs.size
    comm.Reduce_scatter_block(np.tile(x[:blk], n) if blk else x[:0], rs, op=MPI.SUM)
    check(f"Reduce_scatter_block {dt.__name__}", rs,
          np.sum(np.stack([e[:blk] for e in every]), axis=0).astype(dt))
    served += 3
    # the personalised ones: block j of x to rank j (in place too); gather
    # and scatter to and from the last rank, in place on it
    blocks = [np.array_split(e, n) for e in every]
    if 1000 % n == 0:
        a = np.zeros_like(x)
        comm.Alltoall(x, a)
        check(f"Alltoall {dt.__name__}", a, np.concatenate([blocks[j][rank] for j in range(n)]))
        a = x.copy()
        comm.Alltoall(MPI.IN_PLACE, a)
        check(f"Alltoall in place {dt.__name__}", a,
              np.concatenate([blocks[j][rank] for j in range(n)]))
        served += 2
    root = n - 1
    g = np.zeros(1000 * n, dtype=dt) if rank == root else None
    comm.Gather(x, g, root=root)
    if rank == root:
        check(f"Gather {dt.__name__}", g, np.concatenate(every))
        g[:] = 0
        g[root * 1000:] = x
        comm.Gather(MPI.IN_PLACE, g, root=root)
        check(f"Gather in place {dt.__name__}", g, np.concatenate(every))
    else:
        comm.Gather(x, None, root=root)
    sc = np.zeros(1000, dtype=dt)
    src = np.concatenate(every) if rank == root else None
    comm.Scatter(src, sc, root=root)
    check(f"Scatter {dt.__name__}", sc, every[rank])
    if rank == root:
        comm.Scatter(src, MPI.IN_PLACE, root=root)
        check(f"Scatter in place {dt.__name__} (root's sendbuf)", src, np.concatenate(every))
    else:
        sc[:] = 0
        comm.Scatter(None, sc, root=root)
        check(f"Scatter in place {dt.__name__}", sc, every[rank])
    served += 4
comm.Barrier()
served += 1
# passed to MPI: an op obc lacks, a dtype obc lacks
x = np.arange(10, dtype=np.int32) + rank
out = np.zeros_like(x)
comm.Allreduce(x, out, op=MPI.BAND)
want = np.bitwise_and.reduce(np.stack([np.arange(10, dtype=np.int32) + r for r in range(n)]))
check("Allreduce BAND", out, want)
s = np.arange(10, dtype=np.int16)
so = np.zeros_like(s)
comm.Allreduce(s, so, op=MPI.SUM)
check("Allreduce int16", so, s * n)
passed += 2
# the pickle path: mpi4py 3.1's bcast of an object is two MPI_Bcast calls
# (its size, then its bytes)
obj = comm.bcast({"rank": rank} if rank == 0 else None, root=0)
if obj != {"rank": 0}:
    fails.append(f"bcast object: {obj}")
served += 2

nf = np.array([len(fails)], dtype=np.int32)
comm.Allreduce(MPI.IN_PLACE, nf, op=MPI.SUM)
served += 1
nfail = int(nf[0])
for f in fails[:10]:
    print(f"mpi4py_check: rank {rank}: {f}", file=sys.stderr)
if rank == 0:
    print(f"mpi4py_check: expect served {served} passed {passed}")
    print(f"mpi4py_check: {'ok' if nfail == 0 else 'FAILED'} ({n} ranks, {nfail} failures)")
sys.exit(0 if nfail == 0 else 1)
