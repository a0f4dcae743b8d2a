#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two mwpath senders into one receiver through a Linux bottleneck that
marks ECN, with congestion control on and off (docs/congestion.md).

    bench/congestion.py [BUILD_DIR] [--seconds S] [--rate MBIT] [--json FILE]
                        [--plot PNG] [--only on|off]

Four network namespaces: two senders (s1, s2), a receiver (r) and a
switch (sw) bridging their veths.  The switch's port towards the
receiver is the bottleneck: htb at --rate Mb/s (default 100) with a
500 KB FIFO (then tail drops), and ECN marking as a switch configured for
DCQCN does it, RED-like on the queue: no mark below 15 KB, every
ECN-capable frame above 45 KB, linearly between.  This kernel has no
marking qdisc (no red, codel or fq_codel), so the marking is a tc
egress program, test/live/ecn_mark.bpf.c (built here with clang), on a
virtual queue that drains at the bottleneck's rate: the htb class's
backlog.  Every veth end steers what it receives to one CPU (RPS), so
that no link reorders frames.  Each sender is Debian's unmodified
ib_write_bw (4 KiB WRITEs, RC, 80 outstanding) on an mwpath device on its
veth (net_af_packet), the second started 0.3 s after the first; the receiver runs one ib_write_bw server, on a
device of its own, for each.  perftest's TCP exchange goes over the
kernel's addresses on the same veths (10.9.0.1-3), the RDMA traffic to
the devices' (10.9.0.11-14).  Every 100 ms a loop in the switch reads
what each sender put on the wire (its veth's rx bytes) and the
bottleneck's queue (tc's backlog).

Printed for each run: each sender's rate (the switch's count, over the
run without its first second, and perftest's BW average), Jain's
fairness index of the two, the queue's mean and maximum, the FIFO's
drops, the requests mwpath sent again, the CE frames seen and the CNPs
sent and received.  --plot draws both runs' rates over time.  Needs
root (namespaces, tc).  Exit 0, or 1 if a run did not complete.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

EAL = ("--no-huge --no-pci --no-shconf -m 256 --log-level=pmd.net.af_packet:error "
       "--vdev=net_af_packet0,iface=%s,framecnt=8192")
SENDERS = ("s1", "s2")
PORTS = {"s1": 18611, "s2": 18612}
KERNEL_IP = {"s1": "10.9.0.1", "s2": "10.9.0.2", "r": "10.9.0.3"}
# the devices: a sender's own, and the receiver's one for each sender
DEVICES = {"s1": ("s1", "02:00:00:09:00:11", "10.9.0.11"),
           "s2": ("s2", "02:00:00:09:00:12", "10.9.0.12"),
           "r1": ("r", "02:00:00:09:00:13", "10.9.0.13"),
           "r2": ("r", "02:00:00:09:00:14", "10.9.0.14")}
SIZE = 4096
# Until its first CNP comes back a QP sends at its line, and a veth
# takes far more than line_rate: a sender's first window must fit in the
# FIFO (80 x 4 KiB is 350 KB in frames) and the two first windows must
# not come at once; two windows together still overflow it without
# DCQCN (docs/congestion.md).
STAGGER_S = 0.3
TX_DEPTH = 80
DCQCN_TIMEOUT = 18
SAMPLE_S = 0.1
QUEUE_LIMIT = 500000		# the bottleneck's FIFO, bytes
KMIN, KMAX = 15000, 45000	# ECN marking (ecn_mark.bpf.c)
BPF_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "live",
                       "ecn_mark.bpf.c")


def build_marker(out_dir, rate_mbit):
    """ecn_mark.bpf.c for this bottleneck, with Debian's clang: the object."""
    obj = os.path.join(out_dir, "ecn_mark.o")
    subprocess.run(["clang", "-O2", "-g", "-target", "bpf",
                    "-I/usr/include/%s-linux-gnu" % os.uname().machine,
                    "-DRATE_BPS=%dULL" % (rate_mbit * 1000000), "-DKMIN=%d" % KMIN,
                    "-DKMAX=%d" % KMAX, "-c", BPF_SRC, "-o", obj], check=True,
                   capture_output=True)
    return obj


class Net:
    """The namespaces, veths, bridge and bottleneck; removed by close()."""

    def __init__(self, rate_mbit, tag, bpf_obj):
        self.ns = {n: "mwpcc%s-%s" % (tag, n) for n in ("s1", "s2", "r", "sw")}
        self.made = []
        try:
            for n in self.ns.values():
                self.ip("netns", "add", n)
                self.made.append(n)
            self.sh("sw", "ip link add br0 type bridge && ip link set br0 up")
            for host, port in (("s1", "sw1"), ("s2", "sw2"), ("r", "sw3")):
                dev = self.ifname(host)
                self.ip("link", "add", dev, "netns", self.ns[host], "type", "veth",
                        "peer", "name", port, "netns", self.ns["sw"])
                self.sh(host, "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && "
                        "ip link set lo up && ip addr add %s/24 dev %s && "
                        "ip link set %s promisc on up" % (KERNEL_IP[host], dev, dev))
                self.sh("sw", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && "
                        "ip link set %s master br0 && ip link set %s up" % (port, port))
                # A veth hands a frame to its peer's backlog on the CPU
                # that sends it, and the htb sends from whichever CPU
                # dequeues it: frames of one flow would be taken by two
                # CPUs at once and overtake each other (no wire does
                # that; the receivers counted psn_ahead, the senders
                # went back).  RPS to one CPU keeps each link in order.
                self.sh(host, "echo 1 > /sys/class/net/%s/queues/rx-0/rps_cpus" % dev)
                self.sh("sw", "echo 1 > /sys/class/net/%s/queues/rx-0/rps_cpus" % port)
            # the bottleneck, towards the receiver
            self.sh("sw", "tc qdisc add dev sw3 root handle 1: htb default 10 r2q 100 && "
                    "tc class add dev sw3 parent 1: classid 1:10 htb rate {r}mbit "
                    "ceil {r}mbit && "
                    "tc qdisc add dev sw3 parent 1:10 handle 10: bfifo limit {lim} && "
                    "tc qdisc add dev sw3 clsact && "
                    "tc filter add dev sw3 egress bpf da obj {o} sec tc".format(
                        r=rate_mbit, lim=QUEUE_LIMIT, o=bpf_obj))
        except Exception:
            self.close()
            raise

    @staticmethod
    def ifname(host):
        return "%se" % host

    @staticmethod
    def ip(*args):
        subprocess.run(["ip"] + list(args), check=True, capture_output=True)

    def sh(self, host, cmd):
        subprocess.run(["ip", "netns", "exec", self.ns[host], "sh", "-c", cmd],
                       check=True, capture_output=True)

    def cmd(self, host, argv):
        return ["ip", "netns", "exec", self.ns[host]] + list(argv)

    def queue_stats(self):
        """The bottleneck FIFO's counters: frames sent and dropped."""
        out = subprocess.run(self.cmd("sw", ["tc", "-s", "qdisc", "show", "dev", "sw3"]),
                             capture_output=True, text=True).stdout
        m = re.search(r"qdisc bfifo 10:.*?Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", out,
                      re.S)
        return dict(zip(("bytes", "frames", "dropped"), map(int, m.groups()))) if m else {}

    def close(self):
        for n in self.made:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
        self.made = []


def dcqcn_keys(rate_mbit):
    """DCQCN's parameters for this network.  ConnectX's defaults are for
    links of 25-200 Gb/s and round trips of microseconds: a CNP every few
    us, alpha decaying every 1 us, the rate raised every 300 us.  Here a
    frame takes 80 us at the bottleneck and a round trip through its queue
    a few ms, so the times are those of this network (a cut at most once a
    round trip, alpha per round trip, increases every few), the steps
    scaled to its rate, and F as in the paper (5).  Each sender's line is
    twice the bottleneck: two hosts into one port, 4:1."""
    return {"line_rate": 2 * rate_mbit, "min_time_between_cnps": 100,
            "rate_reduce_monitor_period": 2000, "dce_tcp_rtt": 2000, "dce_tcp_g": 960,
            "rpg_time_reset": 5000, "rpg_byte_reset": 65536, "rpg_threshold": 5,
            "rpg_ai_rate": max(1, rate_mbit // 50), "rpg_hai_rate": max(1, rate_mbit // 10),
            "rpg_min_rate": 1}


def device_config(path, name, cc, progress, rate_mbit):
    host, mac, ip = DEVICES[name]
    with open(path, "w") as f:
        f.write("[device 0]\neal = %s\nprogress = %s\n\n[port 0]\nmac = %s\nipv4 = %s\n"
                "mtu = 1024\ncc = %s\n" % (EAL % Net.ifname(host), progress, mac, ip, cc))
        for k, v in dcqcn_keys(rate_mbit).items():
            f.write("%s = %s\n" % (k, v))


SAMPLER = r"""
import re, subprocess, sys, time
def rx(port):
    with open("/sys/class/net/%s/statistics/rx_bytes" % port) as f:
        return int(f.read())
t0 = time.monotonic()
while True:
    q = subprocess.run(["tc", "-s", "qdisc", "show", "dev", "sw3"], capture_output=True,
                       text=True).stdout
    m = re.search(r"qdisc bfifo 10:.*?backlog (\d+)b", q, re.S)
    print("%.4f %d %d %s" % (time.monotonic() - t0, rx("sw1"), rx("sw2"),
                             m.group(1) if m else "0"), flush=True)
    time.sleep(%(s)s)
"""


def sampler(net):
    """A loop in the switch: every SAMPLE_S, the time, each sender's rx
    bytes on its switch port and the bottleneck's backlog."""
    return subprocess.Popen(net.cmd("sw", [sys.executable, "-c",
                                           SAMPLER.replace("%(s)s", str(SAMPLE_S))]),
                            stdout=subprocess.PIPE, text=True)


def stats_of(err):
    m = re.search(r"mwpath0: rx (\d+) accepted (\d+) ctrl (\d+) tx (\d+) wr_api \d+ "
                  r"retrans (\d+) ce (\d+) cnp_tx (\d+) cnp_rx (\d+) imissed (\d+)"
                  r" asides_long (\d+) asides_ended (\d+)", err)
    if not m:
        return None
    st = dict(zip(("rx", "accepted", "ctrl", "tx", "retrans", "ce", "cnp_tx", "cnp_rx",
                   "imissed", "asides_long", "asides_ended"),
                  map(int, m.groups())))
    # and the drops by reason that follow
    rest = err[m.end():].split("\n", 1)[0].split()
    st["drops"] = {rest[i]: int(rest[i + 1]) for i in range(0, len(rest) - 1, 2)
                   if rest[i + 1].isdigit()}
    return st


def bw_of(out):
    m = re.search(r"^\s*%d\s+\d+\s+[\d.]+\s+([\d.]+)" % SIZE, out, re.M)
    return float(m.group(1)) if m else None


def tool_env(build):
    """The tools' environment: MWPATH_STATS for the devices' counters, and
    in a sanitized build the sanitizer's runtime loaded first into
    Debian's (unsanitized) perftest, leaks not checked there."""
    env = dict(os.environ, MWPATH_STATS="1")
    ldd = subprocess.run(["ldd", os.path.join(build, "provider", "libmwpath-ibverbs.so")],
                         capture_output=True, text=True).stdout
    m = re.search(r"(\S*lib[at]san\.so\S*) => (\S+)", ldd)
    if m:
        env["LD_PRELOAD"] = m.group(2)
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    return env


def jain(xs):
    s = sum(xs)
    return s * s / (len(xs) * sum(x * x for x in xs)) if s > 0 else 0.0


def run(build, rate, seconds, cc, tag):
    """One run with cc ("dcqcn" or "off") on the senders: its figures."""
    run_bin = os.path.join(build, "provider", "mwpath-run")
    env = tool_env(build)
    procs, res = [], {"cc": cc, "rate_mbit": rate, "seconds": seconds}
    tmpd = tempfile.TemporaryDirectory()
    tmp = tmpd.name
    net = Net(rate, tag, build_marker(tmp, rate))
    try:
        if True:
            for name in DEVICES:
                # the servers' progress runs on its thread (the server
                # sleeps through a WRITE test); the senders' in perftest's
                # own polling
                device_config(os.path.join(tmp, name + ".ini"), name, cc,
                              "thread" if name.startswith("r") else "calls", rate)
            common = ["ib_write_bw", "-d", "mwpath0", "-x", "0", "-s", str(SIZE),
                      "-D", str(seconds), "-t", str(TX_DEPTH)]
            if cc == "dcqcn":
                # The local ACK timeout 1 s (4.096 us << 18), not perftest's
                # 67 ms: a margin for a sender whose thread the machine
                # does not run for that long (six busy threads and CI's
                # other test on two cores).  A pass reads its rx burst
                # before the engine's timers, so the ACKs waiting in the
                # ring stop the timer -- but one not run while its ACKs
                # were still on the way would send again what was never
                # lost.  A frame lost is still sent again at once (the
                # receiver's sequence NAK).
                common += ["-u", str(DCQCN_TIMEOUT)]
            for s, r in (("s1", "r1"), ("s2", "r2")):
                procs.append((r, subprocess.Popen(
                    net.cmd("r", [run_bin, "-c", os.path.join(tmp, r + ".ini"), "--"] +
                            common + ["-p", str(PORTS[s])]),
                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
            time.sleep(2)
            smp = sampler(net)
            for i, s in enumerate(SENDERS):
                if i > 0:
                    time.sleep(STAGGER_S)
                procs.append((s, subprocess.Popen(
                    net.cmd(s, [run_bin, "-c", os.path.join(tmp, s + ".ini"), "--"] +
                            common + ["-p", str(PORTS[s]), KERNEL_IP["r"]]),
                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
            outs = {}
            for name, p in procs:
                try:
                    out, err = p.communicate(timeout=seconds + 60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    out, err = p.communicate()
                outs[name] = (p.returncode, out, err)
            smp.kill()
            samples = smp.communicate()[0]
            res["queue"] = net.queue_stats()
            res["links"] = {h: subprocess.run(net.cmd(h, ["ip", "-s", "link"]),
                                              capture_output=True, text=True).stdout
                            for h in ("s1", "r", "sw")}
    finally:
        for _, p in procs:
            if p.poll() is None:
                p.kill()
        net.close()
        tmpd.cleanup()
    res["ok"] = all(rc == 0 for rc, _, _ in outs.values())
    res["errors"] = {n: (rc, err[-2000:]) for n, (rc, _, err) in outs.items() if rc != 0}
    res["devices"] = {n: stats_of(err) for n, (_, _, err) in outs.items()}
    res["perftest_mbit"] = {s: bw_of(outs[s][1]) for s in SENDERS}
    if res["perftest_mbit"]["s1"] is not None:
        # perftest's BW average is MB/s
        res["perftest_mbit"] = {s: (v * 8 if v is not None else None)
                                for s, v in res["perftest_mbit"].items()}
    # the switch's samples: rates over time
    rows = []
    for line in samples.splitlines():
        f = line.split()
        if len(f) == 4 and all(re.match(r"^[\d.]+$", x) for x in f):
            rows.append((float(f[0]), int(f[1]), int(f[2]), int(f[3])))
    series = []
    for a, b in zip(rows, rows[1:]):
        dt = b[0] - a[0]
        if dt > 0:
            series.append((b[0] - rows[0][0], (b[1] - a[1]) * 8 / dt / 1e6,
                           (b[2] - a[2]) * 8 / dt / 1e6, b[3]))
    res["series"] = series
    # the steady part: both senders started (after the first second),
    # neither finished (a rate above a tenth of the bottleneck's share)
    busy = [r for r in series if r[0] > 1.0 and r[1] > rate / 20 and r[2] > rate / 20]
    if busy:
        res["mbit"] = {"s1": statistics.mean(r[1] for r in busy),
                       "s2": statistics.mean(r[2] for r in busy)}
        res["jain"] = jain(list(res["mbit"].values()))
        res["queue_bytes_mean"] = statistics.mean(r[3] for r in busy)
        res["queue_bytes_max"] = max(r[3] for r in busy)
        res["steady_s"] = len(busy) * SAMPLE_S
    return res


def report(r):
    lines = ["congestion control %s, bottleneck %d Mb/s, %d s:" % (r["cc"], r["rate_mbit"],
                                                                   r["seconds"])]
    if not r["ok"]:
        lines.append("  FAILED: %s" % r["errors"])
    if "mbit" in r:
        lines.append("  senders at the switch: s1 %.1f Mb/s, s2 %.1f Mb/s (Jain %.3f, "
                     "over %.1f s)" % (r["mbit"]["s1"], r["mbit"]["s2"], r["jain"],
                                       r["steady_s"]))
        lines.append("  bottleneck queue: mean %.0f B, max %d B" % (r["queue_bytes_mean"],
                                                                    r["queue_bytes_max"]))
    lines.append("  perftest BW average: s1 %s, s2 %s Mb/s" % (
        r["perftest_mbit"]["s1"], r["perftest_mbit"]["s2"]))
    lines.append("  bottleneck FIFO: %s" % r.get("queue"))
    for n, st in sorted(r["devices"].items()):
        if st:
            lines.append("  %s: sent again %d, ce %d, cnps sent %d, received %d, missed "
                         "by the device %d; drops %s"
                         % (n, st["retrans"], st["ce"], st["cnp_tx"], st["cnp_rx"],
                            st["imissed"], st["drops"] or "none"))
    return "\n".join(lines)


def plot(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 3.2 * len(runs)), sharex=True)
    if len(runs) == 1:
        axes = [axes]
    for ax, r in zip(axes, runs):
        t = [x[0] for x in r["series"]]
        ax.plot(t, [x[1] for x in r["series"]], label="sender 1")
        ax.plot(t, [x[2] for x in r["series"]], label="sender 2")
        ax.axhline(r["rate_mbit"], color="grey", linestyle=":", label="bottleneck")
        ax.set_ylabel("Mb/s")
        ax.set_title("congestion control %s" % r["cc"])
        q = ax.twinx()
        q.plot(t, [x[3] / 1000 for x in r["series"]], color="tab:red", alpha=0.4,
               label="queue (KB)")
        q.set_ylabel("queue, KB")
        ax.legend(loc="upper left", fontsize="small")
    axes[-1].set_xlabel("seconds")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--only", choices=("on", "off"))
    a = ap.parse_args()
    runs = []
    for cc in ("dcqcn", "off"):
        if a.only and (cc == "off") != (a.only == "off"):
            continue
        r = run(os.path.abspath(a.build), a.rate, a.seconds, cc, str(os.getpid()))
        print(report(r), flush=True)
        runs.append(r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(runs, f, indent=1)
    if a.plot:
        plot(runs, a.plot)
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
