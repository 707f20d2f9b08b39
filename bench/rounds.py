#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rounds.py TOP [TOP ...] - medians over rounds of bench/run_bench.sh runs.

Each TOP holds one run_bench.sh results dir per round and case, named
r<ROUND> or r<ROUND>-<CASE> (e.g. r3, r2-U1, r1-busy-broadcast). Every
<OP>_maxrank.csv and <OP>_span.csv in them is read; for each case, collective
and metric one markdown table is printed: per rank count and size, the median
usec of every implementation over the rounds, each one's ratio to Open MPI's
median (below 1: faster), and every round's value.
"""
import csv
import glob
import os
import re
import statistics
import sys
from collections import defaultdict

REFERENCE = "openmpi"


def read_rounds(tops):
    """(case, op, metric) -> (nranks, bytes) -> impl -> [usec per round]"""
    runs = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for top in tops:
        for run in sorted(glob.glob(os.path.join(top, "r*"))):
            name = os.path.basename(run)
            m = re.fullmatch(r"r\d+(?:-(.*))?", name)
            if m is None or not os.path.isdir(run):
                continue
            case = m.group(1) or ""
            for path in sorted(glob.glob(os.path.join(run, "*_*.csv"))):
                op, metric = os.path.basename(path)[:-4].rsplit("_", 1)
                with open(path) as f:
                    for row in csv.DictReader(line for line in f if not line.startswith("#")):
                        size = (int(row["nranks"]), int(row["bytes"]))
                        runs[(case, op, metric)][size][row["impl"]].append(float(row["usec"]))
    return runs


def print_table(title, sizes):
    impls = sorted({i for by_impl in sizes.values() for i in by_impl},
                   key=lambda i: (i != REFERENCE, i))
    others = [i for i in impls if i != REFERENCE]
    print(f"\n{title}: medians over rounds, µs\n")
    head = ["ranks", "bytes"] + impls + [f"{i} / {REFERENCE}" for i in others] + ["rounds"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * (len(head) - 1) + "---|")
    for (nranks, nbytes), by_impl in sorted(sizes.items()):
        med = {i: statistics.median(v) for i, v in by_impl.items()}
        cells = [str(nranks), str(nbytes)]
        cells += [f"{med[i]:.2f}" if i in med else "-" for i in impls]
        ref = med.get(REFERENCE)
        cells += [f"{med[i] / ref:.2f}" if i in med and ref else "-" for i in others]
        cells.append("; ".join(" ".join(f"{x:.1f}" for x in by_impl[i]) for i in impls
                               if i in by_impl))
        print("| " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = read_rounds(sys.argv[1:])
    for (case, op, metric), sizes in sorted(runs.items()):
        title = f"{op}, {metric}" + (f", {case}" if case else "")
        print_table(title, sizes)


if __name__ == "__main__":
    main()
