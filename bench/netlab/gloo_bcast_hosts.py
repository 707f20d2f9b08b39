#!/usr/bin/python3
# Copied from ../shared/netlab/gloo_bcast_hosts.py (unchanged but for these two lines), so that
# bench/netlab/run.sh does not need ../shared at run time.
"""gloo_bcast_hosts.py - torch.distributed gloo broadcast, ONE process per host.

Made for netlab: every rank runs in its own network namespace, e.g.

  for i in 0 1 2 3; do
    netlab exec $i /usr/bin/python3 gloo_bcast_hosts.py --world 4 --rank $i \
        --master 10.77.0.1 --sizes 1M,16M,64M &
  done; wait

Run with Debian's /usr/bin/python3 (python3-torch); the pyenv python3 does not
have torch.  The rank defaults to $NETLAB_HOST (set by `netlab exec`).
GLOO_SOCKET_IFNAME defaults to eth0 (netlab's host link).

Mode "bench" (default): per size, WARMUP untimed + ITERS timed broadcasts,
same method as anchors/gloo_bcast_bench.py:
  root fills pattern(it), others fill ~pattern(it) (not timed)
  barrier; t0 = clock; broadcast; t1 = clock
  every rank checks its bytes (not timed)
All namespaces share one machine clock (CLOCK_MONOTONIC), so rank 0 also gets
every rank's (t0, t1) and reports when each receiver finished, measured from
the moment the root entered the broadcast.  Each rank also reads its own
eth0 tx/rx byte counters around the timed loop (each read after a barrier),
so the output shows how many bytes each host put on its link per broadcast
(the algorithm's traffic; includes headers and the small barrier messages).
Output (rank 0, stdout):
  CSV  impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong      (anchor format;
       usec = median over iterations of the max over ranks of t1 - t0)
  '#'  lines: per-rank median finish time after the root's t0, the
       per-receiver bandwidth bytes/finish, and tx/rx bytes per broadcast.

Mode "loop" (fault demo): broadcast SIZE again and again for DURATION
seconds; every rank prints one line per completed broadcast with a
timestamp, and when a broadcast raises, prints the exception, how long that
broadcast had been running and how long since the last success; exits 3.
--timeout sets the process-group timeout (torch default for gloo: 30 min).
"""

import argparse
import datetime
import os
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


def link_bytes(ifname):
    base = "/sys/class/net/%s/statistics/" % ifname
    try:
        with open(base + "tx_bytes") as f:
            tx = int(f.read())
        with open(base + "rx_bytes") as f:
            rx = int(f.read())
        return tx, rx
    except OSError:
        return -1, -1


def log(rank, msg):
    print("[%.3f] rank %d: %s" % (time.time(), rank, msg), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rank", type=int, default=int(os.environ.get("NETLAB_HOST", "-1")))
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--master", default=os.environ.get("MASTER_ADDR", "10.77.0.1"))
    p.add_argument("--port", type=int, default=int(os.environ.get("MASTER_PORT", "29500")))
    p.add_argument("--root", type=int, default=0)
    p.add_argument("--sizes", default="1M,16M,64M", help="comma list, K/M/G ok")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--check", type=int, default=1)
    p.add_argument("--ifname", default=os.environ.get("GLOO_SOCKET_IFNAME", "eth0"))
    p.add_argument("--timeout", type=float, default=None,
                   help="process-group timeout in seconds (default: torch's, 30 min)")
    p.add_argument("--mode", choices=["bench", "loop"], default="bench")
    p.add_argument("--duration", type=float, default=60.0, help="loop mode: seconds")
    p.add_argument("--header", action="store_true")
    a = p.parse_args()
    if not 0 <= a.rank < a.world:
        p.error("--rank must be in 0..world-1 (or run under `netlab exec`)")

    os.environ["GLOO_SOCKET_IFNAME"] = a.ifname
    import numpy as np
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    kw = {}
    if a.timeout is not None:
        kw["timeout"] = datetime.timedelta(seconds=a.timeout)
    t_init = time.perf_counter()
    dist.init_process_group("gloo", init_method="tcp://%s:%d" % (a.master, a.port),
                            rank=a.rank, world_size=a.world, **kw)
    rank, world = a.rank, a.world
    if rank == 0:
        print("# gloo_bcast_hosts: world=%d root=%d torch=%s ifname=%s init=%.2fs" %
              (world, a.root, torch.__version__, a.ifname, time.perf_counter() - t_init),
              flush=True)

    sizes = [parse_size(s) for s in a.sizes.split(",") if s]
    maxb = max(sizes)
    buf = torch.zeros(maxb, dtype=torch.uint8)
    bufn = buf.numpy()
    base = np.random.default_rng(12345).integers(0, 256, size=maxb, dtype=np.uint8)

    def fill(n, c, poison):
        np.add(base[:n], np.uint8(c), out=bufn[:n])
        if poison:
            np.invert(bufn[:n], out=bufn[:n])

    def count_wrong(n, c):
        tmp = np.subtract(bufn[:n], base[:n])
        return int(n - np.count_nonzero(tmp == np.uint8(c)))

    if a.mode == "loop":
        n = sizes[0]
        t_end = time.perf_counter() + a.duration
        k, last_ok = 0, time.perf_counter()
        log(rank, "loop: broadcasting %d bytes for %.0f s" % (n, a.duration))
        while time.perf_counter() < t_end:
            t0 = time.perf_counter()
            try:
                dist.broadcast(buf[:n], src=a.root)
            except Exception as e:  # noqa: BLE001 - we want to see any failure
                t1 = time.perf_counter()
                log(rank, "broadcast #%d FAILED after %.2f s (%.2f s since last success): %s: %s"
                    % (k, t1 - t0, t1 - last_ok, type(e).__name__, str(e).replace("\n", " | ")))
                sys.stdout.flush()
                os._exit(3)
            t1 = time.perf_counter()
            last_ok = t1
            log(rank, "broadcast #%d ok in %.3f s" % (k, t1 - t0))
            k += 1
        log(rank, "loop done, %d broadcasts" % k)
        dist.destroy_process_group()
        return 0

    if rank == 0 and a.header:
        print("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong", flush=True)
    it = 0
    for n in sizes:
        wrong = 0
        for _ in range(a.warmup):
            c = (29 * it + 1) % 256
            it += 1
            if a.check:
                fill(n, c, rank != a.root)
            dist.barrier()
            dist.broadcast(buf[:n], src=a.root)
            if a.check:
                wrong += count_wrong(n, c)
        stamps = []
        dist.barrier()                 # warmup traffic has fully arrived
        tx0, rx0 = link_bytes(a.ifname)
        for _ in range(a.iters):
            c = (29 * it + 1) % 256
            it += 1
            if a.check:
                fill(n, c, rank != a.root)
            dist.barrier()
            t0 = time.perf_counter()
            dist.broadcast(buf[:n], src=a.root)
            t1 = time.perf_counter()
            stamps.append((t0, t1))
            if a.check:
                wrong += count_wrong(n, c)
        dist.barrier()                 # every receiver has all its data
        tx1, rx1 = link_bytes(a.ifname)
        # the barriers/gathers below are outside the counted window
        mine = torch.tensor([x for s in stamps for x in s] +
                            [float(tx1 - tx0), float(rx1 - rx0), float(wrong)],
                            dtype=torch.float64)
        allv = [torch.zeros_like(mine) for _ in range(world)]
        dist.all_gather(allv, mine)
        if rank == 0:
            st = [[(float(v[2 * i]), float(v[2 * i + 1])) for i in range(a.iters)] for v in allv]
            per_iter_max = sorted(max(st[r][i][1] - st[r][i][0] for r in range(world))
                                  for i in range(a.iters))
            med = per_iter_max[a.iters // 2] if a.iters % 2 else \
                0.5 * (per_iter_max[a.iters // 2 - 1] + per_iter_max[a.iters // 2])
            wrong_tot = int(sum(float(v[-1]) for v in allv))
            algbw = n / med / 1e9
            print("gloo-hosts,%d,%d,%.3f,%.4f,%.4f,%d" %
                  (world, n, med * 1e6, algbw, algbw, wrong_tot), flush=True)
            # finish time of each rank relative to the root's t0, per iteration
            parts = []
            for r in range(world):
                fin = sorted(st[r][i][1] - st[a.root][i][0] for i in range(a.iters))
                fmed = fin[a.iters // 2]
                tx = float(allv[r][-3]) / a.iters
                rx = float(allv[r][-2]) / a.iters
                bw = ("%.1f Mbit/s" % (n * 8 / fmed / 1e6)) if r != a.root else "root"
                parts.append("r%d done %.1f ms (%s) tx %.2f MiB rx %.2f MiB" %
                             (r, fmed * 1e3, bw, tx / 2**20, rx / 2**20))
            print("# bytes=%d per-rank median: %s" % (n, "; ".join(parts)), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
