#!/usr/bin/env python3
"""Medians over the rounds of run.sh's lines: per mode, ranks, collective and size, the max
over ranks and the span (µs) of obc bound (core), obc unbound (none) and Open MPI (ompi).
Usage: summarize.py ROUNDS.txt [IMPL IMPL IMPL] (other names for the three columns, as
../2026-12-03-stranger/ uses: new old ompi)."""
import statistics
import sys
from collections import defaultdict

impls = tuple(sys.argv[2:5]) if len(sys.argv) >= 5 else ("core", "none", "ompi")
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


names = " / ".join(impls)
print(f"| mode | ranks | op | bytes | max: {names} | span: {names} |")
print("|---|---:|---|---:|---|---|")
for key in sorted(k for k in runs if k[3] == impls[0]):
    mode, np_, op, _, b = key
    cells = []
    for i in (0, 1):
        v = [med((mode, np_, op, impl, b), i) for impl in impls]
        cells.append(" / ".join(f"{x:.1f}" for x in v))
    print(f"| {mode} | {np_} | {op} | {b} | {cells[0]} | {cells[1]} |")
