#!/usr/bin/env python3
"""pool.py - crowded waits, 2 ms of yielding (old) against 20 us (new): medians over
the 21 launches of run1-3.csv (run.sh output), per row, with Open MPI's, then the
geometric mean of new / old and, for a few rows, every launch (the modes)."""
import csv, os, statistics, sys
HERE = os.path.dirname(os.path.abspath(__file__))
from collections import defaultdict
# run1, run2: the default was 2 ms and OBC_YIELD_NS=20000 the candidate;
# run3: the default is 20 us and OBC_YIELD_NS=2000000 the old value.
spec = [(HERE + "/run1.csv", "obc_ydefault", "obc_y20000"),
        (HERE + "/run2.csv", "obc_ydefault", "obc_y20000"),
        (HERE + "/run3.csv", "obc_y2000000", "obc_ydefault")]
d = defaultdict(list)
for f, old, new in spec:
    for r, impl, op, m, np_, b, us in csv.reader(open(f)):
        k = (op, m, int(np_), int(b))
        lab = {old: "old", new: "new", "openmpi": "openmpi"}.get(impl)
        if lab:
            d[k + (lab,)].append(float(us))
ratios = []
print("| collective | metric | ranks | bytes | Open MPI | 2 ms (old) | 20 us (new) | new / old |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for k in sorted({k[:4] for k in d}):
    o = statistics.median(d[k + ("old",)]); n = statistics.median(d[k + ("new",)]); m = statistics.median(d[k + ("openmpi",)])
    ratios.append(n / o)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {m:.2f} | {o:.2f} ({o/m:.2f}) | {n:.2f} ({n/m:.2f}) | {n/o:.2f} |")
print(f"\nrows {len(ratios)}, geometric mean of new / old {statistics.geometric_mean(ratios):.3f}, "
      f"new worse by >10%: {sum(r > 1.1 for r in ratios)}, better by >10%: {sum(r < 1/1.1 for r in ratios)}")
print()
for k in [("broadcast","span",4,8),("broadcast","span",4,512),("broadcast","span",4,4096),("broadcast","span",4,32768),("allreduce","maxrank",4,8),("allreduce","span",4,8)]:
    print(k, "old", sorted(round(x,1) for x in d[k+("old",)]), "\n   new", sorted(round(x,1) for x in d[k+("new",)]), "\n   ompi", sorted(round(x,1) for x in d[k+("openmpi",)]))
