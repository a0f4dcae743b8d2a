# SPDX-License-Identifier: BSD-3-Clause
"""mwpath through a net_pcap vdev replaying a pcap (infinite_rx=1, no
tx_pcap: answers are dropped), next to dpdk-testpmd --forward-mode=io on
the same vdev and file, in the same run; medians of RUNS runs of SECONDS
each, and the ratio.  Then the same with two polling lcores: one rx file
per queue, each file for a QP that the queue's lcore owns (QPN % 2), next
to testpmd with two forwarding cores on the same two files.

Both programs are timed by the same method: each runs with DPDK's
telemetry socket, and this script reads the port's rx counter
(/ethdev/stats ipackets) once the port is counting and a warm-up has
passed, and again SECONDS later; the rate is the difference over the
wall-clock time between the two reads (each read's own duration is the
timer's uncertainty).  Neither program's own start-up, printed summary
or timer enters the figure.

A figure that cannot be right is flagged (printed as a warning, and
"implausible" in the JSON): no packets in the window, too few for the
timer, a counter read that took more than 1% of the window, mwpath
faster than testpmd's io-fwd by more than 1.2x (mwpath does testpmd's rx
and more), two lcores more than 2.2x one, frames not accepted, frames
handed between lcores.

Before, mwpath's figure was its own summary's packets over its own
run time, and testpmd's the packets between a "clear port stats" and a
"show port stats" written into its stdin over the script's clock: when
testpmd's start-up took longer than the script's half second of
patience, both commands ran late and close together, the packets
counted fell but not the time, and the ratio could come out at 3.3 with
nothing said.

The traffic: 1024 64-byte RDMA WRITE ONLY requests (138-byte frames,
valid ICRCs) through the region's key to a UC QP.  UC because a replayed
file repeats its PSNs: an RC QP would take every later pass for
duplicates, while a UC QP starts a message at every WRITE ONLY and
executes each one.
"""
import argparse
import glob
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "gen"))
sys.path.insert(0, HERE)
import benchjson  # noqa: E402

CONF = """[port 0]
mac = 02:00:00:00:00:01
ipv4 = 192.0.2.1
mtu = 1024
[pd 0]
[mr 0]
pd = 0
length = 65536
iova = 0x10000
rkey = 0x100
access = local_write,remote_write
[cq 0]
[qp 0x22]
pd = 0
type = uc
cq = 0
access = remote_write
remote_qpn = 0x99
remote_ipv4 = 192.0.2.2
[qp 0x23]
pd = 0
type = uc
cq = 0
access = remote_write
remote_qpn = 0x9a
remote_ipv4 = 192.0.2.2
"""
EAL = ["--no-huge", "--no-pci", "--no-shconf", "-m", "512",
       "--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
       "--log-level=pmd.net.pcap:error"]
FRAME = 138		# bytes on the wire without preamble, gap and FCS
MAX_RATIO = 1.2		# mwpath / testpmd io-fwd above this: a wrong figure
MAX_SCALING = 2.2	# two lcores / one above this: a wrong figure
MIN_PACKETS = 100000	# fewer in a window: too few to time
MAX_TIMER_SHARE = 0.01	# the two reads' durations over the window, at most

# one polling lcore: the main lcore and a worker; two: the main lcore
# (which sleeps) shares CPU 0 with the first worker
LCORES = {1: ["-l", "0-1"], 2: ["--lcores", "0@0,1@0,2@1"]}


class Failed(Exception):
    pass


def make_pcap(path, qpn=0x22, n=1024):
    import roce
    frames = []
    for i in range(n):
        frames.append(roce.frame(0x2a, qpn, i, payload=bytes((i + k) & 0xff for k in range(64)),
                                 eh={"reth": {"va": 0x10000 + (i % 1000) * 64,
                                              "rkey": 0x100, "dmalen": 64}}))
    assert len(frames[0]) == FRAME, len(frames[0])
    roce.write_pcap(path, frames)


def vdev(pcaps):
    return "net_pcap0," + ",".join("rx_pcap=" + p for p in pcaps) + ",infinite_rx=1"


class Telemetry:
    """DPDK's telemetry socket of the process with EAL --file-prefix prefix."""

    def __init__(self, prefix, proc, timeout=60):
        dirs = ["/var/run/dpdk"]
        if os.environ.get("XDG_RUNTIME_DIR"):
            dirs.insert(0, os.path.join(os.environ["XDG_RUNTIME_DIR"], "dpdk"))
        t = time.monotonic()
        while True:
            paths = [p for d in dirs for p in
                     glob.glob(os.path.join(d, prefix, "dpdk_telemetry.v2"))]
            if paths:
                break
            if proc.poll() is not None:
                raise Failed("exited (%d) before its telemetry socket appeared" %
                             proc.returncode)
            if time.monotonic() - t > timeout:
                raise Failed("no telemetry socket after %d s" % timeout)
            time.sleep(0.02)
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self.s.connect(paths[0])
                break
            except OSError:
                self.s.close()
                if time.monotonic() - t > timeout:
                    raise Failed("cannot connect to %s" % paths[0]) from None
                time.sleep(0.02)
        self.max = json.loads(self.s.recv(1024)).get("max_output_len", 16384)

    def query(self, cmd):
        self.s.send(cmd.encode())
        return json.loads(self.s.recv(self.max))

    def ipackets(self):
        """The port's rx counter, and the monotonic time of the read (the
        middle of it) and its duration."""
        t0 = time.monotonic()
        st = self.query("/ethdev/stats,0")["/ethdev/stats"]
        # null while the port is still being set up (net_af_xdp's
        # statistics need its socket)
        v = st["ipackets"] if st else 0
        t1 = time.monotonic()
        return v, (t0 + t1) / 2, t1 - t0

    def close(self):
        self.s.close()


def window(tel, warmup, seconds):
    """The same measurement for either program: wait for the port to count,
    warm up, then packets over SECONDS between two reads of its counter."""
    t = time.monotonic()
    while tel.ipackets()[0] == 0:
        if time.monotonic() - t > 30:
            raise Failed("its port counted no packet in 30 s")
        time.sleep(0.01)
    time.sleep(warmup)
    p0, t0, d0 = tel.ipackets()
    time.sleep(seconds)
    p1, t1, d1 = tel.ipackets()
    speed = tel.query("/ethdev/link_status,0")["/ethdev/link_status"].get("speed", 0)
    return {"packets": p1 - p0, "seconds": t1 - t0, "read_s": max(d0, d1),
            "mpps": (p1 - p0) / (t1 - t0) / 1e6, "link_mbps": speed}


def run_timed(who, cmd, prefix, warmup, seconds, check_exit, **popen):
    """Start cmd (a DPDK program with --file-prefix prefix), take its
    window by telemetry, stop it with SIGINT: (window, its stdout).  With
    check_exit, a non-zero exit status is a failure."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         **popen)
    try:
        tel = Telemetry(prefix, p)
        w = window(tel, warmup, seconds)
        tel.close()
    except Failed as e:
        p.kill()
        out, err = p.communicate()
        raise Failed("%s: %s\n%s%s" % (who, e, out[-2000:], err[-2000:])) from None
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    if check_exit and p.returncode != 0:
        raise Failed("%s exited %d:\n%s%s" % (who, p.returncode, out, err))
    return w, out


def run_mwpath(build, pcaps, conf, warmup, seconds, tag):
    prefix = "mwp_pcap_rate_%d_%s" % (os.getpid(), tag)
    w, out = run_timed("mwpath", [os.path.join(build, "app", "mwpath")] + LCORES[len(pcaps)] +
                       EAL + ["--file-prefix", prefix, "--vdev", vdev(pcaps), "--", "-c", conf,
                              "--lcores-per-port", str(len(pcaps))],
                       prefix, warmup, seconds, True)
    # correctness, not timing: from the summary it prints at exit
    pk = re.search(r"packets in\s+(\d+)", out)
    acc = re.search(r"accepted\s+(\d+)", out)
    w["accepted_share"] = int(acc.group(1)) / int(pk.group(1)) if pk and acc and \
        int(pk.group(1)) else None
    w["handed_over"] = sum(int(x) for x in re.findall(r"handed to the owner (\d+)", out))
    return w


def run_testpmd(pcaps, warmup, seconds, tag):
    n = len(pcaps)
    prefix = "mwp_pcap_rate_%d_%s" % (os.getpid(), tag)
    w, _ = run_timed("testpmd", ["dpdk-testpmd"] + LCORES[n] + EAL +
                     ["--file-prefix", prefix, "--vdev", vdev(pcaps), "--",
                      "--forward-mode=io", "--total-num-mbufs=16384",
                      "--rxq=%d" % n, "--txq=%d" % n, "--nb-cores=%d" % n,
                      "--no-lsc-interrupt"],
                     prefix, warmup, seconds, False, stdin=subprocess.PIPE)
    return w


def check_window(who, w, warnings):
    if w["packets"] <= 0:
        warnings.append("%s: no packets counted in the window" % who)
    elif w["packets"] < MIN_PACKETS:
        warnings.append("%s: %d packets in the window, fewer than %d: too few to time"
                        % (who, w["packets"], MIN_PACKETS))
    if w["read_s"] > MAX_TIMER_SHARE * w["seconds"]:
        warnings.append("%s: reading the counter took %.3f s of a %.3f s window"
                        % (who, w["read_s"], w["seconds"]))


def measure(build, pcaps, conf, runs, warmup, seconds):
    """One lcore count: runs of mwpath then testpmd; the figure and its
    warnings."""
    n = len(pcaps)
    mw, tp = [], []
    for i in range(runs):
        mw.append(run_mwpath(build, pcaps, conf, warmup, seconds, "m%d%d" % (n, i)))
        tp.append(run_testpmd(pcaps, warmup, seconds, "t%d%d" % (n, i)))
    warnings, notes = [], []
    for w in mw:
        check_window("mwpath", w, warnings)
        if w["accepted_share"] is not None and w["accepted_share"] < 0.99:
            warnings.append("mwpath accepted only %.1f%% of the frames"
                            % (100 * w["accepted_share"]))
        if w["handed_over"]:
            warnings.append("mwpath handed %d frames between lcores" % w["handed_over"])
    for w in tp:
        check_window("testpmd", w, warnings)
    m = statistics.median(w["mpps"] for w in mw)
    t = statistics.median(w["mpps"] for w in tp)
    ratios = [a["mpps"] / b["mpps"] for a, b in zip(mw, tp) if b["mpps"] > 0]
    ratio = m / t if t > 0 else float("inf")
    if ratio > MAX_RATIO:
        warnings.append("mwpath at %.2f times testpmd io-fwd (more than %.1f): it does "
                        "testpmd's rx and more, so one of the two figures is wrong"
                        % (ratio, MAX_RATIO))
    link = max(w["link_mbps"] for w in mw + tp)
    line = link * 1e6 / ((FRAME + 4 + 20) * 8) / 1e6 if link else None
    if line and max(m, t) > line:
        # net_pcap reports a nominal 10G and is not paced by it
        notes.append("above the port's reported %d Mbit/s (%.2f Mpps of %d-byte frames): "
                     "net_pcap is not paced by its nominal speed" % (link, line, FRAME))
    return {
        "lcores": n, "mwpath_mpps": m, "testpmd_mpps": t, "ratio": ratio,
        "pair_ratios": ratios,
        "accepted_share": min((w["accepted_share"] for w in mw
                               if w["accepted_share"] is not None), default=None),
        "handed_over": sum(w["handed_over"] for w in mw),
        "line_rate_mpps": line, "windows": {"mwpath": mw, "testpmd": tp},
        "warnings": warnings, "notes": notes,
    }


def main():
    ap = argparse.ArgumentParser(
        description="mwpath beside dpdk-testpmd --forward-mode=io on the same net_pcap "
                    "replay, both timed from the port's rx counter through DPDK's "
                    "telemetry over the same window: medians of RUNS runs of SECONDS each, "
                    "the ratio, and a warning for any figure that cannot be right.")
    ap.add_argument("build", help="the meson build directory (mwpath in BUILD/app)")
    ap.add_argument("runs", nargs="?", type=int, default=3, help="runs per figure (3)")
    ap.add_argument("seconds", nargs="?", type=float, default=3,
                    help="seconds per measured window (3)")
    ap.add_argument("--lcores", default="1,2",
                    help="polling lcore counts, of 1 and 2 (default 1,2)")
    ap.add_argument("--warmup", type=float, default=0.5,
                    help="seconds after the port starts counting before the window (0.5)")
    ap.add_argument("--quick", action="store_true",
                    help="one run of 0.3 s after 0.1 s of warm-up (a smoke test, not a "
                         "figure)")
    ap.add_argument("--json", metavar="FILE", help="write the figures, with the build and "
                    "the machine, to FILE as JSON")
    a = ap.parse_args()
    try:
        lcores = [int(x) for x in a.lcores.split(",")]
    except ValueError:
        lcores = []
    if not lcores or any(n not in LCORES for n in lcores):
        ap.error("--lcores: a list of 1 and 2")
    if a.runs < 1 or not a.seconds > 0 or a.warmup < 0:
        ap.error("RUNS must be at least 1, SECONDS above 0, --warmup not negative")
    runs, seconds, warmup = (1, 0.3, 0.1) if a.quick else (a.runs, a.seconds, a.warmup)
    if not os.path.exists(os.path.join(a.build, "app", "mwpath")):
        ap.error("no %s" % os.path.join(a.build, "app", "mwpath"))
    res = {}
    try:
        with tempfile.TemporaryDirectory() as d:
            pcaps = [os.path.join(d, "write64-q0.pcap"), os.path.join(d, "write64-q1.pcap")]
            conf = os.path.join(d, "uc.ini")
            make_pcap(pcaps[0], 0x22)
            make_pcap(pcaps[1], 0x23)
            with open(conf, "w") as f:
                f.write(CONF)
            for n in lcores:
                res[n] = measure(a.build, pcaps[:n], conf, runs, warmup, seconds)
    except (Failed, subprocess.TimeoutExpired, FileNotFoundError) as e:
        sys.exit("pcap_rate: %s" % e)
    for who in ("mwpath", "testpmd"):
        if 1 in res and 2 in res and res[1][who + "_mpps"] > 0:
            s = res[2][who + "_mpps"] / res[1][who + "_mpps"]
            if s > MAX_SCALING:
                res[2]["warnings"].append("%s on two lcores at %.2f times one (more than "
                                          "%.1f)" % (who, s, MAX_SCALING))
    print("# pcap_rate: net_pcap infinite_rx, %d-byte UC WRITE ONLY frames, one rx file "
          "per queue, medians of %d runs of %g s" % (FRAME, runs, seconds))
    print("# both timed alike: the port's rx counter read through DPDK telemetry after "
          "%g s of warm-up and %g s later" % (warmup, seconds))
    print("# each mwpath run is followed by a testpmd run; 'pairs' is the median")
    print("# (min-max) of the ratios of those pairs, less hurt by the machine's drift")
    print(f"{'lcores':<8}{'testpmd io Mpps':>16}{'mwpath Mpps':>13}{'mwpath/testpmd':>16}"
          f"{'pairs':>20}{'accepted':>10}{'handed over':>13}")
    results = []
    for n, r in res.items():
        pr = r["pair_ratios"] or [float("nan")]
        pairs = f"{statistics.median(pr):.2f} ({min(pr):.2f}-{max(pr):.2f})"
        acc = "-" if r["accepted_share"] is None else "%.1f%%" % (100 * r["accepted_share"])
        print(f"{n:<8}{r['testpmd_mpps']:16.2f}{r['mwpath_mpps']:13.2f}{r['ratio']:16.2f}"
              f"{pairs:>20}{acc:>10}{r['handed_over']:13d}")
        results.append({"name": "mwpath_%dlcores" % n, "series": "mwpath", "payload": 64,
                        "frame_bytes": FRAME, "lcores": n, "mpps": r["mwpath_mpps"],
                        "testpmd_mpps": r["testpmd_mpps"], "ratio": r["ratio"],
                        "pair_ratios": r["pair_ratios"], "accepted_share": r["accepted_share"],
                        "handed_over": r["handed_over"], "line_rate_mpps": r["line_rate_mpps"],
                        "warnings": r["warnings"], "notes": r["notes"],
                        "implausible": bool(r["warnings"]),
                        "windows": r["windows"]["mwpath"]})
        results.append({"name": "testpmd_io_%dlcores" % n, "series": "testpmd_io",
                        "payload": 64, "frame_bytes": FRAME, "lcores": n,
                        "mpps": r["testpmd_mpps"], "windows": r["windows"]["testpmd"]})
    if 1 in res and 2 in res and res[1]["testpmd_mpps"] > 0 and res[1]["mwpath_mpps"] > 0:
        print("scaling 2/1: testpmd %.2f, mwpath %.2f" %
              (res[2]["testpmd_mpps"] / res[1]["testpmd_mpps"],
               res[2]["mwpath_mpps"] / res[1]["mwpath_mpps"]))
    warnings = [w for r in res.values() for w in r["warnings"]]
    sys.stdout.flush()
    for n, r in res.items():
        for note in r["notes"]:
            print("# note, %d lcore%s: %s" % (n, "s" if n > 1 else "", note))
    for w in warnings:
        print("WARNING: implausible figure: %s" % w, file=sys.stderr, flush=True)
    benchjson.write(a.json, benchjson.document("pcap_rate", results, a.build,
                                               implausible=bool(warnings),
                                               warnings=warnings))


if __name__ == "__main__":
    main()
