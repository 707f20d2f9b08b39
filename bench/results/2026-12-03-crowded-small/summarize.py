#!/usr/bin/env python3
"""Medians over the rounds of run.sh: per op, metric, ranks and size, Open MPI and obc (µs)."""
import csv, glob, statistics, sys
from collections import defaultdict

d = sys.argv[1]
rows = defaultdict(list)
for path in sorted(glob.glob(f"{d}/*_r*/*_*.csv")):
    op, metric = path.rsplit("/", 1)[1][:-4].rsplit("_", 1)
    for r in csv.DictReader(open(path)):
        impl = "obc" if r["impl"].startswith("obc") else r["impl"]
        rows[(op, metric, int(r["nranks"]), int(r["bytes"]), impl)].append(float(r["usec"]))
print("| op | metric | ranks | bytes | Open MPI (rounds) | obc (rounds) | obc / Open MPI |")
print("|---|---|---:|---:|---|---|---:|")
for key in sorted(k for k in rows if k[4] == "openmpi"):
    o = rows[key]
    b = rows.get(key[:4] + ("obc",), [])
    if not b:
        continue
    ratio = statistics.median(b) / statistics.median(o)
    fmt = lambda v: " / ".join(f"{x:.1f}" for x in v)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {fmt(o)} | {fmt(b)} | {ratio:.2f} |")
