#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""numpy_a2a.py - torch_a2a.py's largest exchange (16 MiB nominal at 2 ranks) through obc's
own Python API on numpy arrays: blocking, or with ASYNC=1 obc_ialltoallv and wait. Rank 0
prints its median own time over 20 calls.
    obcrun -n 2 /usr/bin/python3 numpy_a2a.py
"""
import os
import statistics
import time

import numpy as np

import obc

ASYNC = os.environ.get("ASYNC") == "1"
c = obc.init()
n, me = c.size, c.rank
unit = 1048576
send = [unit * ((me + 2 * j) % 3 + 1) for j in range(n)]
recv = [unit * ((i + 2 * me) % 3 + 1) for i in range(n)]
x = np.arange(sum(send), dtype=np.float32)
y = np.empty(sum(recv), dtype=np.float32)
ts = []
for _ in range(20):
    c.barrier()
    t0 = time.perf_counter()
    w = c.all_to_all_single(y, x, recv, send, async_op=ASYNC)
    if ASYNC:
        w.wait()
    ts.append(time.perf_counter() - t0)
if me == 0:
    print(f"median own ms {statistics.median(ts) * 1e3:.2f}")
