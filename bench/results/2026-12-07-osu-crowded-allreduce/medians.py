#!/usr/bin/python3
"""medians.py FILE... - the medians over rounds of run.sh's lines (round ranks mode bytes
usec), one row per (ranks, bytes), one column per mode, and each mode's ratio to plain."""
import statistics
import sys
from collections import defaultdict

cells = defaultdict(list)
modes = []
for path in sys.argv[1:]:
    for line in open(path):
        f = line.split()
        if len(f) != 5:
            continue
        cells[(int(f[1]), int(f[3]), f[2])].append(float(f[4]))
        if f[2] not in modes:
            modes.append(f[2])
print("| ranks | bytes | " + " | ".join(modes) + " | " +
      " | ".join(f"{m} / plain" for m in modes if m != "plain") + " |")
print("|---:|---:|" + "---:|" * (2 * len(modes) - 1))
for n, size in sorted({(k[0], k[1]) for k in cells}):
    med = {m: statistics.median(cells[(n, size, m)]) for m in modes if cells[(n, size, m)]}
    row = [f"{med[m]:.0f}" if m in med else "" for m in modes]
    ratio = [f"{med[m] / med['plain']:.2f}" if m in med and "plain" in med else ""
             for m in modes if m != "plain"]
    print(f"| {n} | {size} | " + " | ".join(row) + " | " + " | ".join(ratio) + " |")
