#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""plot_coll.py - bench/anchors/plot.py for any collective, not only broadcast.

Usage: plot_coll.py --op OP [--anchors DIR] [plot.py's arguments: CSV... --png --md
       --title --sizes --metric]

plot.py (a kept copy of the design's, left unchanged) is broadcast-specific in three places, which this
wrapper replaces before running plot.py's own main():
  - busbw: plot.py recomputes busbw = bytes/usec (broadcast's factor 1); here it
    is bytes/usec x the nccl-tests factor of OP: allreduce 2(n-1)/n, allgather,
    reduce_scatter, gather, scatter and alltoall (n-1)/n, broadcast and reduce 1
    (bytes: the whole buffer; alltoall: one rank's, bytes/NP to each peer;
    alltoallv and allgatherv as alltoall and allgather, with nominal bytes);
  - the memcpy bound: the bytes every rank together must copy for one call,
    k x bytes, with k = NP-1 (broadcast, reduce, the allgathers, reduce_scatter,
    the alltoalls: every rank sends (NP-1)/NP of its bytes), 1 (gather, scatter:
    (NP-1)/NP of the root's buffer, rounded up) or 2(NP-1) (allreduce:
    reduce-scatter plus allgather), over 2 cores:
    algbw <= min(B_2t_split(n), B_2t_each_aggregate(n) / k), drawn as busbw
    (and as the time bytes / algbw). For broadcast this is plot.py's own
    bound. It ignores the arithmetic of the reductions, so it is an
    optimistic ceiling;
  - titles and labels: "broadcast" becomes OP, and the busbw axis names its factor.
Everything else (CSV parsing, medians, layout, tables) is plot.py's.
Run with /usr/bin/python3 (python3-matplotlib).
"""

import importlib.util
import os
import re
import sys

FACTORS = {
    "broadcast": ("1", lambda n: 1.0),
    "reduce": ("1", lambda n: 1.0),
    "allreduce": ("2(n-1)/n", lambda n: 2.0 * (n - 1) / n),
    "allgather": ("(n-1)/n", lambda n: (n - 1) / n),
    "reduce_scatter": ("(n-1)/n", lambda n: (n - 1) / n),
    "gather": ("(n-1)/n", lambda n: (n - 1) / n),
    "scatter": ("(n-1)/n", lambda n: (n - 1) / n),
    "alltoall": ("(n-1)/n", lambda n: (n - 1) / n),
    "alltoallv": ("(n-1)/n", lambda n: (n - 1) / n),  # of its nominal bytes
    "allgatherv": ("(n-1)/n", lambda n: (n - 1) / n),  # of its nominal bytes
}


def copies(op, np_):
    """How many times `bytes` must be copied, over all ranks, for one call."""
    if op in ("gather", "scatter"):
        return 1
    return max(1, 2 * (np_ - 1) if op == "allreduce" else np_ - 1)


def load_plot(anchors):
    spec = importlib.util.spec_from_file_location("anchors_plot", os.path.join(anchors, "plot.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def patch(plot, op):
    factor_name, factor = FACTORS[op]
    orig_split = plot.split

    def split(data):
        coll, ref = orig_split(data)
        for (impl, np_), d in coll.items():
            for nbytes, rec in d.items():
                if rec["usec"] > 0:
                    d[nbytes] = dict(rec, busbw=nbytes / rec["usec"] / 1e3 * factor(np_))
        return coll, ref

    def memcpy_bound(ref, np_):
        out = {}
        k = copies(op, np_)
        for modes in plot.memcpy_families(ref).values():
            split_, each = modes.get("2t_split", {}), modes.get("2t_each", {})
            for n in set(split_) & set(each):
                algbw = min(split_[n]["algbw"], each[n]["busbw"] / k)
                out[n] = max(out.get(n, 0.0), algbw * factor(np_))
        return out

    plot.split = split
    plot.memcpy_bound = memcpy_bound

    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    orig_savefig = Figure.savefig

    def savefig(fig, *args, **kwargs):
        for ax in fig.axes:
            # plot.py draws the time bound as bytes / bound; the bound is busbw now.
            m = re.search(r"NP=(\d+): time per call", ax.get_title())
            for line in ax.get_lines() if m else []:
                if line.get_label() == "memcpy bound":
                    f = factor(int(m.group(1)))
                    line.set_ydata([y * f for y in line.get_ydata()])
            ax.set_title(ax.get_title().replace("broadcast", op))
            ax.set_ylabel(ax.get_ylabel().replace(
                "busbw = algbw", "busbw = algbw x %s" % factor_name))
            legend = ax.get_legend()
            for text in legend.get_texts() if legend else []:
                s = text.get_text()
                if s.startswith("memcpy bound ("):
                    text.set_text("memcpy bound (%s copies of each byte, 2 cores)"
                                  % ("2(NP-1)" if op == "allreduce" else "NP-1"))
        return orig_savefig(fig, *args, **kwargs)

    Figure.savefig = savefig


def main():
    argv = sys.argv[1:]
    op, anchors = None, None
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] in ("--op", "--anchors") and i + 1 < len(argv):
            if argv[i] == "--op":
                op = argv[i + 1]
            else:
                anchors = argv[i + 1]
            i += 2
        else:
            rest.append(argv[i])
            i += 1
    if op not in FACTORS:
        sys.exit("plot_coll.py: --op must be one of %s" % " ".join(FACTORS))
    if anchors is None:
        here = os.path.dirname(os.path.abspath(__file__))
        anchors = os.path.join(here, "anchors")
    plot = load_plot(anchors)
    patch(plot, op)
    sys.argv = [sys.argv[0]] + rest
    plot.main()


if __name__ == "__main__":
    main()
