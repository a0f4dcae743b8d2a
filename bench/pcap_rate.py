# SPDX-License-Identifier: BSD-3-Clause
"""mwpath through a net_pcap vdev replaying a pcap (infinite_rx=1, no
tx_pcap: answers are dropped), next to dpdk-testpmd --forward-mode=io on
the same vdev and file, in the same run; medians of RUNS runs of SECONDS
each, and the ratio.  Then the same with two polling lcores: one rx file
per queue, each file for a QP that the queue's lcore owns (QPN % 2), next
to testpmd with two forwarding cores on the same two files.

The traffic: 1024 64-byte RDMA WRITE ONLY requests (138-byte frames,
valid ICRCs) through the region's key to a UC QP.  UC because a replayed
file repeats its PSNs: an RC QP would take every later pass for
duplicates, while a UC QP starts a message at every WRITE ONLY and
executes each one.

Usage: /usr/bin/python3 bench/pcap_rate.py BUILD_DIR [RUNS] [SECONDS]
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "gen"))
import roce  # noqa: E402

CONF = """[port 0]
mac = 02:00:00:00:00:01
ipv4 = 192.0.2.1
mtu = 1024
[pd 0]
[mr 0]
pd = 0
length = 65536
iova = 0x10000
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


def make_pcap(path, qpn=0x22, n=1024):
    frames = []
    for i in range(n):
        frames.append(roce.frame(0x2a, qpn, i, payload=bytes((i + k) & 0xff for k in range(64)),
                                 eh={"reth": {"va": 0x10000 + (i % 1000) * 64,
                                              "rkey": 0x100, "dmalen": 64}}))
    assert len(frames[0]) == 138, len(frames[0])
    roce.write_pcap(path, frames)


# one polling lcore: the main lcore and a worker; two: the main lcore
# (which sleeps) shares CPU 0 with the first worker
LCORES = {1: ["-l", "0-1"], 2: ["--lcores", "0@0,1@0,2@1"]}


def vdev(pcaps):
    return "net_pcap0," + ",".join("rx_pcap=" + p for p in pcaps) + ",infinite_rx=1"


def run_mwpath(build, pcaps, conf, seconds):
    p = subprocess.Popen([os.path.join(build, "app", "mwpath")] + LCORES[len(pcaps)] + EAL +
                         ["--vdev", vdev(pcaps), "--", "-c", conf,
                          "--lcores-per-port", str(len(pcaps))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(seconds)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    m = re.search(r"ran ([0-9.]+) s", out)
    pk = re.search(r"packets in\s+(\d+)", out)
    acc = re.search(r"accepted\s+(\d+)", out)
    if not (m and pk and acc) or p.returncode != 0:
        raise SystemExit("mwpath run failed:\n" + out + err)
    handed = sum(int(x) for x in re.findall(r"handed to the owner (\d+)", out))
    return (int(pk.group(1)) / float(m.group(1)) / 1e6, int(acc.group(1)) / int(pk.group(1)),
            handed)


def run_testpmd(pcaps, seconds):
    n = len(pcaps)
    p = subprocess.Popen(["dpdk-testpmd"] + LCORES[n] + EAL +
                         ["--vdev", vdev(pcaps), "--",
                          "--forward-mode=io", "--total-num-mbufs=16384",
                          "--rxq=%d" % n, "--txq=%d" % n, "--nb-cores=%d" % n,
                          "--no-lsc-interrupt", "-i"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdin.write("start\n")
    p.stdin.flush()
    time.sleep(0.5)
    p.stdin.write("clear port stats all\n")
    p.stdin.flush()
    t0 = time.time()
    time.sleep(seconds)
    p.stdin.write("show port stats all\n")
    p.stdin.flush()
    dt = time.time() - t0
    out, _ = p.communicate("stop\nquit\n", timeout=60)
    rx = re.findall(r"RX-packets:\s+(\d+)", out)
    if not rx:
        raise SystemExit("testpmd run failed:\n" + out)
    return int(rx[0]) / dt / 1e6


def main():
    ap = argparse.ArgumentParser(
        description="mwpath beside dpdk-testpmd on the same net_pcap replay, one and "
                    "two lcores: medians of RUNS runs of SECONDS each, and the ratio.")
    ap.add_argument("build", help="the meson build directory (mwpath in BUILD/app)")
    ap.add_argument("runs", nargs="?", type=int, default=3, help="runs per figure (3)")
    ap.add_argument("seconds", nargs="?", type=float, default=3,
                    help="seconds per run (3)")
    a = ap.parse_args()
    build, runs, seconds = a.build, a.runs, a.seconds
    res = {}
    with tempfile.TemporaryDirectory() as d:
        pcaps = [os.path.join(d, "write64-q0.pcap"), os.path.join(d, "write64-q1.pcap")]
        conf = os.path.join(d, "uc.ini")
        make_pcap(pcaps[0], 0x22)
        make_pcap(pcaps[1], 0x23)
        with open(conf, "w") as f:
            f.write(CONF)
        for n in (1, 2):
            mw, tp, acc, handed = [], [], [], 0
            for _ in range(runs):
                r, a, h = run_mwpath(build, pcaps[:n], conf, seconds)
                mw.append(r)
                acc.append(a)
                handed += h
                tp.append(run_testpmd(pcaps[:n], seconds))
            ratios = [m / t for m, t in zip(mw, tp)]
            res[n] = (statistics.median(mw), statistics.median(tp), min(acc), handed,
                      statistics.median(ratios), min(ratios), max(ratios))
    print("# pcap_rate: net_pcap infinite_rx, 138-byte UC WRITE ONLY frames, one rx file "
          f"per queue, medians of {runs} runs of {seconds:g} s")
    print("# each mwpath run is followed by a testpmd run; 'pairs' is the median")
    print("# (min-max) of the ratios of those pairs, less hurt by the machine's drift")
    print(f"{'lcores':<8}{'testpmd io Mpps':>16}{'mwpath Mpps':>13}{'mwpath/testpmd':>16}"
          f"{'pairs':>20}{'accepted':>10}{'handed over':>13}")
    for n, (m, t, a, h, rm, rlo, rhi) in res.items():
        pairs = f"{rm:.2f} ({rlo:.2f}-{rhi:.2f})"
        print(f"{n:<8}{t:16.2f}{m:13.2f}{m / t:16.2f}{pairs:>20}{a * 100:9.1f}%{h:13d}")
    print(f"scaling 2/1: testpmd {res[2][1] / res[1][1]:.2f}, mwpath {res[2][0] / res[1][0]:.2f}")


if __name__ == "__main__":
    main()
