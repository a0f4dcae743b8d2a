#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Pictures from benchmark result files (--json of the programs in
bench/): the rate against payload size, against the number of live keys,
and against polling lcores, for whichever of these sweeps the files
hold.

    bench/plot.py RESULTS.json... -o DIR

Writes DIR/rate-vs-payload.png, DIR/rate-vs-keys.png and
DIR/rate-vs-lcores.png (those it has data for), one panel per benchmark,
one line per series (a workload at fixed other coordinates, and per file
when several are given).  The rate is a result's "mpps" (Mpps), else
its "mops" (million operations a second); --rate KEY picks another
figure.  matplotlib from Debian (python3-matplotlib), drawn with Agg.
Exit 0; 1 if no file holds a sweep; 2 if a file cannot be read.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchjson  # noqa: E402

DIMS = (("payload", "payload size, bytes", "rate vs payload size"),
        ("keys", "live keys", "rate vs key count"),
        ("lcores", "polling lcores", "rate vs lcores"))
RATES = ("mpps", "mops")


def rate_of(r, key):
    for k in ((key,) if key else RATES):
        v = r.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return k, float(v)
    return None, None


def series(docs, dim, rate_key):
    """{bench: {label: [(x, y)]}} for the sweep along dim: a line per
    series whose other coordinates are fixed, with two points at least.
    A label names the other coordinates that vary within its benchmark,
    and its file where the benchmark comes from several."""
    files, varies = {}, {}
    for path, doc in docs:
        files.setdefault(doc["bench"], set()).add(path)
        for r in doc["results"]:
            for d, _, _ in DIMS:
                if d in r:
                    varies.setdefault((doc["bench"], d), set()).add(r[d])
    out = {}
    for path, doc in docs:
        bench = doc["bench"]
        tag = ""
        if len(files[bench]) > 1:
            tag = " [%s %s]" % (os.path.basename(path), doc.get("meta", {}).get("commit", "?"))
        for r in doc["results"]:
            x = r.get(dim)
            k, y = rate_of(r, rate_key)
            if not isinstance(x, (int, float)) or y is None:
                continue
            others = "".join(" %s=%s" % (d, r[d]) for d, _, _ in DIMS
                             if d != dim and d in r and len(varies[(bench, d)]) > 1)
            label = "%s%s%s%s" % (r.get("series", r["name"]), others,
                                  "" if k in RATES else " " + k, tag)
            out.setdefault(bench, {}).setdefault(label, []).append((x, y))
    for bench in list(out):
        lines = {lab: sorted(set(p)) for lab, p in out[bench].items()
                 if len({x for x, _ in p}) >= 2}
        if lines:
            out[bench] = lines
        else:
            del out[bench]
    return out


def main():
    ap = argparse.ArgumentParser(
        description="Rate against payload size, key count and lcores, drawn from "
                    "benchmark result files (--json), one PNG per sweep found.")
    ap.add_argument("results", nargs="+", metavar="RESULTS.json")
    ap.add_argument("-o", "--outdir", required=True, metavar="DIR",
                    help="where to write the PNGs (made if missing)")
    ap.add_argument("--rate", metavar="KEY",
                    help="the figure to draw (default: mpps, else mops)")
    args = ap.parse_args()
    try:
        docs = [(p, benchjson.load(p)) for p in args.results]
    except benchjson.BadResults as e:
        print("plot: %s" % e, file=sys.stderr)
        sys.exit(2)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: needs matplotlib (Debian: apt-get install python3-matplotlib)",
              file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.outdir, exist_ok=True)
    written = []
    for dim, xlabel, title in DIMS:
        data = series(docs, dim, args.rate)
        if not data:
            continue
        fig, axes = plt.subplots(1, len(data), figsize=(6.4 * len(data), 4.8), squeeze=False)
        for ax, (bench, lines) in zip(axes[0], sorted(data.items())):
            for label, pts in sorted(lines.items()):
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=label)
            xs = sorted({x for pts in lines.values() for x, _ in pts})
            if dim in ("payload", "keys") and xs[0] > 0 and xs[-1] / xs[0] >= 16:
                ax.set_xscale("log", base=2)
            if dim == "lcores":
                ax.set_xticks(xs)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(args.rate or "Mpps (M ops/s where no packets)")
            ax.set_ylim(bottom=0)
            ax.set_title(bench)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="x-small")
        fig.suptitle(title)
        fig.tight_layout()
        out = os.path.join(args.outdir, "rate-vs-%s.png" % dim)
        fig.savefig(out, dpi=80)
        plt.close(fig)
        written.append(out)
        print(out)
    if not written:
        print("plot: no sweep of payload size, key count or lcores in these files",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
