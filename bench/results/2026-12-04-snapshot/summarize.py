#!/usr/bin/env python3
"""summarize.py OUT: medians over rounds of run.sh's runs (OUT/rR-CASE/OP_maxrank.csv),
obc against Open MPI, µs, max over ranks; each round's value in the last column."""
import csv
import glob
import os
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)  # (case, nranks, bytes, impl) -> [usec per round]
for path in sorted(glob.glob(os.path.join(sys.argv[1], "r*-*", "*_maxrank.csv"))):
    case = os.path.basename(os.path.dirname(path)).split("-", 1)[1]
    for row in csv.DictReader(open(path)):
        impl = "mpi" if row["impl"] == "openmpi" else "obc"
        runs[(case, int(row["nranks"]), int(row["bytes"]), impl)].append(float(row["usec"]))
print("| case | ranks | bytes | obc | Open MPI | obc / Open MPI | rounds (obc; Open MPI) |")
print("|---|---:|---:|---:|---:|---:|---|")
for key in sorted({k[:3] for k in runs}):
    obc, mpi = runs.get(key + ("obc",), []), runs.get(key + ("mpi",), [])
    if not obc or not mpi:
        continue
    a, b = statistics.median(obc), statistics.median(mpi)
    each = " ".join(f"{v:.1f}" for v in obc) + "; " + " ".join(f"{v:.1f}" for v in mpi)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {a:.1f} | {b:.1f} | {a / b:.2f} | {each} |")
