# bench/results/2026-12-03-copy-distance/numpy_flat_view.py - run: OBC_LIBRARY=path/to/libobc.so PYTHONPATH=python build/bin/obcrun -n 2 /usr/bin/python3 THIS
# A flat parameter buffer: every rank receives a 4 MiB float32 tensor's worth into a view at
# element offset 4 of its flat buffer; the root sends from a fresh array. Median of 30 calls.
import time, statistics, numpy as np, obc
obc.init()
rank = obc.get_rank()
n = 1 << 20
flat = np.zeros(n + 64, np.float32)
view = flat[4:4 + n] if rank != 0 else np.arange(n, dtype=np.float32)
ts = []
for i in range(33):
    obc.barrier()
    t = time.perf_counter()
    obc.broadcast(view, src=0)
    ts.append(time.perf_counter() - t)
ok = bool(np.array_equal(view, np.arange(n, dtype=np.float32)))
ts = ts[3:]
if rank == 1:
    print(f"rank1 view at +{view.ctypes.data % 4096} (the root's array at +16), 4 MiB broadcast median {statistics.median(ts)*1e6:.0f} us ok={ok}")
obc.destroy()
