#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""plot_multihost.py - plot and tables of bench/netlab/run.sh's results.

Usage: /usr/bin/python3 bench/netlab/plot_multihost.py RESULTS_DIR [--png FILE] [--md FILE]

Reads RESULTS_DIR/{bw,latency,wire,steps}.csv. The PNG has one panel per bandwidth
configuration: per-receiver bandwidth (algbw, bytes / slowest rank's time, in Mbit/s)
against the message size for each implementation, with the link rate and its TCP payload
rate (0.956 x rate, iperf3 on netlab at 1gbit) drawn as lines. The markdown has the
tables of docs/perf/multihost.md: bandwidth and % of the payload rate, the targets, root
independence, bytes on the wire per host, latency and its bound, machine busy %.
Needs matplotlib for --png only (Debian's /usr/bin/python3 has it).
"""
import argparse
import csv
import math
import os
import statistics
import sys

PAYLOAD = 0.956  # TCP payload rate / link rate (iperf3 on netlab, 1gbit: 956 Mbit/s)
SERIES = [  # impl label in bw.csv, legend, style
    ("obc", "obc, 1 rank/host", dict(color="C0", marker="o", lw=2)),
    ("obc_2rph", "obc, 2 ranks/host", dict(color="C0", marker="s", ls="--", lw=1.5)),
    ("gloo", "Gloo (torch 1 proc/host)", dict(color="C1", marker="^")),
    ("openmpi", "Open MPI default", dict(color="C2", marker="v")),
    ("openmpi_pipeline", "Open MPI pipeline 1 MiB", dict(color="C2", marker="D", ls=":")),
]
TARGET = {"4x1gbit": 90.0, "8x500mbit": 85.0}  # % of the payload rate at 64 MiB (issue #4)


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def mbit(row):
    return float(row["algbw_GBps"]) * 8e3  # GB/s (10^9 B/s) -> Mbit/s


def size_label(b):
    b = int(b)
    return "%d MiB" % (b >> 20) if b >= 1 << 20 else "%d B" % b


def configs(bw):
    seen = []
    for r in bw:
        if r["config"] not in seen and int(r["rate_mbit"]) > 0:
            seen.append(r["config"])
    return seen


def cell(bw, cfg, impl, nbytes):
    """Median Mbit/s over the rows of (cfg, impl, bytes) and the config's rate."""
    rows = [r for r in bw if r["config"] == cfg and r["impl"] == impl and int(r["bytes"]) == nbytes]
    if not rows:
        return None, None
    return statistics.median(mbit(r) for r in rows), int(rows[0]["rate_mbit"])


def bandwidth_tables(bw, out):
    for cfg in configs(bw):
        rows = [r for r in bw if r["config"] == cfg]
        rate = int(rows[0]["rate_mbit"])
        sizes = sorted({int(r["bytes"]) for r in rows if r["impl"] in dict((s[0], 1) for s in SERIES)})
        out.append("**%s hosts at %d Mbit/s** (payload rate %.0f Mbit/s): Mbit/s per receiver (%% of payload rate)\n"
                   % (rows[0]["hosts"], rate, PAYLOAD * rate))
        out.append("| implementation | " + " | ".join(size_label(s) for s in sizes) + " |")
        out.append("|---|" + "---:|" * len(sizes))
        for impl, legend, _ in SERIES:
            cells = []
            for s in sizes:
                v, _ = cell(bw, cfg, impl, s)
                cells.append("–" if v is None else "%.0f (%.0f%%)" % (v, 100 * v / (PAYLOAD * rate)))
            if any(c != "–" for c in cells):
                out.append("| %s | %s |" % (legend, " | ".join(cells)))
        out.append("")


def target_table(bw, out):
    out.append("| configuration | obc at 64 MiB, 1 rank/host | target | met | 2 ranks/host | 2 vs 1 rank/host |")
    out.append("|---|---:|---:|---|---:|---:|")
    for cfg in configs(bw):
        v1, rate = cell(bw, cfg, "obc", 64 << 20)
        v2, _ = cell(bw, cfg, "obc_2rph", 64 << 20)
        if v1 is None:
            continue
        p1 = 100 * v1 / (PAYLOAD * rate)
        t = TARGET.get(cfg)
        out.append("| %s | %.0f Mbit/s = %.1f%% | %s | %s | %s | %s |" % (
            cfg, v1, p1, "≥ %.0f%%" % t if t else "–", ("yes" if p1 >= t else "**no**") if t else "–",
            "–" if v2 is None else "%.0f Mbit/s = %.1f%%" % (v2, 100 * v2 / (PAYLOAD * rate)),
            "–" if v2 is None else "%+.1f%%" % (100 * (v2 / v1 - 1))))
    out.append("")


def root_table(bw, lat, out):
    hop = [float(r["median_us"]) for r in lat if r["tool"] == "bcast_latency" and r["hosts"] == "2"]
    out.append("| configuration | ranks/host | root 0: time (ms), each run | root = last rank | median difference |")
    out.append("|---|---:|---|---|---:|")
    for cfg in configs(bw):
        for rph, a, b in (("1", "obc_root0", "obc_rootlast"), ("2", "obc_2rph_root0", "obc_2rph_rootlast")):
            ra = [float(r["usec"]) / 1e3 for r in bw if r["config"] == cfg and r["impl"] == a]
            rb = [float(r["usec"]) / 1e3 for r in bw if r["config"] == cfg and r["impl"] == b]
            if not ra or not rb:
                continue
            lastroot = [r["root"] for r in bw if r["config"] == cfg and r["impl"] == b][0]
            d = statistics.median(rb) - statistics.median(ra)
            out.append("| %s | %s | %s | %s (root %s) | %+.2f ms (%+.2f%%) |" % (
                cfg, rph, ", ".join("%.1f" % x for x in ra), ", ".join("%.1f" % x for x in rb), lastroot,
                d, 100 * d / statistics.median(ra)))
    sizes = {int(r["bytes"]) for r in bw if r["impl"] == "obc_root0"}
    out.append("")
    out.append("(message %s; one hop measured with bcast_latency on 2 hosts at 0.2 ms delay: %s)"
               % (", ".join(size_label(s) for s in sizes), "%.0f µs" % hop[0] if hop else "not measured"))
    out.append("")


def wire_table(wire, out):
    if not wire:
        return
    cfgs = []
    for r in wire:
        if r["config"] not in cfgs:
            cfgs.append(r["config"])
    for cfg in cfgs:
        rows = [r for r in wire if r["config"] == cfg]
        hosts = []
        for r in rows:
            if r["host"] not in hosts:
                hosts.append(r["host"])
        out.append("**%s**: MiB each host sent (tx) per broadcast of the message (received: rx in the CSV)\n" % cfg)
        out.append("| implementation | " + " | ".join(hosts) + " | all hosts |")
        out.append("|---|" + "---:|" * (len(hosts) + 1))
        impls = []
        for r in rows:
            if r["impl"] not in impls:
                impls.append(r["impl"])
        for impl in impls:
            tx = {r["host"]: float(r["tx_MiB_per_bcast"]) for r in rows if r["impl"] == impl}
            out.append("| %s | %s | %.1f |" % (impl, " | ".join("%.1f" % tx.get(h, float("nan")) for h in hosts),
                                               sum(tx.values())))
        out.append("")


def latency_table(lat, out):
    if not lat:
        return
    out.append("| tool | hosts | root | iterations | median µs | p10 | p90 | min | max |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in lat:
        what = r["tool"] if r["tool"] != "obc-perf" else "obc-perf (max over ranks of own time)"
        out.append("| %s | %s | %s | %s | %.0f | %s | %s | %.0f | %.0f |" % (
            what, r["hosts"], r["root"], r["iters"], float(r["median_us"]),
            "%.0f" % float(r["p10_us"]) if r["p10_us"] else "–",
            "%.0f" % float(r["p90_us"]) if r["p90_us"] else "–", float(r["min_us"]), float(r["max_us"])))
        if r["tool"] == "obc-perf" and r["span_median_us"]:
            out.append("| obc-perf span (root's start to last end) | %s | %s | %s | %.0f | – | – | – | – |" % (
                r["hosts"], r["root"], r["iters"], float(r["span_median_us"])))
    out.append("")
    hop = [float(r["median_us"]) for r in lat if r["tool"] == "bcast_latency" and r["hosts"] == "2"]
    for h in sorted({int(r["hosts"]) for r in lat if int(r["hosts"]) > 2}):
        steps = math.ceil(math.log2(h))
        nominal = steps * 200.0 * 1.2
        got = [float(r["median_us"]) for r in lat
               if r["tool"] == "bcast_latency" and int(r["hosts"]) == h and r["root"] == "0"]
        perf = [float(r["median_us"]) for r in lat if r["tool"] == "obc-perf" and int(r["hosts"]) == h]
        line = "%d hosts: bound ceil(log2 %d) x delay x 1.2 = %d x 200 µs x 1.2 = **%.0f µs** (nominal 0.2 ms)" % (
            h, h, steps, nominal)
        if hop:
            line += "; with the measured hop (%.0f µs, 2 hosts): %d x %.0f x 1.2 = **%.0f µs**" % (
                hop[0], steps, hop[0], steps * hop[0] * 1.2)
        if got:
            line += "; obc (bcast_latency, root 0): %.0f µs" % got[0]
            line += " — meets nominal: %s, meets measured-hop bound: %s" % (
                "yes" if got[0] <= nominal else "**no**",
                ("yes" if got[0] <= steps * hop[0] * 1.2 else "**no**") if hop else "–")
        if perf:
            line += "; obc-perf: %.0f µs" % perf[0]
        out.append("- " + line)
    out.append("")


def busy_summary(steps, out):
    if not steps:
        return
    before = [int(r["busy_before_pct"]) for r in steps]
    during = [int(r["busy_during_pct"]) for r in steps]
    failed = [r["step"] for r in steps if r["rc"] != "0"]
    out.append("Machine busy before the steps: %d–%d %% (median %d %%, %d of %d steps at < 10 %%); "
               "during the steps (benchmark included): %d–%d %%. Failed steps: %s."
               % (min(before), max(before), statistics.median(before), sum(b < 10 for b in before), len(before),
                  min(during), max(during), ", ".join(failed) if failed else "none"))
    out.append("")


def plot(bw, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfgs = configs(bw)
    fig, axes = plt.subplots(1, len(cfgs), figsize=(6.2 * len(cfgs), 5.2), squeeze=False)
    for ax, cfg in zip(axes[0], cfgs):
        rows = [r for r in bw if r["config"] == cfg]
        rate = int(rows[0]["rate_mbit"])
        for impl, legend, style in SERIES:
            sizes = sorted({int(r["bytes"]) for r in rows if r["impl"] == impl})
            if not sizes:
                continue
            ys = [cell(bw, cfg, impl, s)[0] for s in sizes]
            ax.plot([s / 2**20 for s in sizes], ys, label=legend, **style)
        ax.axhline(rate, color="k", lw=1, label="link rate %d Mbit/s" % rate)
        ax.axhline(PAYLOAD * rate, color="k", lw=1, ls="--",
                   label="TCP payload rate %.0f Mbit/s" % (PAYLOAD * rate))
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 4, 16, 64, 256])
        ax.set_xticklabels(["1", "4", "16", "64", "256"])
        ax.set_ylim(0, rate * 1.08)
        ax.set_xlabel("message size (MiB)")
        ax.set_ylabel("per-receiver bandwidth (Mbit/s)")
        ax.set_title("broadcast, %s hosts at %d Mbit/s (netlab)" % (rows[0]["hosts"], rate))
        ax.grid(True, alpha=0.3)
    # One legend under both panels (the link-rate lines are named per panel in its title).
    handles, labels = axes[0][0].get_legend_handles_labels()
    labels = [("link rate" if l.startswith("link rate") else
               "TCP payload rate (0.956 x link)" if l.startswith("TCP payload") else l) for l in labels]
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    fig.savefig(png, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("--png")
    p.add_argument("--md", help="markdown tables to this file ('-' = stdout)")
    a = p.parse_args()
    bw = read_csv(os.path.join(a.dir, "bw.csv"))
    lat = read_csv(os.path.join(a.dir, "latency.csv"))
    wire = read_csv(os.path.join(a.dir, "wire.csv"))
    steps = read_csv(os.path.join(a.dir, "steps.csv"))
    if not bw:
        sys.exit("no rows in %s/bw.csv" % a.dir)
    if a.png:
        plot(bw, a.png)
    out = ["## Bandwidth", ""]
    bandwidth_tables(bw, out)
    out += ["## Targets (obc's default choice)", ""]
    target_table(bw, out)
    out += ["## Root independence (obc)", ""]
    root_table(bw, lat, out)
    out += ["## Bytes on the wire", ""]
    wire_table(wire, out)
    out += ["## Latency, 8 B, --delay 0.2ms", ""]
    latency_table(lat, out)
    out += ["## Machine", ""]
    busy_summary(steps, out)
    text = "\n".join(out) + "\n"
    if a.md == "-" or not a.md:
        sys.stdout.write(text)
    else:
        with open(a.md, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
