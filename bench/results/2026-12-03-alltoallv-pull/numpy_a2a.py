#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# numpy_a2a.py - the torch script's exchange (16 MiB nominal, 2 ranks) through obc's own Python API on
# numpy arrays, blocking or (ASYNC=1) obc_ialltoallv + wait; rank 0 prints its median own time.
#     obcrun -n 2 /usr/bin/python3 numpy_a2a.py
import sys, time, statistics
import numpy as np
import obc, os
ASYNC = os.environ.get("ASYNC") == "1"
c = obc.init()
n, me = c.size, c.rank
unit = 1048576
send = [unit * ((me + 2 * j) % 3 + 1) for j in range(n)]
recv = [unit * ((i + 2 * me) % 3 + 1) for i in range(n)]
x = np.arange(sum(send), dtype=np.float32); y = np.empty(sum(recv), dtype=np.float32)
ts = []
for _ in range(20):
    c.barrier(); t0 = time.perf_counter(); w = c.all_to_all_single(y, x, recv, send, async_op=ASYNC); (w.wait() if ASYNC else None); ts.append(time.perf_counter() - t0)
t = np.array([statistics.median(ts)]); m = np.empty(1)
c.allreduce(t, m, op="max") if hasattr(c, "allreduce") else None
if me == 0: print("median own ms", statistics.median(ts) * 1e3, "max", m[0] * 1e3 if hasattr(c, "allreduce") else "")
