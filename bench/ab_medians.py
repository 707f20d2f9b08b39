#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ab_medians.py - medians over the rounds of an A/B run (bench/ab_libs.sh,
bench/netlab/ab_libs.sh), read from stdin.

Each line is some labels, then an implementation's name, then its cells
`size,usec` (lines starting with # are skipped). A label rN (the round) is
dropped; the other labels and the size make a row, and each implementation's
median over its runs (min-max) is printed in the order the names first came.
"""
import re
import statistics
import sys

rows = {}
for line in sys.stdin:
    if line.startswith("#") or not line.strip():
        continue
    words = line.split()
    cells = [w for w in words if "," in w]
    head = [w for w in words if "," not in w]
    impl, labels = head[-1], [w for w in head[:-1] if not re.fullmatch(r"r\d+", w)]
    for cell in cells:
        size, usec = cell.split(",")
        key = (tuple(labels), int(size))
        rows.setdefault(key, {}).setdefault(impl, []).append(float(usec))
print("# medians: labels, bytes, then per implementation: median usec (min-max)")
for (labels, size), by in rows.items():
    print(" ".join(labels + (str(size),)), "  ".join(
        f"{impl} {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})" for impl, v in by.items()))
