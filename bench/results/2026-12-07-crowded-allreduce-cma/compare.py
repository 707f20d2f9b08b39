# SPDX-License-Identifier: MIT
"""compare.py OUTDIR: for every (ranks, bytes) of run.sh's CSVs, each variant's median over
rounds in microseconds, its ratio to Open MPI's median, and the rounds' values."""
import csv
import glob
import os
import statistics as st
import sys

rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    name = os.path.basename(path)[:-4]
    for r in csv.reader(open(path)):
        if len(r) < 5 or not r[2].isdigit():
            continue
        rows.setdefault((int(r[2]), int(r[3])), {}).setdefault(name, []).append(float(r[4]))
names = sorted({n for v in rows.values() for n in v})
print("| ranks | bytes | " + " | ".join(names) + " |")
print("|---:|---:|" + "---|" * len(names))
for key in sorted(rows):
    v = rows[key]
    base = st.median(v["openmpi"]) if "openmpi" in v else float("nan")
    cells = []
    for n in names:
        xs = v.get(n, [])
        if not xs:
            cells.append("-")
            continue
        m = st.median(xs)
        cells.append(f"{m:.0f} ({m / base:.2f}) [{' '.join(f'{x:.0f}' for x in xs)}]")
    print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
