#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two benchmark result files (--json of any program in bench/) side by
side: every figure present in both, A's value, B's, and B/A; then what
differs between the two runs' meta (commit, CPU, cores, build options).

    bench/compare.py A.json B.json [--figure KEY]...

Results are matched by name; the figures are a result's numbers (mpps,
ns_per_pkt, ratio, ...); the sweep's coordinates (payload, keys,
lcores, ...) are shown with the name, not compared.  B/A above 1 is B
higher: better for a rate (mpps, mops, *_per_s), worse for a time
(ns_per_pkt, ticks_per_pkt, *_us).  Exit 0; 1 if the files share no
figure; 2 if a file cannot be read or is not a result file.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchjson  # noqa: E402

# a result's coordinates in a sweep, and counts that are not figures
COORDS = ("payload", "keys", "lcores", "readers", "windows", "rebind_every", "frame_bytes",
          "samples", "runs", "handed_over")
META = ("commit", "cpu_model", "cores")


def fmt(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, int):
        return str(v)
    a = abs(v)
    return "%.4g" % v if a < 1000 else "%.0f" % v


def meta_differences(a, b):
    ma, mb = a.get("meta", {}), b.get("meta", {})
    out = []
    if a["bench"] != b["bench"]:
        out.append(("bench", a["bench"], b["bench"]))
    for k in META:
        if ma.get(k) != mb.get(k):
            out.append((k, ma.get(k, "-"), mb.get(k, "-")))
    ba, bb = ma.get("build"), mb.get("build")
    if isinstance(ba, dict) and isinstance(bb, dict):
        for k in sorted(set(ba) | set(bb)):
            if ba.get(k) != bb.get(k):
                out.append(("build." + k, ba.get(k, "-"), bb.get(k, "-")))
    elif ba != bb:
        out.append(("build", ba, bb))
    return out


def main():
    ap = argparse.ArgumentParser(
        description="Two benchmark result files (--json) side by side: every figure in "
                    "both, with the ratio B/A, and what differs between the runs (commit, "
                    "CPU, build).")
    ap.add_argument("a", metavar="A.json", help="the baseline")
    ap.add_argument("b", metavar="B.json", help="the run to set beside it")
    ap.add_argument("--figure", action="append", metavar="KEY",
                    help="compare only this figure (mpps, ns_per_pkt, ...); may be repeated")
    args = ap.parse_args()
    try:
        a, b = benchjson.load(args.a), benchjson.load(args.b)
    except benchjson.BadResults as e:
        print("compare: %s" % e, file=sys.stderr)
        sys.exit(2)
    rb = {r["name"]: r for r in b["results"]}
    rows = []
    for r in a["results"]:
        other = rb.get(r["name"])
        if other is None:
            continue
        fa, fb = benchjson.figures(r), benchjson.figures(other)
        where = " ".join("%s=%s" % (k, r[k]) for k in ("payload", "keys", "lcores") if k in r)
        for k in fa:
            if k in COORDS or k not in fb or (args.figure and k not in args.figure):
                continue
            va, vb = fa[k], fb[k]
            ratio = vb / va if va else None
            rows.append((r["name"], where, k, fmt(va), fmt(vb),
                         "-" if ratio is None else "%.3f" % ratio))
    print("# A: %s (%s, %s)" % (args.a, a.get("meta", {}).get("commit", "?"), a["bench"]))
    print("# B: %s (%s, %s)" % (args.b, b.get("meta", {}).get("commit", "?"), b["bench"]))
    if rows:
        w = [max(len(x[i]) for x in rows + [("result", "at", "figure", "A", "B", "B/A")])
             for i in range(6)]
        head = ("result", "at", "figure", "A", "B", "B/A")
        print("%-*s  %-*s  %-*s  %*s  %*s  %*s" % (w[0], head[0], w[1], head[1], w[2], head[2],
                                                  w[3], head[3], w[4], head[4], w[5], head[5]))
        for x in rows:
            print("%-*s  %-*s  %-*s  %*s  %*s  %*s" % (w[0], x[0], w[1], x[1], w[2], x[2],
                                                      w[3], x[3], w[4], x[4], w[5], x[5]))
    only_a = [r["name"] for r in a["results"] if r["name"] not in rb]
    names_a = {r["name"] for r in a["results"]}
    only_b = [r["name"] for r in b["results"] if r["name"] not in names_a]
    if only_a:
        print("# only in A: %s" % ", ".join(only_a))
    if only_b:
        print("# only in B: %s" % ", ".join(only_b))
    diff = meta_differences(a, b)
    if diff:
        print("# the runs differ in:")
        for k, va, vb in diff:
            print("#   %-24s A: %s  B: %s" % (k, va, vb))
    else:
        print("# same commit, CPU, cores and build options")
    for doc, name in ((a, "A"), (b, "B")):
        if doc.get("implausible"):
            print("# %s was flagged implausible: %s" % (name, "; ".join(doc.get("warnings", []))))
    if not rows:
        print("compare: no figure in both files", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
