#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""What congestion control costs the responder and the requester: bench_resp
(64 B WRITEs, 1024 keys) and bench_req (64 B WRITEs: post, send, complete)
with the port's congestion control on -- as the configuration gives it by
default: ECT(0) on what it sends, CNPs for CE marks, DCQCN -- and off (not
ECN-capable, no CNPs, no rate control), run alternately in one run.

    bench/cc_cost.py [BUILD_DIR] [RUNS] [--json FILE]   (default: build, 5)

Prints the medians of RUNS runs each way and their ratio, on over off.
No frame here is marked and no CNP arrives, so on and off run the same
path but for the configuration: the ratio says what having congestion
control costs traffic that is not congested.  Exit 0; 1 if a benchmark
failed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

BENCHES = (
    ("responder, 64 B WRITE", "bench_resp", ["--workload", "0", "--keys", "1024",
                                             "--payloads", "64"], "mpps", "Mpps"),
    ("requester, 64 B WRITE sent", "bench_req", ["--workload", "0", "--sizes", "64"],
     "send_mpps", "Mpps"),
    ("requester, post+send+complete", "bench_req", ["--workload", "0", "--sizes", "64"],
     "mpps", "M WR/s"),
)


def figure(build, prog, args, key, cc):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([os.path.join(build, "bench", prog)] + args + ["--cc", cc,
                                                                      "--json", f.name],
                       check=True, capture_output=True)
        return json.load(open(f.name))["results"][0][key]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("runs", nargs="?", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args()
    got = {}
    try:
        for _ in range(a.runs):
            for cc in ("on", "off"):
                for name, prog, args, key, _unit in BENCHES:
                    got.setdefault((name, cc), []).append(figure(a.build, prog, args, key,
                                                                 cc))
    except subprocess.CalledProcessError as e:
        print("cc_cost: %s failed: %s" % (" ".join(e.cmd), e.stderr.decode()[-500:]),
              file=sys.stderr)
        return 1
    rows = []
    print("%-32s %10s %10s %7s" % ("figure (medians of %d)" % a.runs, "cc on", "cc off",
                                   "on/off"))
    for name, _prog, _args, _key, unit in BENCHES:
        on = statistics.median(got[(name, "on")])
        off = statistics.median(got[(name, "off")])
        rows.append({"name": name, "unit": unit, "on": on, "off": off, "ratio": on / off})
        print("%-32s %10.3f %10.3f %7.3f  %s" % (name, on, off, on / off, unit))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
