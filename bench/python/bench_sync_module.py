#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench_sync_module.py - copy rank 0's model to every rank: obc.sync_module
against torch.distributed on gloo, with time and peak memory.

Run one implementation per launch, every rank under obcrun (gloo joins
through tcp://127.0.0.1:PORT with obcrun's OBC_RANK/OBC_NRANKS):
    obcrun -n 4 /usr/bin/python3 bench_sync_module.py --impl obc
    obcrun -n 4 /usr/bin/python3 bench_sync_module.py --impl gloo --port 29533
    obcrun -n 4 /usr/bin/python3 bench_sync_module.py --impl gloo_coalesced --port 29534
impls: obc (obc.sync_module, 25 MiB buckets), gloo (dist.broadcast of every
parameter and buffer, what user code does), gloo_coalesced (torch's own
dist._broadcast_coalesced, which DDP uses to sync a model at start: it packs
tensors into 250 MiB buckets).

The model: LAYERS x Linear(WIDTH, WIDTH), 8 x 8192^2 = 537M float32
parameters (2.0 GiB), made without initialisation and filled with 1 on rank
0 and -rank elsewhere before each repetition (untimed). Timed: barrier, then
the sync, per rank; a repetition's time is the slowest rank's. After each
repetition every element is checked (untimed).

Memory: after one untimed warm-up sync (connections and staging areas
exist, as in a running job), before each timed sync every rank resets its
peak RSS (/proc/self/clear_refs, 5) and records VmRSS; VmHWM right after
the sync minus that is the extra memory the sync needed (largest over ranks
and repetitions). peak_rss is VmHWM itself (model and torch included).

Prints one CSV line on rank 0:
impl,nranks,params,bytes,median_s,min_s,per_receiver_GBps,extra_rss_MiB,peak_rss_MiB,wrong
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def make_model(layers, width):
    return torch.nn.Sequential(*[torch.nn.utils.skip_init(torch.nn.Linear, width, width)
                                 for _ in range(layers)])


def fill(model, rank):
    value = 1.0 if rank == 0 else -float(rank)
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            t.fill_(value)


def wrong(model):
    """Elements that are not rank 0's value, counted 1M at a time so the
    check's temporaries stay small."""
    n = 0
    for t in list(model.parameters()) + list(model.buffers()):
        for piece in t.detach().view(-1).split(1 << 20):
            n += int((piece != 1).sum())
    return n


def reset_peak_rss():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS


class Obc:
    def __init__(self, args):
        import obc
        self.obc = obc
        self.comm = obc.init()
        self.rank, self.size = self.comm.rank, self.comm.size

    def sync(self, model):
        self.obc.sync_module(model, src=0, bucket_mb=25)

    def barrier(self):
        self.obc.barrier()

    def gather(self, obj):
        return self.obc.all_gather_object(obj)


class Gloo:
    def __init__(self, args):
        import torch.distributed as dist
        self.dist = dist
        self.rank, self.size = int(os.environ["OBC_RANK"]), int(os.environ["OBC_NRANKS"])
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                                rank=self.rank, world_size=self.size)
        self.coalesced = args.impl == "gloo_coalesced"

    def sync(self, model):
        tensors = [t.detach() for t in list(model.parameters()) + list(model.buffers())]
        if self.coalesced:
            self.dist._broadcast_coalesced(self.dist.group.WORLD, tensors, 250 << 20, 0)
        else:
            for t in tensors:
                self.dist.broadcast(t, src=0)

    def barrier(self):
        self.dist.barrier()

    def gather(self, obj):
        out = [None] * self.size
        self.dist.all_gather_object(out, obj)
        return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--impl", choices=("obc", "gloo", "gloo_coalesced"), required=True)
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--width", type=int, default=8192)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(1)
    impl = Obc(args) if args.impl == "obc" else Gloo(args)
    model = make_model(args.layers, args.width)
    params = sum(t.numel() for t in model.parameters())
    nbytes = sum(t.numel() * t.element_size() for t in model.parameters())
    fill(model, impl.rank)
    impl.sync(model)  # warm-up: connections and staging exist before memory is measured
    times, bad, extra, peak = [], 0, 0.0, 0.0
    for _ in range(args.reps):
        fill(model, impl.rank)
        reset_peak_rss()
        rss_before = status_kib("VmRSS")
        impl.barrier()
        t0 = time.perf_counter()
        impl.sync(model)
        times.append(time.perf_counter() - t0)
        hwm = status_kib("VmHWM")
        extra, peak = max(extra, (hwm - rss_before) / 1024), max(peak, hwm / 1024)
        bad += wrong(model)
    rows = impl.gather((times, extra, peak, bad))
    if impl.rank == 0:
        slowest = [max(r[0][i] for r in rows) for i in range(args.reps)]
        med = statistics.median(slowest)
        print("impl,nranks,params,bytes,median_s,min_s,per_receiver_GBps,extra_rss_MiB,"
              "peak_rss_MiB,wrong")
        print(f"{args.impl},{impl.size},{params},{nbytes},{med:.3f},{min(slowest):.3f},"
              f"{nbytes / med / 1e9:.3f},{max(r[1] for r in rows):.1f},"
              f"{max(r[2] for r in rows):.1f},{sum(r[3] for r in rows)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
