#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pool this directory's launches of a 20 us and a 200 us crowded yield, which the sweeps
ran under different labels (the default was 20 us, the interleaved set named both), into
one tree of rounds under /tmp/obc-yield-pool, then print bench/rounds.py's medians for it
and the geometric mean of y200 / y20 over each table's rows.

Usage (from the repository root): python3 bench/results/2026-12-06-crowded-yield-again/pool.py
"""
import glob
import math
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = "/tmp/obc-yield-pool"
SOURCES = {  # kind: [(set, {label in its CSVs: pooled label})]
    "idle": [
        ("idle-20-200-2ms", {"obc_inplace": "y20", "obc_inplace+OBC_YIELD_NS=200000": "y200"}),
        ("interleaved-idle", {"obc_inplace+OBC_YIELD_NS=20000": "y20",
                              "obc_inplace+OBC_YIELD_NS=200000": "y200"}),
    ],
    "busy": [
        ("busy-20-200", {"obc_inplace": "y20", "obc_inplace+OBC_YIELD_NS=200000": "y200"}),
        ("interleaved-busy", {"obc_inplace+OBC_YIELD_NS=20000": "y20",
                              "obc_inplace+OBC_YIELD_NS=200000": "y200"}),
    ],
}


def relabel(src, dst, labels):
    with open(src) as f, open(dst, "w") as out:
        for i, line in enumerate(f):
            impl = line.split(",", 1)[0]
            if i == 0 or impl == "openmpi":
                out.write(line)
            elif impl in labels:
                out.write(labels[impl] + line[len(impl):])


def geomeans(text):
    """y200 / y20 over the rows of each table rounds.py printed."""
    lines, k = text.splitlines(), 0
    while k < len(lines):
        if "medians over rounds" not in lines[k]:
            k += 1
            continue
        title = lines[k].split(":")[0]
        while not lines[k].startswith("| ranks"):
            k += 1
        hdr = [h.strip() for h in lines[k].strip().strip("|").split("|")]
        k += 2
        ratios = []
        while k < len(lines) and lines[k].startswith("|"):
            row = [x.strip() for x in lines[k].strip().strip("|").split("|")]
            ratios.append(float(row[hdr.index("y200")]) / float(row[hdr.index("y20")]))
            k += 1
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{title}: y200 / y20 geometric mean {g:.3f} over {len(ratios)} rows "
              f"({sum(r < 0.9 for r in ratios)} rows faster by >10%, "
              f"{sum(r > 1.1 for r in ratios)} slower)")


shutil.rmtree(OUT, ignore_errors=True)
for kind, sets in SOURCES.items():
    for op in ("allreduce", "broadcast"):
        n = 0
        for name, labels in sets:
            for run in sorted(glob.glob(os.path.join(HERE, name, op, "r*"))):
                n += 1
                dst = os.path.join(OUT, kind, op, f"r{n}")
                os.makedirs(dst)
                for metric in ("maxrank", "span"):
                    relabel(os.path.join(run, f"{op}_{metric}.csv"),
                            os.path.join(dst, f"{op}_{metric}.csv"), labels)
        top = os.path.join(OUT, kind, op)
        text = subprocess.run(["python3", "bench/rounds.py", top], capture_output=True,
                              text=True, check=True).stdout
        print(f"## {kind}, {op}: {n} launches of each setting\n{text}")
        geomeans(text)
        print()
