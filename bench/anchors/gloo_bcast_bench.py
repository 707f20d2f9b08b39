#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Kept copy of the design's anchors/gloo_bcast_bench.py (../shared), unchanged but for these three lines
# and the warmup rule (the median warmup iteration sizes the timed loop, as obc-perf's), so that
# bench/ runs from a fresh clone; keep its CSV format identical to obc-perf --csv.
"""gloo_bcast_bench.py - torch.distributed (backend "gloo") broadcast anchor.

Run with Debian's interpreter (/usr/bin/python3), which sees python3-torch and
python3-numpy; the pyenv `python3` on PATH does not.

Starts NP ranks as separate processes (torch.multiprocessing.spawn), each
joining a gloo process group through env:// rendezvous on
MASTER_ADDR=127.0.0.1 / MASTER_PORT (a free port is picked unless set), and
measures dist.broadcast of a uint8 tensor exactly like mpi_bcast_bench.c:

  root: fill buffer with pattern(iteration)        (not timed)
  others: fill buffer with ~pattern(iteration)     (poison, not timed)
  dist.barrier()
  t = now(); dist.broadcast(buf[:n], src=root); t = now() - t
                                                   (now = CLOCK_MONOTONIC)
  dist.reduce(t, MAX) to rank 0                    -> slowest rank
  every rank counts bytes that differ from pattern(iteration) (not timed)

pattern(iteration) = (B + c(iteration)) mod 256, B a fixed pseudo-random byte
array of MAX bytes (same seed on every rank), c(it) = (29*it + 1) mod 256, so
stale, shifted or missing data is detected.

Per size: median over timed iterations of the max-over-ranks time.  The
"span" (latest end over ranks - root's start; comparable because all ranks
share CLOCK_MONOTONIC on one host) is printed in the -v comment lines, and
--span/-S reports it in the usec column instead.  Output on
stdout, one CSV line per size (no header unless --header):
  impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
busbw = algbw (broadcast, nccl-tests convention), GB = 1e9 bytes; wrong is
the total of wrong bytes over all ranks and all iterations (warmup included).
"""

import argparse
import os
import socket
import sys
import time


def parse_size(s):
    s = s.strip()
    mult = 1
    if s[-1] in "kK":
        mult, s = 1 << 10, s[:-1]
    elif s[-1] in "mM":
        mult, s = 1 << 20, s[:-1]
    elif s[-1] in "gG":
        mult, s = 1 << 30, s[:-1]
    return int(float(s) * mult)


def size_list(minb, maxb, factor):
    sizes, s = [], float(minb)
    while True:
        n = min(int(s + 0.5), maxb)
        sizes.append(n)
        if n >= maxb:
            return sizes
        s *= factor


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else 0.5 * (v[k // 2 - 1] + v[k // 2])


CHUNK = 16 << 20  # validation works in chunks to bound temporary memory


def worker(rank, nranks, a):
    import numpy as np
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # fill/check must not fight the 2 cores
    dist.init_process_group("gloo", rank=rank, world_size=nranks)

    maxb = a.max
    buf = torch.zeros(maxb, dtype=torch.uint8)  # zeros(): pages faulted in
    bufn = buf.numpy()                          # shares memory with buf
    base = np.random.default_rng(12345).integers(0, 256, size=maxb, dtype=np.uint8)
    tmp = np.empty(min(CHUNK, maxb), dtype=np.uint8)

    def fill(n, c, poison):
        np.add(base[:n], np.uint8(c), out=bufn[:n])
        if poison:
            np.invert(bufn[:n], out=bufn[:n])

    def count_wrong(n, c):
        wrong = 0
        for off in range(0, n, CHUNK):
            end = min(n, off + CHUNK)
            m = end - off
            np.subtract(bufn[off:end], base[off:end], out=tmp[:m])
            wrong += m - int(np.count_nonzero(tmp[:m] == np.uint8(c)))
        return wrong

    it_counter = [0]

    def now():
        # CLOCK_MONOTONIC: one clock for all processes of the host
        return time.clock_gettime(time.CLOCK_MONOTONIC)

    def one_iter(n, wrong_acc):
        c = (29 * it_counter[0] + 1) % 256
        it_counter[0] += 1
        if a.check:
            fill(n, c, rank != a.root)
        view = buf[:n]
        dist.barrier()
        t0 = now()
        dist.broadcast(view, src=a.root)
        t1 = now()
        if a.inject and rank == (a.root + 1) % nranks:
            bufn[n // 2] ^= 0x5A  # self-test: checker must count 1 byte
        if a.check:
            wrong_acc[0] += count_wrong(n, c)
        return t0, t1

    if rank == 0 and a.verbose:
        print("# impl=%s nranks=%d root=%d torch=%s backend=gloo" %
              (a.impl, nranks, a.root, torch.__version__), flush=True)
    if rank == 0 and a.header:
        print("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong", flush=True)

    for n in size_list(a.min, a.max, a.factor):
        wrong = [0]
        warm = []  # the median warmup iteration sizes the timed loop, as obc-perf's
        for _ in range(a.warmup):
            w0 = time.perf_counter()
            one_iter(n, wrong)
            warm.append(time.perf_counter() - w0)
        per_iter = median(warm)

        it_t = torch.zeros(1, dtype=torch.int64)
        if rank == 0:
            want = a.time / per_iter if per_iter > 0 else a.max_iters
            it_t[0] = int(max(a.min_iters, min(a.max_iters, want)))
        dist.broadcast(it_t, src=0)
        iters = int(it_t[0])

        times, spans = [], []
        for _ in range(iters):
            t0, t1 = one_iter(n, wrong)
            # max over ranks of: own duration, end stamp, root's -start
            t = torch.tensor([t1 - t0, t1, -t0 if rank == a.root else -1e300],
                             dtype=torch.float64)
            dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
            times.append(float(t[0]))
            spans.append(float(t[1]) + float(t[2]))

        w_t = torch.tensor([wrong[0]], dtype=torch.int64)
        dist.reduce(w_t, dst=0, op=dist.ReduceOp.SUM)

        if rank == 0:
            times.sort()
            spans.sort()
            med_max, med_span = median(times), median(spans)
            med = med_span if a.span else med_max
            algbw = n / med / 1e9 if med > 0 else 0.0
            print("%s,%d,%d,%.3f,%.6f,%.6f,%d" %
                  (a.impl, nranks, n, med * 1e6, algbw, algbw, int(w_t[0])), flush=True)
            if a.verbose:
                print("# bytes=%d iters=%d maxrank_median_usec=%.3f "
                      "maxrank_min_usec=%.3f maxrank_max_usec=%.3f "
                      "span_median_usec=%.3f span_min_usec=%.3f "
                      "warmup_wall_usec=%.1f" % (n, iters, med_max * 1e6, times[0] * 1e6,
                                                 times[-1] * 1e6, med_span * 1e6,
                                                 spans[0] * 1e6, per_iter * 1e6),
                      flush=True)

    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--np", type=int, default=2, help="number of ranks (default 2)")
    p.add_argument("--impl", default="gloo", help="label in the CSV (default gloo)")
    p.add_argument("-b", "--min", type=parse_size, default=8, help="smallest size (default 8)")
    p.add_argument("-e", "--max", type=parse_size, default=256 << 20,
                   help="largest size, K/M/G ok (default 256M)")
    p.add_argument("-f", "--factor", type=float, default=2.0, help="size step factor (default 2)")
    p.add_argument("-r", "--root", type=int, default=0, help="broadcast root (default 0)")
    p.add_argument("-w", "--warmup", type=int, default=3, help="warmup iterations (default 3)")
    p.add_argument("-n", "--max-iters", type=int, default=200, help="max timed iterations (default 200)")
    p.add_argument("-m", "--min-iters", type=int, default=5, help="min timed iterations (default 5)")
    p.add_argument("-t", "--time", type=float, default=1.0,
                   help="time budget per size for the timed loop, seconds (default 1.0)")
    p.add_argument("-c", "--check", type=int, default=1, help="validate data 1/0 (default 1)")
    p.add_argument("-H", "--header", action="store_true", help="print CSV header first")
    p.add_argument("-v", "--verbose", action="store_true", help="print '#' detail lines")
    p.add_argument("-S", "--span", action="store_true",
                   help="report the span (latest end over ranks - root's start, "
                        "CLOCK_MONOTONIC) instead of the max-over-ranks time")
    p.add_argument("-X", "--inject", action="store_true",
                   help="self-test: rank root+1 flips one byte after every broadcast, "
                        "so wrong must equal the iteration count")
    a = p.parse_args()
    if (a.np < 1 or not 0 <= a.root < a.np or a.factor <= 1 or a.min < 1
            or a.max < a.min or a.warmup < 1 or a.min_iters < 1
            or a.max_iters < a.min_iters):
        p.error("invalid arguments")

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback only

    import torch.multiprocessing as mp
    mp.spawn(worker, args=(a.np, a), nprocs=a.np, join=True)


if __name__ == "__main__":
    sys.exit(main())
