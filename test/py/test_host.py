# SPDX-License-Identifier: BSD-3-Clause
"""The exception path (docs/host.md): a port whose host keeps its
addresses.  Two hosts -- network namespaces joined by a veth pair -- and
on each mwpath drives its veth through net_af_packet with the kernel's
own stack kept off it (test/live/kernel_off.bpf.c: as a NIC bound to
DPDK), while a tap that mwpath makes holds the port's MAC and addresses
for the kernel.  Everything that is not RoCE crosses between the two.

Checked: the tap holds the port's MAC and addresses; ping, ping -6 and a
TCP service on the port's address answer (once each: no duplicate);
Debian's unmodified ib_write_bw and ibv_rc_pingpong make their TCP
exchange to the same address as their RDMA traffic, with ping and TCP
going on meanwhile; the counters of both directions; and bad input --
an interface that is not a tap, a tap or another interface holding
other addresses, progress = calls, frames of every kind the path does
not expect, and a tap deleted under a running program (RoCE goes on).
Needs root (namespaces, tc) and clang (the BPF program)."""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from common import BUILD, SRC, hung_state

sys.path.insert(0, os.path.join(SRC, "bench"))
from congestion import tool_env  # noqa: E402  (MWPATH_STATS, a sanitizer's runtime)

MWPATH = os.path.join(BUILD, "app", "mwpath")
RUN = os.path.join(BUILD, "provider", "mwpath-run")
BPF_SRC = os.path.join(SRC, "test", "live", "kernel_off.bpf.c")
EAL = ("--no-huge --no-pci --no-shconf -m 256 --log-level=pmd.net.af_packet:error "
       "--vdev=net_af_packet0,iface=%s,framecnt=4096")
SIDES = {"a": ("02:00:00:00:5a:01", "10.5.0.1", "fd05::1"),
         "b": ("02:00:00:00:5a:02", "10.5.0.2", "fd05::2")}


def sh(ns, cmd, check=True, **kw):
    return subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", cmd], check=check,
                          capture_output=True, text=True, **kw)


class Net:
    """Two namespaces and a veth pair.  mwpath_sides: the ends mwpath
    drives (the kernel's stack kept off them); the other ends get the
    kernel's addresses."""

    def __init__(self, tag, mwpath_sides, tmp):
        self.ns = {s: "mwph%s-%s" % (tag, s) for s in SIDES}
        obj = os.path.join(tmp, "kernel_off.o")
        subprocess.run(["clang", "-O2", "-target", "bpf",
                        "-I/usr/include/%s-linux-gnu" % os.uname().machine, "-c", BPF_SRC,
                        "-o", obj], check=True, capture_output=True)
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
            subprocess.run(["ip", "netns", "add", n], check=True)
        subprocess.run(["ip", "link", "add", "va", "netns", self.ns["a"], "type", "veth",
                        "peer", "name", "vb", "netns", self.ns["b"]], check=True)
        for s, ns in self.ns.items():
            dev = "v" + s
            sh(ns, "ip link set lo up && echo 1 > /sys/class/net/%s/queues/rx-0/rps_cpus"
               % dev)
            if s in mwpath_sides:
                # the kernel's stack off the interface mwpath drives
                sh(ns, "echo 1 > /proc/sys/net/ipv6/conf/{d}/disable_ipv6 && "
                   "ip link set {d} arp off promisc on up && tc qdisc add dev {d} clsact && "
                   "tc filter add dev {d} ingress bpf da obj {o} sec tc".format(d=dev, o=obj))
            else:
                mac, ip4, ip6 = SIDES[s]
                # a veth leaves TCP's checksum to the receiving kernel
                # (offload); a packet socket -- mwpath's -- gets it
                # unfinished, and the tap's kernel would drop it.  A NIC
                # puts it on the wire whole: so does this end, with
                # offload off.
                sh(ns, "ip link set {d} address {m} && ip addr add {a}/24 dev {d} && "
                   "ip addr add {a6}/64 dev {d} nodad && ethtool -K {d} tx off && "
                   "ip link set {d} up".format(d=dev, m=mac, a=ip4, a6=ip6))

    def close(self):
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def port_section(side, extra=""):
    mac, ip4, ip6 = SIDES[side]
    return ("[port 0]\nmac = %s\nipv4 = %s\nipv6 = %s\nmtu = 1024\nexception = tap\n%s"
            % (mac, ip4, ip6, extra))


def device_config(tmp, side, extra="", progress="thread"):
    path = os.path.join(tmp, "dev-%s.ini" % side)
    with open(path, "w") as f:
        f.write("[device 0]\neal = %s\nprogress = %s\n\n" % (EAL % ("v" + side), progress))
        f.write(port_section(side, extra))
    return path


def app_config(tmp, side, extra=""):
    path = os.path.join(tmp, "app-%s.ini" % side)
    with open(path, "w") as f:
        f.write(port_section(side, extra))
    return path


def tcp_echo_server(ns, ip, port, n=1):
    """A TCP service in ns on ip:port answering n connections (upper case)."""
    code = ("import socket\ns = socket.socket(socket.AF_INET6 if ':' in %r else socket.AF_INET)\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind((%r, %d)); s.listen()\nfor _ in range(%d):\n"
            "    c, _ = s.accept(); c.sendall(c.recv(100).upper()); c.close()\n"
            % (ip, ip, port, n))
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code])


def tcp_ask(ns, ip, port, what=b"hello"):
    code = ("import socket, sys, time\nfor i in range(50):\n"
            "    try:\n        s = socket.create_connection((%r, %d), timeout=3); break\n"
            "    except OSError:\n        time.sleep(0.1)\n"
            "s.sendall(%r); sys.stdout.write(s.recv(100).decode())\n" % (ip, port, what))
    return sh(ns, "%s -c %s" % (sys.executable, "'" + code.replace("'", "'\\''") + "'"),
              timeout=30).stdout


def ping(ns, ip, n=5, six=False):
    r = sh(ns, "ping %s -c %d -i 0.1 -W 2 %s" % ("-6" if six else "", n, ip), check=False,
           timeout=60)
    return r.returncode, r.stdout + r.stderr


def stats_of(err):
    """The MWPATH_STATS line's counters: {name: value}."""
    m = re.search(r"mwpath-ibverbs: mwpath0: (rx .*)", err)
    if not m:
        return None
    w = m.group(1).split()
    return {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}


def wait_iface(ns, name, timeout=15, addr="10.5.0."):
    """Wait until ns has interface name holding an address that starts
    with addr (None: the interface alone)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r = sh(ns, "ip -br addr show dev %s" % name, check=False)
        if r.returncode == 0 and (addr is None or addr in r.stdout):
            return True
        time.sleep(0.1)
    return False


def send_raw(ns, dev, frames, n=20):
    """Each frame n times onto dev, raw (a packet socket in ns)."""
    code = ("import socket,sys\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
            "s.bind((%r,0))\nfor h in sys.argv[1:]:\n"
            "    for _ in range(%d): s.send(bytes.fromhex(h))\n" % (dev, n))
    subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code]
                   + [f.hex() for f in frames], check=True)


def odd_frames(me, src):
    """Frames no RoCE port expects, to MAC me from src: a bare Ethernet
    header, LLDP, IPv4 with a bad header, 1400 random bytes, an
    802.1Q-tagged ARP, stacked VLANs."""
    return [me + src + b"\x08\x00",
            bytes.fromhex("0180c200000e") + src + b"\x88\xcc" + b"\0" * 46,
            me + src + b"\x08\x00" + b"\x4f\0\0\x10" + b"\0" * 40,
            me + src + b"\x08\x00" + os.urandom(1400),
            me + src + b"\x81\x00\x00\x05\x08\x06" + b"\0" * 28,
            me + src + b"\x88\xa8\x00\x05\x81\x00\x00\x06\x08\x00" + b"\0" * 40]


class Alongside:
    """ping both ways between a (10.5.0.1) and b (10.5.0.2), and a TCP
    service on a's address asked from b, while a program runs."""

    def __init__(self, tc, ns, port):
        self.tc, self.pings = tc, {}

        def pinger(frm, to):
            self.pings[frm] = ping(ns[frm], to, 20)
        self.ts = [threading.Thread(target=pinger, args=a) for a in (("a", "10.5.0.2"),
                                                                      ("b", "10.5.0.1"))]
        for t in self.ts:
            t.start()
        echo = tcp_echo_server(ns["a"], "10.5.0.1", port)
        tc.assertEqual(tcp_ask(ns["b"], "10.5.0.1", port), "HELLO")
        echo.wait(timeout=10)

    def check(self):
        """Every ping answered, once."""
        for t in self.ts:
            t.join()
        for rc, out in self.pings.values():
            self.tc.assertEqual(rc, 0, out)
            self.tc.assertNotIn("DUP", out)


def finish(tc, p, timeout=60):
    """p's output once it ends; if it hangs, its threads' stacks."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True,
                              text=True).stdout.split()
        stacks = "\n".join(hung_state(int(k)) for k in [p.pid] + kids)
        p.kill()
        out, err = p.communicate()
        tc.fail("hung:\n%s\n%s\n%s" % (out, err, stacks))


def server_client(tc, program, srv_argv, cli_argv, ready, during=None, timeout=120):
    """srv_argv on side a, once ready() cli_argv on side b, during() while
    they run; both must succeed: (cout, cerr, sout, serr)."""
    srv = program("a", srv_argv)
    try:
        ready()
        cli = program("b", cli_argv)
        if during is not None:
            during()
        cout, cerr = finish(tc, cli, timeout)
        sout, serr = finish(tc, srv)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.communicate()
    tc.assertEqual(cli.returncode, 0, cout + cerr + "\n-- server:\n" + sout + serr)
    tc.assertEqual(srv.returncode, 0, sout + serr)
    return cout, cerr, sout, serr


# fi_pingpong's runs: libfabric's verbs provider over UD, and RDM over it
FI_PINGPONGS = (["-p", "verbs"], ["-p", "verbs;ofi_rxd", "-e", "rdm"])


def fi_pingpong_argv(argv):
    return ["fi_pingpong"] + argv + ["-I", "1000", "-S", "64"]


def check_fi_pingpong(tc, *outs):
    """A thousand 64-byte ping-pongs, both sides."""
    for out in outs:
        tc.assertRegex(out, r"\n64\s+1k\s+=1k\s", out)


class AppPort(unittest.TestCase):
    """The mwpath application on side a; side b a plain kernel."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mwp-host-")
        cls.net = Net("a%d" % os.getpid(), ("a",), cls.tmp)
        cls.ns = cls.net.ns

    @classmethod
    def tearDownClass(cls):
        cls.net.close()

    def start_app(self, extra="", queues=1):
        cfg = app_config(self.tmp, "a", extra)
        eal = (EAL % "va").split()
        if queues > 1:
            eal[-1] += ",qpairs=%d" % queues
        p = subprocess.Popen(["ip", "netns", "exec", self.ns["a"], MWPATH] + eal
                             + ["-l", "0-%d" % (queues - 1), "--", "-c", cfg,
                                "--lcores-per-port", str(queues)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return p

    def stop_app(self, p):
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
        return out

    def test_the_host_keeps_the_ports_addresses_for_ping_and_tcp(self):
        p = self.start_app()
        try:
            self.assertTrue(wait_iface(self.ns["a"], "mwp0"), "no tap mwp0")
            link = sh(self.ns["a"], "ip -br link show dev mwp0").stdout
            self.assertIn("02:00:00:00:5a:01", link)
            addrs = sh(self.ns["a"], "ip -br addr show dev mwp0").stdout
            self.assertIn("10.5.0.1/24", addrs)
            self.assertIn("fd05::1/64", addrs)
            rc, out = ping(self.ns["b"], "10.5.0.1", 10)
            self.assertEqual(rc, 0, out)
            self.assertNotIn("DUP", out)
            self.assertIn("10 received", out)
            rc, out = ping(self.ns["b"], "fd05::1", 5, six=True)
            self.assertEqual(rc, 0, out)
            self.assertNotIn("DUP", out)
            srv = tcp_echo_server(self.ns["a"], "10.5.0.1", 7001)
            self.assertEqual(tcp_ask(self.ns["b"], "10.5.0.1", 7001), "HELLO")
            srv.wait(timeout=10)
            srv = tcp_echo_server(self.ns["a"], "fd05::1", 7002)
            self.assertEqual(tcp_ask(self.ns["b"], "fd05::1", 7002), "HELLO")
            srv.wait(timeout=10)
        finally:
            out = self.stop_app(p)
        m = re.search(r"to the host\s+(\d+)\s+not RoCE, to mwp0 \((\d+) it did not take\); "
                      r"(\d+) from it to the wire \(0 lost", out)
        self.assertIsNotNone(m, out)
        to_host, lost, from_host = map(int, m.groups())
        self.assertGreater(to_host, 25, out)	# 15 pings, ND/ARP, two TCP exchanges
        self.assertGreater(from_host, 25, out)
        self.assertEqual(lost, 0, out)
        # the kernel answered: the control path only learnt
        self.assertNotIn("echo_out", out)
        self.assertNotIn("arp_reply_out", out)
        # the tap went with the program
        self.assertFalse(wait_iface(self.ns["a"], "mwp0", 0.5, None))

    def test_frames_of_any_kind_are_counted_and_the_host_still_answers(self):
        p = self.start_app()
        try:
            self.assertTrue(wait_iface(self.ns["a"], "mwp0"))
            rc, out = ping(self.ns["b"], "10.5.0.1", 2)
            self.assertEqual(rc, 0, out)
            # from b's veth, raw: a bare Ethernet header, LLDP, a frame to another MAC,
            # IPv4 with a bad header, UDP 4791 that is not RoCE, a
            # jumbo of garbage, an 802.1Q-tagged ARP, stacked VLANs
            me = bytes.fromhex("020000005a01")
            src = bytes.fromhex("020000005aff")
            frames = odd_frames(me, src) + [
                bytes.fromhex("020000001234") + src + b"\x08\x00" + bytes.fromhex(
                    "450000280000400040060000" + "0a050002" + "0a050001") + b"\0" * 20,
                me + src + b"\x08\x00" + bytes.fromhex(
                    "4500002e0000400040110000" + "0a050002" + "0a050001")
                + bytes.fromhex("12b712b7001a0000") + b"\xff" * 18]
            send_raw(self.ns["b"], "vb", frames)
            rc, out = ping(self.ns["b"], "10.5.0.1", 3)
            self.assertEqual(rc, 0, out)
            self.assertNotIn("DUP", out)
        finally:
            out = self.stop_app(p)
        self.assertRegex(out, r"ip_trunc\s+\d+")
        self.assertRegex(out, r"to the host\s+\d+")
        # TCP for another MAC never reaches the host
        self.assertRegex(out, r"not_udp\s+20\s")

    def test_an_interface_that_is_not_a_tap_is_refused_with_one_line(self):
        p = self.start_app("exception_tap = lo\n")
        out, _ = p.communicate(timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("[port 0] exception: lo exists and is not a tap", out)

    def test_a_tap_holding_other_addresses_is_refused(self):
        sh(self.ns["a"], "ip tuntap add mode tap mwpx && ip addr add 10.9.9.9/24 dev mwpx")
        try:
            # a port of two queues needs a tap of several
            p = self.start_app("exception_tap = mwpx\n", queues=2)
            out, _ = p.communicate(timeout=30)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("mwpx is a tap of one queue and the port has 2; make it with: "
                          "ip tuntap add mode tap mwpx multi_queue", out)
            p = self.start_app("exception_tap = mwpx\n")
            out, _ = p.communicate(timeout=30)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("mwpx holds 10.9.9.9 and the port 10.5.0.1: they must agree", out)
            # an empty tap of that name (of one queue, as the port) is
            # attached to, and given them
            sh(self.ns["a"], "ip addr flush dev mwpx")
            p = self.start_app("exception_tap = mwpx\n")
            try:
                end = time.monotonic() + 15
                while "10.5.0.1" not in sh(self.ns["a"], "ip -br addr show dev mwpx").stdout:
                    self.assertIsNone(p.poll(), p.stdout.read() if p.poll() is not None else "")
                    self.assertLess(time.monotonic(), end, "mwpx never got 10.5.0.1")
                    time.sleep(0.1)
                rc, out = ping(self.ns["b"], "10.5.0.1", 3)
                self.assertEqual(rc, 0, out)
            finally:
                out = self.stop_app(p)
            self.assertIn("(attached)", out)
        finally:
            sh(self.ns["a"], "ip link del mwpx", check=False)

    def test_the_ports_address_on_another_interface_is_refused(self):
        sh(self.ns["a"], "ip link add dummyx type veth peer name dummyy && "
           "ip addr add 10.5.0.1/32 dev dummyx")
        try:
            p = self.start_app()
            out, _ = p.communicate(timeout=30)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("the port's address 10.5.0.1 is also on dummyx", out)
        finally:
            sh(self.ns["a"], "ip link del dummyx", check=False)


class Devices(unittest.TestCase):
    """Both sides mwpath devices under Debian's unmodified programs."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mwp-host-")
        cls.net = Net("d%d" % os.getpid(), ("a", "b"), cls.tmp)
        cls.ns = cls.net.ns

    @classmethod
    def tearDownClass(cls):
        cls.net.close()

    def program(self, side, argv, extra="", progress="thread"):
        cfg = device_config(self.tmp, side, extra, progress)
        env = tool_env(BUILD)
        return subprocess.Popen(["ip", "netns", "exec", self.ns[side], RUN, "-c", cfg, "--"]
                                + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)

    def finish(self, p, timeout=60):
        return finish(self, p, timeout)

    def test_perftest_exchanges_over_tcp_on_the_rdma_address_while_ping_and_tcp_go_on(self):
        bw = ["ib_write_bw", "-d", "mwpath0", "-x", "0", "-s", "4096", "-n", "20000"]

        def ready():
            self.assertTrue(wait_iface(self.ns["a"], "mwp0"))

        def during():
            # ping both ways and a TCP service, on the same addresses as
            # the RDMA traffic
            self.assertTrue(wait_iface(self.ns["b"], "mwp0"))
            Alongside(self, self.ns, 7003).check()
        cout, cerr, sout, serr = server_client(self, self.program, bw, bw + ["10.5.0.1"],
                                               ready, during)
        self.assertRegex(cout, r"\n\s*4096\s+20000\s")
        for err in (cerr, serr):
            st = stats_of(err)
            self.assertIsNotNone(st, err)
            self.assertGreater(st["to_host"], 20, err)
            self.assertGreater(st["from_host"], 20, err)
            self.assertEqual(st["host_lost"], 0, err)
        # the 20000 WRITEs, every one taken by the server's port
        self.assertGreaterEqual(stats_of(serr)["accepted"], 20000)

    def test_a_tap_deleted_under_a_running_program_leaves_roce_running(self):
        pp = ["ibv_rc_pingpong", "-d", "mwpath0", "-g", "0", "-n", "30000"]
        srv = self.program("a", pp)
        try:
            self.assertTrue(wait_iface(self.ns["a"], "mwp0"))
            cli = self.program("b", pp + ["10.5.0.1"])
            # once the pingpong runs (its TCP exchange done), the server's
            # tap goes
            time.sleep(1.5)
            sh(self.ns["a"], "ip link del mwp0")
            rc, out = ping(self.ns["b"], "10.5.0.1", 3)
            self.assertNotEqual(rc, 0, "the host answered without its tap")
            cout, cerr = cli.communicate(timeout=120)
            sout, serr = srv.communicate(timeout=60)
        finally:
            for p in (srv,):
                if p.poll() is None:
                    p.kill()
        self.assertEqual(cli.returncode, 0, cout + cerr)
        self.assertEqual(srv.returncode, 0, sout + serr)
        self.assertIn("30000 iters", cout)
        st = stats_of(serr)
        self.assertIsNotNone(st, serr)
        # the pings found no tap: lost on the way, counted; said once
        self.assertGreater(st["host_lost"], 0, serr)
        self.assertEqual(serr.count("the tap is gone"), 1, serr)

    def test_qperf_reaches_the_rdma_address_over_tcp_then_connects_through_the_cm(self):
        # qperf's server waits on TCP before it opens a device, and forks
        # a child for each test: the address exists from the start
        # (start = load), the device moves to the child (docs/host.md)
        for test, want in (("rc_bw", r"bw\s+=\s+[\d.]+ [MG]B/sec"),
                           ("rc_lat", r"latency\s+=\s+[\d.]+ us")):
            srv = self.program("a", ["qperf"])
            try:
                self.assertTrue(wait_iface(self.ns["a"], "mwp0"))
                cli = self.program("b", ["qperf", "10.5.0.1", "-cm1", "-t", "2", test])
                cout, cerr = cli.communicate(timeout=120)
            finally:
                srv.kill()
                srv.communicate()
            self.assertEqual(cli.returncode, 0, cout + cerr)
            self.assertRegex(cout, want, cout + cerr)
            st = stats_of(cerr)
            self.assertIsNotNone(st, cerr)
            self.assertGreater(st["to_host"], 5, cerr)	# qperf's TCP
            self.assertGreater(st["accepted"], 100, cerr)	# the RDMA traffic

    def test_fi_pingpong_over_verbs_datagrams_and_rdm(self):
        # libfabric's fabtests: a TCP exchange to the RDMA address, then
        # libfabric's verbs provider (UD; RDM over it)
        for argv in FI_PINGPONGS:
            pp = fi_pingpong_argv(argv)
            cout, cerr, sout, serr = server_client(
                self, self.program, pp, pp + ["10.5.0.1"],
                lambda: self.assertTrue(wait_iface(self.ns["a"], "mwp0")))
            check_fi_pingpong(self, cout, sout)
            st = stats_of(cerr)
            self.assertIsNotNone(st, cerr)
            self.assertGreater(st["to_host"], 5, cerr)	# the TCP exchange
            self.assertGreaterEqual(st["accepted"], 1000, cerr)

    def test_progress_calls_is_refused_with_one_line(self):
        p = self.program("a", ["ibv_devinfo", "-d", "mwpath0"], progress="calls")
        out, err = p.communicate(timeout=60)
        self.assertIn("exception = tap needs progress = thread or lcore", err)


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("test_host: needs root (network namespaces)", file=sys.stderr)
        sys.exit(77)
    unittest.main(verbosity=2)
