"""Medians over the rounds of run.sh's CSVs: python3 summarize.py DIR"""
import collections
import csv
import glob
import statistics
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
for busy in (0, 1):
    for metric in ("maxrank", "span"):
        rows = collections.defaultdict(list)
        for name in glob.glob(f"{top}/r*-U{busy}/broadcast_{metric}.csv"):
            with open(name) as f:
                for row in csv.reader(l for l in f if not l.startswith("#")):
                    if row[0] != "impl":
                        rows[(int(row[2]), row[0])].append(float(row[3]))
        print(f"\n{'busy' if busy else 'idle'}, {metric}: median usec (every round)\n")
        print("| bytes | impl | median | rounds |\n|---:|---|---:|---|")
        for (nbytes, impl), v in sorted(rows.items()):
            print(f"| {nbytes} | {impl} | {statistics.median(v):.2f} | "
                  f"{' '.join('%.1f' % x for x in v)} |")
