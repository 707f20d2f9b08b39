#!/usr/bin/env python3
"""Medians over the rounds of run.sh's lines: per mode, ranks, collective and size, the max
over ranks and the span (µs) of obc bound (core), obc unbound (none) and Open MPI (ompi)."""
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)  # (mode, np, op, impl, bytes) -> [(maxrank, span)]
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 6:
        continue
    mode, np_, op, impl = f[0], int(f[2]), f[3], f[4]
    for item in f[5:]:
        b, m, s = item.split(":")
        runs[(mode, np_, op, impl, int(b))].append((float(m), float(s)))


def med(key, i):
    v = [x[i] for x in runs.get(key, [])]
    return statistics.median(v) if v else float("nan")


print("| mode | ranks | op | bytes | max: core / none / Open MPI | span: core / none / Open MPI |")
print("|---|---:|---|---:|---|---|")
for key in sorted(k for k in runs if k[3] == "core"):
    mode, np_, op, _, b = key
    cells = []
    for i in (0, 1):
        v = [med((mode, np_, op, impl, b), i) for impl in ("core", "none", "ompi")]
        cells.append(" / ".join(f"{x:.1f}" for x in v))
    print(f"| {mode} | {np_} | {op} | {b} | {cells[0]} | {cells[1]} |")
