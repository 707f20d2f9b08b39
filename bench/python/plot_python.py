#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""plot_python.py RESULTS_DIR OUT_DIR - bar charts of bench/python/run.sh's
CSVs: OUT_DIR/python_sync_module.png (time and extra memory per
implementation, median over launches) and OUT_DIR/python_train_step.png
(median step time per implementation and rank count)."""
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def by(rows_, key, value):
    out = {}
    for r in rows_:
        out.setdefault(key(r), []).append(float(r[value]))
    return {k: statistics.median(v) for k, v in out.items()}


def main():
    res, out = sys.argv[1], sys.argv[2]
    sync = rows(os.path.join(res, "sync_module.csv"))
    impls = list(dict.fromkeys(r["impl"] for r in sync))
    secs = by(sync, lambda r: r["impl"], "median_s")
    mem = by(sync, lambda r: r["impl"], "extra_rss_MiB")
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.bar(impls, [secs[i] for i in impls], color=["tab:green", "tab:blue", "tab:cyan"])
    a.set_ylabel("seconds (slowest rank, median)")
    a.set_title(f"sync_module, {sync[0]['params']} params, {sync[0]['nranks']} ranks")
    b.bar(impls, [mem[i] for i in impls], color=["tab:green", "tab:blue", "tab:cyan"])
    b.set_ylabel("extra peak RSS per rank, MiB (largest rank)")
    b.set_title("memory added by the sync")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "python_sync_module.png"), dpi=100)

    step = rows(os.path.join(res, "train_step.csv"))
    t = by(step, lambda r: (r["impl"], r["nranks"], r["batch"]), "median_ms")
    nps = sorted({r["nranks"] for r in step}, key=int)
    batches = sorted({r["batch"] for r in step}, key=int, reverse=True)
    simpls = list(dict.fromkeys(r["impl"] for r in step))
    fig, axes = plt.subplots(1, len(batches), figsize=(6 * len(batches), 4), squeeze=False)
    w = 0.8 / len(simpls)
    for ax, batch in zip(axes[0], batches):
        for k, impl in enumerate(simpls):
            ax.bar([i + k * w for i in range(len(nps))], [t[(impl, n, batch)] for n in nps], w,
                   label=impl)
        ax.set_xticks([i + w * (len(simpls) - 1) / 2 for i in range(len(nps))])
        ax.set_xticklabels([f"{n} ranks" for n in nps])
        ax.set_ylabel("ms per step (slowest rank, median)")
        ax.set_title(f"training step, {step[0]['params']} params, batch {batch}/rank")
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "python_train_step.png"), dpi=100)


if __name__ == "__main__":
    main()
