#!/usr/bin/env python3
"""medians.py RUN.csv - one run of run.sh: per row, the median over its rounds of every
variant and of Open MPI, with the ratio to Open MPI (busy_summary.md: busy_run.csv)."""
import csv, statistics, sys
from collections import defaultdict
d = defaultdict(list)
for row in csv.reader(open(sys.argv[1])):
    r, impl, op, m, np_, b, us = row
    d[(op, m, int(np_), int(b), impl)].append(float(us))
impls = ["openmpi"] + sorted({k[4] for k in d if k[4] != "openmpi"}, key=lambda s: (s != "obc_ydefault", int(s[5:]) if s[5:].isdigit() else 0))
for op in ["allreduce", "broadcast"]:
    for m in ["maxrank", "span"]:
        print(f"\n{op}, {m}: medians over rounds, us (ratio to Open MPI)\n")
        print("| ranks | bytes | " + " | ".join(impls) + " |")
        print("|---:|---:|" + "---:|" * len(impls))
        keys = sorted({(k[2], k[3]) for k in d if k[0] == op and k[1] == m})
        for np_, b in keys:
            ref = statistics.median(d[(op, m, np_, b, "openmpi")])
            cells = []
            for i in impls:
                v = d.get((op, m, np_, b, i))
                if not v:
                    cells.append("-"); continue
                med = statistics.median(v)
                cells.append(f"{med:.2f}" if i == "openmpi" else f"{med:.2f} ({med/ref:.2f})")
            print(f"| {np_} | {b} | " + " | ".join(cells) + " |")
