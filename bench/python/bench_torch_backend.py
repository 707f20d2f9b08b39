#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench_torch_backend.py - the same torch.distributed script on the "obc"
backend and on "gloo": per-call time of a small all_reduce, and a
DistributedDataParallel training step (forward, backward with DDP's
overlapped bucket allreduces, SGD step).

    obcrun -n 2 /usr/bin/python3 bench_torch_backend.py --backend obc
    obcrun -n 2 /usr/bin/python3 bench_torch_backend.py --backend gloo
    obcrun -n 2 /usr/bin/python3 bench_torch_backend.py --local   (compute only)
(obcrun sets torchrun's variables, so init_process_group's env:// works;
torchrun works too.) Printed by rank 0: the median over REPS of the
slowest rank's time.
"""
import argparse
import time

import torch
import torch.distributed as dist

import obc.torch  # noqa: F401 (registers "obc")


def slowest(seconds):
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def small_allreduce(nbytes, calls, reps):
    x = torch.ones(max(1, nbytes // 4))
    for _ in range(calls // 10):
        dist.all_reduce(x)
    times = []
    for _ in range(reps):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(calls):
            dist.all_reduce(x)
        times.append(slowest((time.perf_counter() - t0) / calls))
    return sorted(times)[len(times) // 2]


def ddp_step(width, depth, batch, steps, wrap=True):
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers)
    if wrap:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = torch.randn(batch, width), torch.randn(batch, width)
    times = []
    for step in range(steps + 2):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        if step >= 2:
            times.append(slowest(time.perf_counter() - t0))
    nparams = sum(p.numel() for p in model.parameters())
    return sorted(times)[len(times) // 2], nparams


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="obc")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--widths", default="256,1024")
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--local", action="store_true",
                    help="the same steps without DDP (no gradient averaging): the compute floor")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group(args.backend)
    n = dist.get_world_size()
    per_call = small_allreduce(8, args.calls, args.reps)
    if dist.get_rank() == 0:
        print(f"{args.backend} n={n} all_reduce 8 B: {per_call * 1e6:.1f} us/call")
    for width in [int(w) for w in args.widths.split(",")]:
        t, nparams = ddp_step(width, args.depth, args.batch, args.steps, not args.local)
        if dist.get_rank() == 0:
            kind = "local step (no DDP)" if args.local else "DDP step"
            print(f"{args.backend} n={n} {kind}, {nparams / 1e6:.2f}M params: {t * 1e3:.2f} ms")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
