# SPDX-License-Identifier: MIT
"""obc under the real torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
LOCAL_RANK; no OBC_* variable), run by ctest as:
    torchrun --standalone --nproc_per_node=2 python/tests/torchrun_check.py
Exits non-zero unless every rank sees the right rank, size and results, and
then runs the torch backend's tests (test_torch_backend.py) in the same
processes: dist.init_process_group("obc") under torchrun, without paying
for a second torchrun start."""
import os
import socket
import sys

import numpy as np
import torch

import obc

# obc.init() joins through torchrun's own store: the C library's fallback
# port, MASTER_PORT + 1, may belong to another process by then. Holding it
# here makes a join that still used it fail.
held = socket.socket()
try:
    held.bind((os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]) + 1))
    held.listen()
except OSError:  # someone else holds it already: the same test
    pass
comm = obc.init()
rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
assert (comm.rank, comm.size) == (rank, size), (comm.rank, comm.size, rank, size)
assert not {"OBC_RANK", "OBC_NRANKS", "OBC_BOOTSTRAP"} & set(os.environ), "torchrun must be the launcher"
t = torch.full((1000,), float(rank + 1))
obc.all_reduce(t)
assert (t == size * (size + 1) / 2).all()
cfg = obc.broadcast_object({"from": rank, "lr": np.float64(0.1)} if rank == 0 else None)
assert cfg["from"] == 0
print(f"torchrun_check: rank {rank} of {size} (LOCAL_RANK {os.environ['LOCAL_RANK']}) ok")
import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.join(here, "test_torch_backend.py")]))
