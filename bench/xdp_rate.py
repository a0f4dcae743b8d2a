#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The RoCE rate mwpath takes through net_af_xdp and through
net_af_packet on the same veth (docs/host.md "AF_XDP"), alternated in one
run.  Two network namespaces joined by a veth pair: in one, testpmd
replays pcap_rate.py's 64-byte RDMA WRITEs (net_pcap, infinite_rx) onto
its end with net_af_packet, as fast as it can, on CPU 0; in the other,
mwpath (one polling lcore, on CPU 1) answers them on its end --

  af_xdp     the kernel holds the port's address on the interface, and
             mwpath's XDP program hands mwpath the RoCE (net_af_xdp);
  af_packet  the kernel's stack kept off the interface (tc ingress drop,
             test/live/kernel_off.bpf.c), mwpath on a packet socket.

Measured: what mwpath accepted a second (its port's rx counter, by
telemetry, over SECONDS after a warm-up), medians of RUNS windows, and
what the generator offered.  The veth's kernel work is the generator's
CPU's (a veth delivers on the sender's), so the figure is the receive
path's, not the link's.  Needs root and clang.

    bench/xdp_rate.py BUILD [RUNS] [SECONDS] [--json FILE]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "gen"))
import benchjson  # noqa: E402
import pcap_rate  # noqa: E402

KERNEL_OFF = os.path.join(HERE, "..", "test", "live", "kernel_off.bpf.c")
EAL = ["--no-huge", "--no-pci", "--no-shconf", "-m", "512",
       "--log-level=lib.eal:error", "--log-level=lib.telemetry:error",
       "--log-level=pmd.net.af_packet:error", "--log-level=pmd.net.af_xdp:error"]


def sh(ns, cmd):
    subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", cmd], check=True,
                   capture_output=True, text=True)


class Net:
    def __init__(self, tmp):
        self.ns = {s: "mwpxr%d%s" % (os.getpid(), s) for s in "ab"}
        self.obj = os.path.join(tmp, "kernel_off.o")
        subprocess.run(["clang", "-O2", "-target", "bpf",
                        "-I/usr/include/%s-linux-gnu" % os.uname().machine, "-c", KERNEL_OFF,
                        "-o", self.obj], check=True)
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "add", n], check=True)
        subprocess.run(["ip", "link", "add", "va", "netns", self.ns["a"], "type", "veth",
                        "peer", "name", "vb", "netns", self.ns["b"]], check=True)
        sh(self.ns["a"], "ip link set lo up && ip link set va address 02:00:00:00:00:01 && "
           "ip link set va up")
        sh(self.ns["b"], "ip link set lo up && ip link set vb address 02:00:00:00:00:02 && "
           "ip link set vb up")

    def mode(self, m):
        """af_xdp: the kernel's address on va; af_packet: the kernel off it."""
        a = self.ns["a"]
        subprocess.run(["ip", "netns", "exec", a, "tc", "qdisc", "del", "dev", "va", "clsact"],
                       capture_output=True)
        subprocess.run(["ip", "netns", "exec", a, "ip", "addr", "flush", "dev", "va"],
                       capture_output=True)
        if m == "af_xdp":
            sh(a, "ip addr add 192.0.2.1/24 dev va")
        else:
            sh(a, "tc qdisc add dev va clsact && "
               "tc filter add dev va ingress bpf da obj %s sec tc" % self.obj)

    def close(self):
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def generator(net, pcap, tag):
    """testpmd replaying pcap onto vb, on CPU 0 (its stdin held open: at its
    end, testpmd -a stops)."""
    return subprocess.Popen(
        ["ip", "netns", "exec", net.ns["b"], "dpdk-testpmd", "--lcores", "0@0,1@0"] + EAL +
        ["--file-prefix", "mwp_xdp_rate_gen_%d_%s" % (os.getpid(), tag),
         "--vdev", pcap_rate.vdev([pcap]), "--vdev", "net_af_packet1,iface=vb,framecnt=4096",
         "--", "--forward-mode=io", "--total-num-mbufs=16384", "--nb-cores=1",
         "--no-lsc-interrupt", "--stats-period=0", "-a"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def offered(gen):
    """What the generator sent onto vb (port 1), from its exit statistics."""
    gen.terminate()
    out, _ = gen.communicate(timeout=60)
    tx = re.findall(r"Forward statistics for port 1.*?TX-packets:\s+(\d+)", out, re.S)
    return int(tx[-1]) if tx else None


def run(build, net, pcap, conf, mode, warmup, seconds, tag):
    net.mode(mode)
    vdev = ("net_af_xdp0,iface=va" if mode == "af_xdp" else
            "net_af_packet0,iface=va,framecnt=4096")
    gen = generator(net, pcap, tag)
    prefix = "mwp_xdp_rate_%d_%s" % (os.getpid(), tag)
    try:
        w, out = pcap_rate.run_timed(
            "mwpath", ["ip", "netns", "exec", net.ns["a"], os.path.join(build, "app", "mwpath"),
                       "-l", "0-1"] + EAL +
            ["--file-prefix", prefix, "--vdev", vdev, "--", "-c", conf],
            prefix, warmup, seconds, True)
    finally:
        sent = offered(gen)
    acc = re.search(r"accepted\s+(\d+)", out)
    pk = re.search(r"packets in\s+(\d+)", out)
    w["accepted_share"] = int(acc.group(1)) / int(pk.group(1)) if acc and pk and \
        int(pk.group(1)) else None
    w["offered"] = sent
    if mode == "af_xdp" and "RoCE to mwpath by the XDP program" not in out:
        sys.exit("xdp_rate: the af_xdp run has no XDP program:\n" + out[-2000:])
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("runs", nargs="?", type=int, default=5)
    ap.add_argument("seconds", nargs="?", type=float, default=2)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    modes = ("af_packet", "af_xdp")
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "w.pcap")
        pcap_rate.make_pcap(pcap)
        conf = os.path.join(tmp, "port.ini")
        with open(conf, "w") as f:
            f.write(pcap_rate.CONF)
        net = Net(tmp)
        mpps = {m: [] for m in modes}
        share = {m: [] for m in modes}
        try:
            for i in range(a.runs):
                for m in modes:
                    w = run(a.build, net, pcap, conf, m, a.warmup, a.seconds, "%s%d" % (m, i))
                    mpps[m].append(w["mpps"])
                    share[m].append(w["accepted_share"])
                    print("run %d %-9s %.3f Mpps (accepted %.3f of what came; offered %s, "
                          "window %d packets)" % (i, m, w["mpps"], w["accepted_share"] or 0,
                                                  w["offered"], w["packets"]), file=sys.stderr)
        finally:
            net.close()
    med = {m: statistics.median(mpps[m]) for m in modes}
    res = {"af_packet_mpps": med["af_packet"], "af_xdp_mpps": med["af_xdp"],
           "ratio": med["af_xdp"] / med["af_packet"] if med["af_packet"] else None,
           "runs": mpps, "accepted_share": share, "seconds": a.seconds}
    print("responder, 64 B WRITE from a veth, one lcore: net_af_packet %.3f Mpps, "
          "net_af_xdp %.3f Mpps, af_xdp/af_packet %.2f (medians of %d)"
          % (med["af_packet"], med["af_xdp"], res["ratio"], a.runs))
    if a.json:
        benchjson.write(a.json, benchjson.document("xdp_rate", res, a.build))


if __name__ == "__main__":
    main()
