#!/usr/bin/env python3
"""summarize.py ROUNDS: medians over rounds of run.sh's lines
(mode,op,impl,nranks,bytes,usec,...), obc against Open MPI ("mpi"), µs."""
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) < 6:
        continue
    mode, op, impl, np, nbytes, usec = f[:6]
    runs[(mode, op, int(np), int(nbytes), impl)].append(float(usec))
print("| mode | op | ranks | bytes | obc | Open MPI | obc / Open MPI | rounds (obc; Open MPI) |")
print("|---|---|---:|---:|---:|---:|---:|---|")
for key in sorted({k[:4] for k in runs}):
    obc, mpi = runs.get(key + ("obc",), []), runs.get(key + ("mpi",), [])
    if not obc or not mpi:
        continue
    a, b = statistics.median(obc), statistics.median(mpi)
    each = " ".join(f"{v:.1f}" for v in obc) + "; " + " ".join(f"{v:.1f}" for v in mpi)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {a:.1f} | {b:.1f} | {a / b:.2f} | {each} |")
