#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""gloo_coll_bench.py - torch.distributed (backend "gloo") anchor for allreduce,
reduce, allgather, gather, scatter and alltoall (dist.all_to_all_single: gloo
in torch 1.13 has no list all_to_all), measured like anchors/gloo_bcast_bench.py measures
broadcast and like obc-perf measures obc, printing the same CSV lines:

  impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong

Run with /usr/bin/python3 (Debian's torch and numpy are importable only there).
NP ranks are separate processes (torch.multiprocessing.spawn) joined through
env:// on MASTER_ADDR=127.0.0.1, MASTER_PORT (a free port unless set),
GLOO_SOCKET_IFNAME=lo. reduce_scatter is not offered: torch's gloo process group
implements neither reduce_scatter nor reduce_scatter_tensor (nor ReduceOp.AVG).

Per size (MIN, MIN*F, ..., MAX): WARMUP untimed then ITERS timed iterations of
fill inputs / poison outputs (untimed), dist.barrier(), time this rank's call
with CLOCK_MONOTONIC, reduce (max) to rank 0 the own duration, the end stamp and
the reference start (the root's for reduce, gather and scatter, the earliest
otherwise), and count
wrong output elements (untimed). Printed: the median over timed iterations of the
slowest rank's time, or with -S of the span. ITERS = clamp(BUDGET / wall time of
the median warmup iteration, MINIT, MAXIT), decided on rank 0.

Sizes and busbw follow nccl-tests: bytes is the whole vector (allreduce, reduce)
or the whole buffer of NP blocks (allgather: each rank sends bytes / NP; gather,
scatter: the root's buffer; alltoall: each rank's, bytes / NP to each peer);
busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather, gather, scatter,
alltoall), 1 (reduce).

torch's all_reduce and reduce work in place, so their buffer holds the input
before the call and the result after it (nothing to poison); all_gather writes
into separate views, which are poisoned first. Data, chosen so that results are
exact in any order of addition and cheap to check with numpy:
  input(rank r, element i, iteration t) = base[i] + g(r) + h(t)   (SUM MIN MAX)
  input = s[i] * 2^e(r) * (-1 if r == 0 and t odd)                 (PROD)
with base, s fixed pseudo-random arrays and h(t) = t mod 5 - 2, so consecutive
iterations always have different results (stale data is caught) and every rank
contributes a different g(r) (a missing or doubled rank is caught). allgather
uses bytes (base8[r-th block] + c(r, t)) mod 256 and counts wrong bytes; the
reductions count wrong elements. gather, scatter and alltoall use the same
bytes with c(src * NP + dst, t): each (source, destination) block its own.
"""

import argparse
import os
import socket
import sys
import time

OPS = ("allreduce", "reduce", "allgather", "gather", "scatter", "alltoall")
PERSONAL = ("gather", "scatter", "alltoall")  # byte patterns per (source, destination) block
REDOPS = ("sum", "prod", "min", "max")
DTYPES = ("float32", "float64", "int32", "int64")
CHUNK = 1 << 22  # elements per validation step, to bound temporary memory


def parse_size(s):
    s = s.strip()
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    mult = units.get(s[-1].lower(), 1)
    return int(float(s[:-1] if mult > 1 else s) * mult)


def size_list(minb, maxb, factor):
    s = float(minb)
    while True:
        n = min(int(s + 0.5), maxb)
        yield n
        if n >= maxb:
            return
        s *= factor


def busbw_factor(op, n):
    if op == "allreduce":
        return 2.0 * (n - 1) / n
    if op == "allgather" or op in PERSONAL:
        return (n - 1) / n
    return 1.0


def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else 0.5 * (v[k // 2 - 1] + v[k // 2])


class Data:
    """Inputs and expected results of one rank (see the module docstring)."""

    def __init__(self, np, a, nranks, rank, max_count):
        self.np, self.a, self.n, self.rank = np, a, nranks, rank
        self.dt = np.dtype(a.dtype)
        rng = np.random.default_rng(20240917)
        if self.dt.kind == "f":
            lim = 1 << min(np.finfo(self.dt).nmant + 1, 30)
        else:
            lim = 1 << min(8 * self.dt.itemsize - 1, 30)
        per_input = lim // nranks - 1  # n inputs of |x| <= per_input never overflow
        self.bamp = max(per_input // 2, 0)
        self.gamp = max(per_input // 2 - 2, 0)
        self.g = rng.integers(-self.gamp, self.gamp + 1, size=nranks)
        if a.redop == "prod":  # only one max_count-sized array per rank: memory
            two_ok = nranks <= (60 if self.dt.kind == "f" else 8 * self.dt.itemsize - 2)
            choices = [-2, -1, 1, 2] if two_ok else [-1, 1]
            self.s = rng.choice(choices, size=max_count).astype(self.dt)
        else:
            self.base = rng.integers(-self.bamp, self.bamp + 1, size=max_count).astype(self.dt)
        # floats: e(r) in {-1, 0, 1} on the first 8 ranks; integers: no fractions
        self.e = [int(x) - 1 if self.dt.kind == "f" and r < 8 else 0
                  for r, x in enumerate(rng.integers(0, 3, size=nranks))]

    def scale(self, r, t):
        """PROD: the factor rank r applies at iteration t."""
        sign = -1.0 if (r == 0 and t % 2) else 1.0
        return sign * 2.0 ** self.e[r]

    def fill(self, out, t):
        a, n = self.a, out.shape[0]
        if a.redop == "prod":
            self.np.multiply(self.s[:n], self.dt.type(self.scale(self.rank, t)), out=out)
        else:
            self.np.add(self.base[:n], self.dt.type(self.g[self.rank] + t % 5 - 2), out=out)

    def expected(self, lo, hi, t):
        np, a, n = self.np, self.a, self.n
        h = t % 5 - 2
        if a.redop == "sum":
            return self.base[lo:hi] * self.dt.type(n) + self.dt.type(int(self.g.sum()) + n * h)
        if a.redop == "min":
            return self.base[lo:hi] + self.dt.type(int(self.g.min()) + h)
        if a.redop == "max":
            return self.base[lo:hi] + self.dt.type(int(self.g.max()) + h)
        factor = 1.0
        for r in range(n):
            factor *= self.scale(r, t)
        return np.power(self.s[lo:hi], n).astype(self.dt) * self.dt.type(factor)

    def wrong(self, buf, t):
        wrong = 0
        for lo in range(0, buf.shape[0], CHUNK):
            hi = min(buf.shape[0], lo + CHUNK)
            wrong += int(self.np.count_nonzero(buf[lo:hi] != self.expected(lo, hi, t)))
        return wrong


def worker(rank, nranks, a):
    import numpy as np
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # fill/check must not fight the 2 cores
    dist.init_process_group("gloo", rank=rank, world_size=nranks)
    tdt = getattr(torch, a.dtype)
    dsize = np.dtype(a.dtype).itemsize
    parts = nranks if a.op == "allgather" or a.op in PERSONAL else 1
    max_count = max(a.max // dsize // parts, 1)
    redop = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT,
             "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}[a.redop]

    buf = torch.zeros(max_count * parts, dtype=tdt)  # zeros(): pages faulted in
    bufn = buf.numpy()
    if a.op == "allgather" or a.op in PERSONAL:
        send = torch.zeros(max_count * (nranks if a.op in PERSONAL else 1), dtype=tdt)
        sendb = send.numpy().view(np.uint8)
        bufb = bufn.view(np.uint8)
        base8 = np.random.default_rng(777).integers(0, 256, size=bufb.shape[0], dtype=np.uint8)
        tmp8 = np.empty(min(bufb.shape[0], 16 << 20), dtype=np.uint8)
    else:
        data = Data(np, a, nranks, rank, max_count)
    has_root = a.op in ("reduce", "gather", "scatter")
    victim = a.root if a.op in ("reduce", "gather") else (a.root + 1) % nranks
    it_counter = [0]

    def c8(r, t):
        return (29 * t + 101 * r + 1) % 256

    def gather_wrong(out, blk, r, t):
        wrong = 0
        for off in range(0, blk, tmp8.shape[0]):
            end = min(blk, off + tmp8.shape[0])
            m = end - off
            np.subtract(out[r * blk + off:r * blk + end], base8[r * blk + off:r * blk + end],
                        out=tmp8[:m])
            wrong += m - int(np.count_nonzero(tmp8[:m] == np.uint8(c8(r, t))))
        return wrong

    def pattern(r, t):
        """What block r of a buffer holds: (base8 + c8(r, t)) mod 256."""
        return np.add(base8[:blk_now[0]], np.uint8(c8(r, t)))

    def block_fill(b, j, r, t, poison):
        seg = b[j * blk_now[0]:(j + 1) * blk_now[0]]
        np.add(base8[:blk_now[0]], np.uint8(c8(r, t)), out=seg)
        if poison:
            np.invert(seg, out=seg)

    def block_wrong(b, j, r, t):
        seg = b[j * blk_now[0]:(j + 1) * blk_now[0]]
        return int(np.count_nonzero(seg != pattern(r, t)))

    # (source, destination) -> pattern id; (blocks of send, of buf) each rank has
    def pid(src, dst):
        return src * nranks + dst

    def personal_layout():
        root, me = a.root, rank
        if a.op == "gather":
            return ([(0, pid(me, root))],
                    [(r, pid(r, root)) for r in range(nranks)] if me == root else [])
        if a.op == "scatter":
            return ([(r, pid(root, r)) for r in range(nranks)] if me == root else [],
                    [(0, pid(root, me))])
        return ([(j, pid(me, j)) for j in range(nranks)], [(j, pid(j, me)) for j in range(nranks)])

    blk_now = [0]

    def one_iter_personal(count, wrong_acc):
        t = it_counter[0]
        it_counter[0] += 1
        blk_now[0] = blk = count * dsize
        sends, recvs = personal_layout()
        if a.check:
            for j, r in sends:
                block_fill(sendb, j, r, t, False)
            for j, r in recvs:
                block_fill(bufb, j, r, t, True)
        dist.barrier()
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
        if a.op == "alltoall":
            dist.all_to_all_single(buf[:count * nranks], send[:count * nranks])
        elif a.op == "gather":
            views = list(buf[:count * nranks].chunk(nranks)) if rank == a.root else None
            dist.gather(send[:count], views, dst=a.root)
        else:
            views = list(send[:count * nranks].chunk(nranks)) if rank == a.root else None
            dist.scatter(buf[:count], views, src=a.root)
        t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
        out_bytes = len(recvs) * blk
        if a.inject and rank == victim and out_bytes:
            bufb[out_bytes // 2] ^= 0x5A  # self-test: one wrong byte
        if a.check:
            wrong_acc[0] += sum(block_wrong(sendb, j, r, t) for j, r in sends)
            wrong_acc[0] += sum(block_wrong(bufb, j, r, t) for j, r in recvs)
        return t0, t1

    def one_iter(count, wrong_acc):
        if a.op in PERSONAL:
            return one_iter_personal(count, wrong_acc)
        t = it_counter[0]
        it_counter[0] += 1
        blk = count * dsize
        if a.op == "allgather":
            views = list(buf[:count * nranks].chunk(nranks))
            if a.check:
                np.add(base8[rank * blk:(rank + 1) * blk], np.uint8(c8(rank, t)), out=sendb[:blk])
                for r in range(nranks):
                    seg = bufb[r * blk:(r + 1) * blk]
                    np.add(base8[r * blk:(r + 1) * blk], np.uint8(c8(r, t)), out=seg)
                    np.invert(seg, out=seg)
        elif a.check:
            data.fill(bufn[:count], t)
        view = buf[:count]
        dist.barrier()
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
        if a.op == "allreduce":
            dist.all_reduce(view, op=redop)
        elif a.op == "reduce":
            dist.reduce(view, dst=a.root, op=redop)
        else:
            dist.all_gather(views, send[:count])
        t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
        out_bytes = 0 if (has_root and rank != a.root) else count * parts * dsize
        if a.inject and rank == victim and out_bytes:
            bufn.view(np.uint8)[out_bytes // 2] ^= 0x5A  # self-test: one wrong element
        if a.check:
            if a.op == "allgather":
                wrong_acc[0] += sum(gather_wrong(bufb, blk, r, t) for r in range(nranks))
                wrong_acc[0] += gather_wrong_send(blk, t)
            elif not has_root or rank == a.root:
                wrong_acc[0] += data.wrong(bufn[:count], t)
        return t0, t1

    def gather_wrong_send(blk, t):
        want = np.add(base8[rank * blk:(rank + 1) * blk], np.uint8(c8(rank, t)))
        return int(np.count_nonzero(sendb[:blk] != want))

    if rank == 0 and a.verbose:
        print("# impl=%s nranks=%d op=%s dtype=%s redop=%s root=%d torch=%s backend=gloo"
              % (a.impl, nranks, a.op, a.dtype, a.redop, a.root, torch.__version__), flush=True)
    if rank == 0 and a.header:
        print("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong", flush=True)

    prev = 0
    for want in size_list(a.min, a.max, a.factor):
        count = max(want // dsize // parts, 1)
        nbytes = count * dsize * parts
        if nbytes == prev:  # rounding to whole elements can repeat a size
            continue
        prev = nbytes
        wrong = [0]
        warm = []  # the median warmup iteration sizes the timed loop, as obc-perf's
        for _ in range(a.warmup):
            w0 = time.perf_counter()
            one_iter(count, wrong)
            warm.append(time.perf_counter() - w0)
        per_iter = median(warm)
        it_t = torch.zeros(1, dtype=torch.int64)
        if rank == 0:
            it_t[0] = int(max(a.min_iters, min(a.max_iters,
                                               a.time / per_iter if per_iter > 0 else a.max_iters)))
        dist.broadcast(it_t, src=0)
        times, spans = [], []
        for _ in range(int(it_t[0])):
            t0, t1 = one_iter(count, wrong)
            ref = -t0 if (not has_root or rank == a.root) else -1e300
            st = torch.tensor([t1 - t0, t1, ref], dtype=torch.float64)
            dist.reduce(st, dst=0, op=dist.ReduceOp.MAX)
            times.append(float(st[0]))
            spans.append(float(st[1]) + float(st[2]))
        w_t = torch.tensor([wrong[0]], dtype=torch.int64)
        dist.reduce(w_t, dst=0, op=dist.ReduceOp.SUM)
        if rank == 0:
            med_max, med_span = median(times), median(spans)
            med = med_span if a.span else med_max
            algbw = nbytes / med / 1e9 if med > 0 else 0.0
            print("%s,%d,%d,%.3f,%.6f,%.6f,%d" % (a.impl, nranks, nbytes, med * 1e6, algbw,
                                                 algbw * busbw_factor(a.op, nranks), int(w_t[0])),
                  flush=True)
            if a.verbose:
                print("# bytes=%d count=%d iters=%d maxrank_median_usec=%.3f maxrank_min_usec=%.3f "
                      "maxrank_max_usec=%.3f span_median_usec=%.3f span_min_usec=%.3f "
                      "warmup_wall_usec=%.1f" % (nbytes, count, len(times), med_max * 1e6,
                                                 min(times) * 1e6, max(times) * 1e6,
                                                 med_span * 1e6, min(spans) * 1e6,
                                                 per_iter * 1e6), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--np", type=int, default=2, help="number of ranks (default 2)")
    p.add_argument("--impl", "-i", default="gloo", help="label in the CSV (default gloo)")
    p.add_argument("-o", "--coll", dest="op", default="allreduce",
                   help="collective: %s (default allreduce)" % " ".join(OPS))
    p.add_argument("-d", "--dtype", default="float32", choices=DTYPES, help="default float32")
    p.add_argument("--op", dest="redop", default="sum", choices=REDOPS, help="default sum")
    p.add_argument("-b", "--min", type=parse_size, default=8, help="smallest size (default 8)")
    p.add_argument("-e", "--max", type=parse_size, default=256 << 20,
                   help="largest size, K/M/G ok (default 256M)")
    p.add_argument("-f", "--factor", type=float, default=2.0, help="size step factor (default 2)")
    p.add_argument("-r", "--root", type=int, default=0, help="reduce root (default 0)")
    p.add_argument("-w", "--warmup", type=int, default=3, help="warmup iterations (default 3)")
    p.add_argument("-n", "--max-iters", type=int, default=200, help="max timed iterations")
    p.add_argument("-m", "--min-iters", type=int, default=5, help="min timed iterations")
    p.add_argument("-t", "--time", type=float, default=1.0,
                   help="time budget per size for the timed loop, seconds (default 1.0)")
    p.add_argument("-c", "--check", type=int, default=1, help="validate data 1/0 (default 1)")
    p.add_argument("-H", "--header", action="store_true", help="print the CSV header first")
    p.add_argument("-v", "--verbose", action="store_true", help="print '#' detail lines")
    p.add_argument("-S", "--span", action="store_true",
                   help="report the span (latest end - reference start) instead")
    p.add_argument("-X", "--inject", action="store_true",
                   help="self-test: one output byte is damaged per call, so wrong must equal "
                        "the iteration count")
    a = p.parse_args()
    if a.op == "reduce_scatter":
        print("gloo_coll_bench.py: torch's gloo backend has no reduce_scatter", file=sys.stderr)
        return 2
    if (a.op not in OPS or a.np < 1 or not 0 <= a.root < a.np or a.factor <= 1 or a.min < 1
            or a.max < a.min or a.warmup < 1 or a.min_iters < 1 or a.max_iters < a.min_iters
            or (a.inject and not a.check) or (a.op in ("allgather",) + PERSONAL and a.redop != "sum")):
        p.error("invalid arguments")

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback only

    import torch.multiprocessing as mp
    mp.spawn(worker, args=(a.np, a), nprocs=a.np, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
