#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench_train_step.py - one data-parallel training step (forward, backward,
gradient averaging, SGD step) with obc.GradientAverager against torch's
DistributedDataParallel on gloo, same model, data and ranks.

    obcrun -n 4 /usr/bin/python3 bench_train_step.py --impl obc
    obcrun -n 4 /usr/bin/python3 bench_train_step.py --impl ddp_gloo --port 29535
    obcrun -n 4 /usr/bin/python3 bench_train_step.py --impl local
impls: obc (GradientAverager, 25 MiB buckets, launched from autograd hooks),
ddp_gloo (torch DDP, bucket_cap_mb=25), local (no communication: the compute
floor). Both averagers overlap communication with backward.

The model: an MLP of DEPTH Linear(WIDTH, WIDTH) + ReLU layers (default 6 x
2048^2 = 25M parameters, 100 MB of gradients); BATCH samples per rank; one
torch thread per rank. WARMUP untimed steps, then STEPS timed ones; a step's
time is the slowest rank's; printed: the median. After the run the
parameters are compared across ranks (obc.check_consistency or an
allgathered checksum) and must be identical.

CSV on rank 0: impl,nranks,params,grad_bytes,batch,median_ms,min_ms,consistent
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def make_model(depth, width):
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--impl", choices=("obc", "ddp_gloo", "local"), required=True)
    p.add_argument("--port", type=int, default=29535)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=15)
    args = p.parse_args()
    torch.set_num_threads(1)
    rank, size = int(os.environ["OBC_RANK"]), int(os.environ["OBC_NRANKS"])
    model = make_model(args.depth, args.width)
    params = sum(t.numel() for t in model.parameters())

    import obc
    obc.init()  # also the timing/bookkeeping channel for every impl
    averager = None
    net = model
    if args.impl == "obc":
        averager = obc.GradientAverager(model, bucket_mb=25)
    elif args.impl == "ddp_gloo":
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=rank,
                                world_size=size)
        net = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(args.batch, args.width, generator=g)
    y = torch.randn(args.batch, args.width, generator=g)

    times = []
    for step in range(args.warmup + args.steps):
        obc.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        if averager is not None:
            averager.wait()
        opt.step()
        dt = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
        obc.all_reduce(dt, op=obc.ReduceOp.MAX)
        if step >= args.warmup:
            times.append(dt.item())
    differ = obc.check_consistency(model)
    consistent = "yes" if not differ else ("n/a" if args.impl == "local" else "NO")
    if rank == 0:
        print("impl,nranks,params,grad_bytes,batch,median_ms,min_ms,consistent")
        print(f"{args.impl},{size},{params},{params * 4},{args.batch},"
              f"{1e3 * statistics.median(times):.1f},{1e3 * min(times):.1f},{consistent}")


if __name__ == "__main__":
    main()
