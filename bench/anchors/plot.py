#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Kept copy of the design's anchors/plot.py (../shared), unchanged but for these three lines,
# so that bench/ runs from a fresh clone; keep its CSV format identical to obc-perf --csv.
"""plot.py - turn broadcast-benchmark CSV into a PNG and markdown tables.

Run with Debian's interpreter (/usr/bin/python3, has python3-matplotlib).

Input: one or more CSV files with lines
    impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
Lines starting with '#' and repeated header lines are ignored.  Rows whose
impl starts with "memcpy_" (memcpy_limit.c) or is shm_poll / pipe_block
(latency_limit.c) are reference rows; every other impl is a broadcast
implementation and is plotted per NP (nranks).  If the same
(impl, nranks, bytes) appears several times the median usec is used.
For broadcast rows busbw is taken as bytes/usec (busbw == algbw for
broadcast), so rounding of tiny bandwidths in the CSV does not matter.

Output:
  --png FILE   one column per NP; top row busbw (GB/s) vs message size,
               bottom row time (usec) vs size; log-log.  Reference lines:
               "memcpy bound": algbw ceiling for NP ranks on this machine,
                   min(B_2t_split(n), B_2t_each_aggregate(n) / (NP-1)),
                   i.e. NP-1 receivers must each copy n bytes, 2 cores;
                   with several memcpy variants (memcpy_*, memcpy_nt_*)
                   the best one is used
               "memcpy 1 thread": one single-threaded copy of n bytes
                   (best variant)
               "shm poll latency": one-way cache-line latency between 2
                   processes (bottom row)
  --md FILE    markdown: summary table per impl and NP (8 B time, 64 MiB
               busbw, peak busbw, % of memcpy bound, wrong bytes) and a full
               table per NP (usec and busbw per impl); '-' = stdout
  --sizes LIST restrict the full tables to these sizes (e.g. 8,1K,64K,1M,64M)
"""

import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict

REF_PREFIX = "memcpy_"
LAT_IMPLS = ("shm_poll", "pipe_block")


def parse_size(s):
    s = s.strip()
    mult = 1
    if s and s[-1] in "kK":
        mult, s = 1 << 10, s[:-1]
    elif s and s[-1] in "mM":
        mult, s = 1 << 20, s[:-1]
    elif s and s[-1] in "gG":
        mult, s = 1 << 30, s[:-1]
    return int(float(s) * mult)


def human(n):
    for unit, sh in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= (1 << sh) and n % (1 << sh) == 0:
            return "%d %s" % (n >> sh, unit)
    return "%d B" % n


def load(paths):
    acc = defaultdict(list)  # (impl, nranks, bytes) -> [(usec, algbw, busbw, wrong)]
    for p in paths:
        f = sys.stdin if p == "-" else open(p)
        for row in csv.reader(line for line in f if line.strip() and not line.startswith("#")):
            if not row or row[0] == "impl" or len(row) < 7:
                continue
            try:
                key = (row[0], int(row[1]), int(row[2]))
                acc[key].append((float(row[3]), float(row[4]), float(row[5]), int(row[6])))
            except ValueError:
                continue
        if f is not sys.stdin:
            f.close()
    data = {}
    for key, vals in acc.items():
        usec = statistics.median(v[0] for v in vals)
        algbw = statistics.median(v[1] for v in vals)
        busbw = statistics.median(v[2] for v in vals)
        wrong = sum(v[3] for v in vals)
        data[key] = dict(usec=usec, algbw=algbw, busbw=busbw, wrong=wrong, n=len(vals))
    return data


def split(data):
    bcast = defaultdict(dict)   # (impl, np) -> {bytes: rec}
    ref = defaultdict(dict)     # impl -> {bytes: rec}
    for (impl, np_, nbytes), rec in data.items():
        if impl.startswith(REF_PREFIX) or impl in LAT_IMPLS:
            ref[impl][nbytes] = rec
        else:
            # broadcast: busbw == algbw == bytes/time; recomputed from usec so
            # that rounding of tiny bandwidths in the CSV does not matter
            if rec["usec"] > 0:
                rec = dict(rec, busbw=nbytes / rec["usec"] / 1e3)
            bcast[(impl, np_)][nbytes] = rec
    return bcast, ref


def memcpy_families(ref):
    """label -> {mode: {bytes: rec}} for memcpy_limit rows (<label>_<mode>)."""
    fam = defaultdict(dict)
    for impl, d in ref.items():
        for mode in ("1t", "2t_split", "2t_each"):
            if impl.startswith(REF_PREFIX) and impl.endswith("_" + mode):
                fam[impl[:-len(mode) - 1]][mode] = d
    return fam


def memcpy_bound(ref, np_):
    """bytes -> algbw ceiling (GB/s) for a broadcast to np_ ranks.

    Per memcpy variant (label): min(B_2t_split(n), B_2t_each_aggregate(n) /
    (np_-1)); the best variant wins (e.g. glibc default vs non-temporal)."""
    out = {}
    receivers = max(1, np_ - 1)
    for modes in memcpy_families(ref).values():
        split_, each = modes.get("2t_split", {}), modes.get("2t_each", {})
        for n in set(split_) & set(each):
            b = min(split_[n]["algbw"], each[n]["busbw"] / receivers)
            out[n] = max(out.get(n, 0.0), b)
    return out


def memcpy_1t_best(ref):
    out = {}
    for modes in memcpy_families(ref).values():
        for n, r in modes.get("1t", {}).items():
            out[n] = max(out.get(n, 0.0), r["algbw"])
    return out


def impl_order(impls):
    pref = ["openmpi", "openmpi_yield", "mpich", "gloo"]
    return sorted(impls, key=lambda x: (pref.index(x) if x in pref else len(pref), x))


def make_png(bcast, ref, path, title, metric="max-over-ranks time"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator

    nps = sorted({np_ for (_, np_) in bcast})
    impls = impl_order({impl for (impl, _) in bcast})
    if not nps:
        print("plot.py: no broadcast rows, nothing to plot", file=sys.stderr)
        return
    colors = {}
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
               "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]
    for i, impl in enumerate(impls):
        colors[impl] = palette[i % len(palette)]
    markers = "osD^v<>ph"

    fig, axes = plt.subplots(2, len(nps), figsize=(6.2 * len(nps), 10), squeeze=False)
    size_fmt = FuncFormatter(lambda x, _: human(int(round(x))) if x >= 1 else "")

    all_sizes = sorted({n for d in bcast.values() for n in d})
    xmin, xmax = (all_sizes[0], all_sizes[-1]) if all_sizes else (8, 1 << 28)

    for col, np_ in enumerate(nps):
        ax_bw, ax_t = axes[0][col], axes[1][col]
        for i, impl in enumerate(impls):
            d = bcast.get((impl, np_))
            if not d:
                continue
            xs = sorted(d)
            kw = dict(color=colors[impl], marker=markers[i % len(markers)],
                      markersize=3.5, linewidth=1.6, label=impl)
            ax_bw.plot(xs, [max(d[n]["busbw"], 1e-6) for n in xs], **kw)
            ax_t.plot(xs, [d[n]["usec"] for n in xs], **kw)
            bad = [n for n in xs if d[n]["wrong"]]
            if bad:
                ax_bw.plot(bad, [max(d[n]["busbw"], 1e-6) for n in bad], "x",
                           color="red", markersize=9, label="%s: WRONG DATA" % impl)
        bound = memcpy_bound(ref, np_)
        if bound:
            xs = sorted(bound)
            ax_bw.plot(xs, [bound[n] for n in xs], "--", color="black", linewidth=1.4,
                       label="memcpy bound (%d receivers, 2 cores)" % (np_ - 1))
            ax_t.plot(xs, [n / (bound[n] * 1e3) for n in xs], "--", color="black",
                      linewidth=1.4, label="memcpy bound")
        one = memcpy_1t_best(ref)
        if one:
            xs = sorted(one)
            ax_bw.plot(xs, [one[n] for n in xs], ":", color="gray",
                       linewidth=1.4, label="memcpy 1 thread (1 copy)")
        lat = ref.get("shm_poll", {}).get(8)
        if lat:
            ax_t.axhline(lat["usec"], color="gray", linestyle=":", linewidth=1.4,
                         label="shm poll 1-way latency %.2f us" % lat["usec"])
        blk = ref.get("pipe_block", {}).get(8)
        if blk:
            ax_t.axhline(blk["usec"], color="brown", linestyle=":", linewidth=1.2,
                         label="pipe (sleep/wake) 1-way %.0f us" % blk["usec"])

        for ax in (ax_bw, ax_t):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlim(xmin / 1.3, max(xmax, 1) * 1.3)
            ax.xaxis.set_major_locator(LogLocator(base=4))
            ax.xaxis.set_major_formatter(size_fmt)
            ax.tick_params(axis="x", labelrotation=45, labelsize=8)
            ax.grid(True, which="major", alpha=0.4)
            ax.grid(True, which="minor", alpha=0.12)
            ax.set_xlabel("message size")
        ax_bw.set_title("broadcast, NP=%d: bus bandwidth" % np_)
        ax_bw.set_ylabel("busbw = algbw (GB/s, higher is better)")
        ax_t.set_title("broadcast, NP=%d: time per call" % np_)
        ax_t.set_ylabel("usec (median of %s, lower is better)" % metric)
        ax_bw.legend(fontsize=8, loc="lower right")
        ax_t.legend(fontsize=8, loc="lower right")

    if title:
        fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("wrote %s" % path, file=sys.stderr)


def fmt_us(v):
    if v is None:
        return "-"
    if v >= 1e5:
        return "%.0f" % v
    if v >= 100:
        return "%.1f" % v
    return "%.2f" % v


def fmt_bw(v):
    if v is None:
        return "-"
    if v >= 10:
        return "%.1f" % v
    if v >= 0.01:
        return "%.2f" % v
    return "%.4f" % v


def make_md(bcast, ref, out, sizes_filter):
    nps = sorted({np_ for (_, np_) in bcast})
    impls = impl_order({impl for (impl, _) in bcast})
    w = out.write

    # reference summary
    if ref:
        w("### Physical limits (reference rows)\n\n")
        w("| probe | size | usec | GB/s (per copy) | GB/s (aggregate) |\n")
        w("|---|---:|---:|---:|---:|\n")
        for impl in sorted(ref):
            d = ref[impl]
            for n in sorted(d):
                if impl.startswith(REF_PREFIX) and n not in (65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30):
                    continue
                r = d[n]
                w("| %s | %s | %s | %s | %s |\n" % (impl, human(n), fmt_us(r["usec"]),
                                                   fmt_bw(r["algbw"]), fmt_bw(r["busbw"])))
        w("\n")

    w("### Summary per anchor and NP\n\n")
    w("| impl | NP | time @ 8 B (us) | busbw @ 64 MiB (GB/s) | memcpy bound @ 64 MiB | "
      "% of bound | peak busbw (GB/s) @ size | wrong bytes |\n")
    w("|---|---:|---:|---:|---:|---:|---:|---:|\n")
    for np_ in nps:
        bound = memcpy_bound(ref, np_)
        for impl in impls:
            d = bcast.get((impl, np_))
            if not d:
                continue
            r8 = d.get(8)
            r64 = d.get(64 << 20)
            b64 = bound.get(64 << 20)
            peak_n = max(d, key=lambda n: d[n]["busbw"])
            pct = ("%.0f%%" % (100 * r64["busbw"] / b64)) if (r64 and b64) else "-"
            w("| %s | %d | %s | %s | %s | %s | %s @ %s | %d |\n" % (
                impl, np_, fmt_us(r8["usec"] if r8 else None),
                fmt_bw(r64["busbw"] if r64 else None), fmt_bw(b64), pct,
                fmt_bw(d[peak_n]["busbw"]), human(peak_n),
                sum(r["wrong"] for r in d.values())))
    w("\n")

    for np_ in nps:
        present = [i for i in impls if (i, np_) in bcast]
        sizes = sorted({n for i in present for n in bcast[(i, np_)]})
        if sizes_filter:
            sizes = [n for n in sizes if n in sizes_filter]
        bound = memcpy_bound(ref, np_)
        w("### NP=%d: time (usec) and busbw (GB/s) per message size\n\n" % np_)
        cols = ["size"] + ["%s us" % i for i in present] + ["%s GB/s" % i for i in present]
        if bound:
            cols.append("memcpy bound GB/s")
        w("| " + " | ".join(cols) + " |\n")
        w("|---" + "|---:" * (len(cols) - 1) + "|\n")
        for n in sizes:
            cells = [human(n)]
            for i in present:
                r = bcast[(i, np_)].get(n)
                cells.append(fmt_us(r["usec"]) if r else "-")
            for i in present:
                r = bcast[(i, np_)].get(n)
                cells.append(fmt_bw(r["busbw"]) if r else "-")
            if bound:
                cells.append(fmt_bw(bound.get(n)))
            w("| " + " | ".join(cells) + " |\n")
        w("\n")


def main():
    p = argparse.ArgumentParser(description="plot broadcast CSV (busbw vs size)")
    p.add_argument("csv", nargs="+", help="CSV file(s), '-' for stdin")
    p.add_argument("--png", help="output PNG path")
    p.add_argument("--md", help="output markdown path ('-' = stdout)")
    p.add_argument("--title", default="", help="figure title")
    p.add_argument("--sizes", default="", help="comma list of sizes for the full tables")
    p.add_argument("--metric", default="max-over-ranks time",
                   help="what usec means, for the axis label (e.g. 'span')")
    a = p.parse_args()
    data = load(a.csv)
    bcast, ref = split(data)
    if a.png:
        make_png(bcast, ref, a.png, a.title, a.metric)
    if a.md:
        sizes = {parse_size(s) for s in a.sizes.split(",") if s.strip()} if a.sizes else None
        if a.md == "-":
            make_md(bcast, ref, sys.stdout, sizes)
        else:
            with open(a.md, "w") as f:
                make_md(bcast, ref, f, sizes)
    if not a.png and not a.md:
        p.error("nothing to do: give --png and/or --md")


if __name__ == "__main__":
    main()
