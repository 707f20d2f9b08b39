#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch_a2a.py - dist.all_to_all_single with uneven splits (MoE routing), "obc" against
"gloo", same script: the block from rank i to rank j holds unit * ((i + 2j) % 3 + 1)
float32 elements, as obc-perf's alltoallv. Rank 0 prints the median over REPS of the
slowest rank's time per call, and checks every received element once per size.
    obcrun -n 2 /usr/bin/python3 torch_a2a.py --backend obc
"""
import argparse
import statistics
import time

import torch
import torch.distributed as dist

import obc.torch  # noqa: F401 (registers "obc")


def splits(unit, n, me):
    send = [unit * ((me + 2 * j) % 3 + 1) for j in range(n)]
    recv = [unit * ((i + 2 * me) % 3 + 1) for i in range(n)]
    return send, recv


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="obc")
    p.add_argument("--reps", type=int, default=15)
    a = p.parse_args()
    dist.init_process_group(a.backend)
    n, me = dist.get_world_size(), dist.get_rank()
    for unit in (1024, 16384, 262144, 1048576):  # elements: 4 KiB .. 4 MiB per unit
        send, recv = splits(unit, n, me)
        x = torch.empty(sum(send))
        off = 0
        for j, c in enumerate(send):  # element k of the block to j: me * 1e6 + j * 1e3 + k % 997
            x[off:off + c] = me * 1e6 + j * 1e3 + torch.arange(c, dtype=torch.float32) % 997
            off += c
        y = torch.empty(sum(recv))
        dist.all_to_all_single(y, x, recv, send)
        off, bad = 0, 0
        for i, c in enumerate(recv):
            want = i * 1e6 + me * 1e3 + torch.arange(c, dtype=torch.float32) % 997
            bad += int((y[off:off + c] != want).sum())
            off += c
        times = []
        for _ in range(a.reps):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_to_all_single(y, x, recv, send)
            t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            times.append(t.item())
        wrong = torch.tensor([bad])
        dist.all_reduce(wrong)
        if me == 0:
            nominal = 2 * unit * 4 * n
            print(f"{a.backend},{n},{nominal},{statistics.median(times) * 1e6:.1f},wrong={int(wrong)}",
                  flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
