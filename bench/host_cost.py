#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""What the exception path costs the responder (docs/host.md): mwpath on
pcap_rate.py's replay (net_pcap, infinite_rx, 64-byte RDMA WRITEs to a
UC QP, one polling lcore) with `exception = tap` and without it,
alternated, in the same run; medians of RUNS windows of SECONDS each, and
the ratio on/off.  Each run is in a network namespace of its own, so
that the tap and its address stay out of the host's.  The traffic is all
RoCE: what is measured is the poll loop's branch and the tap looked at
every exception_poll_us while the kernel sends nothing -- the price a
port pays for keeping the host's addresses.  Needs root.

    bench/host_cost.py BUILD [RUNS] [SECONDS] [--json FILE]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchjson  # noqa: E402
import pcap_rate  # noqa: E402


def run(build, pcap, conf, warmup, seconds, tag):
    ns = "mwphc%d%s" % (os.getpid(), tag)
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"],
                       check=True)
        prefix = "mwp_host_cost_%d_%s" % (os.getpid(), tag)
        w, out = pcap_rate.run_timed(
            "mwpath", ["ip", "netns", "exec", ns, os.path.join(build, "app", "mwpath")] +
            pcap_rate.LCORES[1] + pcap_rate.EAL +
            ["--file-prefix", prefix, "--vdev", pcap_rate.vdev([pcap]), "--", "-c", conf],
            prefix, warmup, seconds, True)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return w, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("runs", nargs="?", type=int, default=5)
    ap.add_argument("seconds", nargs="?", type=float, default=2)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "w.pcap")
        pcap_rate.make_pcap(pcap)
        confs = {}
        for mode, extra in (("off", ""), ("tap", "exception = tap\n")):
            confs[mode] = os.path.join(tmp, mode + ".ini")
            with open(confs[mode], "w") as f:
                # the port's section is the file's first: the key joins it
                f.write(pcap_rate.CONF.replace("mtu = 1024\n", "mtu = 1024\n" + extra, 1))
        mpps = {"off": [], "tap": []}
        for i in range(a.runs):
            for mode in ("off", "tap"):
                w, out = run(a.build, pcap, confs[mode], a.warmup, a.seconds,
                             "%s%d" % (mode, i))
                if mode == "tap" and "to the host" not in out:
                    sys.exit("host_cost: the run with exception = tap has no exception "
                             "path:\n" + out[-2000:])
                mpps[mode].append(w["mpps"])
                print("run %d %-3s %.2f Mpps" % (i, mode, w["mpps"]), file=sys.stderr)
    off, tap = statistics.median(mpps["off"]), statistics.median(mpps["tap"])
    res = {"off_mpps": off, "tap_mpps": tap, "ratio": tap / off if off else None,
           "runs": mpps, "seconds": a.seconds}
    print("responder, 64 B WRITE, one lcore: exception path off %.2f Mpps, on %.2f Mpps, "
          "on/off %.3f (medians of %d)" % (off, tap, res["ratio"], a.runs))
    if a.json:
        benchjson.write(a.json, benchjson.document("host_cost", res, a.build))


if __name__ == "__main__":
    main()
