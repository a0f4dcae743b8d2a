# SPDX-License-Identifier: BSD-3-Clause
"""net_af_xdp (docs/host.md "AF_XDP"): a kernel interface stays the
kernel's -- its addresses, ARP, ND, TCP -- and mwpath's XDP program
(pmd/xdp/mwp_xdp.bpf.c) hands mwpath only RoCEv2 for the port's
addresses.  Two hosts -- network namespaces joined by a veth pair, the
kernel holding 10.5.0.1 and 10.5.0.2 -- and mwpath on each veth through
net_af_xdp.

Checked, with Debian's unmodified programs: ib_write_bw makes its TCP
exchange to the same address as its RDMA traffic while ping and a TCP
service on it go on; qperf -cm1 (rc_bw, rc_lat); fi_pingpong -p verbs
(datagram and RDM endpoints); rping through the RDMA CM with the
kernel's neighbour tables emptied first (mwpath asks the kernel to
resolve, and learns what it found).  Bad input: frames of every kind from
the wire (counted by the program's verdicts; RoCE that is garbage by
mwpath's drop counters), an address the interface does not hold, a MAC
that is not the interface's, an XDP program that does not load, another
program on the interface, one left by a killed mwpath, and exception =
tap on such a port.  Needs root (namespaces, XDP) and clang."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from common import BUILD
import test_host
from test_host import (FI_PINGPONGS, Alongside, check_fi_pingpong, finish, fi_pingpong_argv,
                       odd_frames, ping, send_raw, server_client, sh, stats_of, tcp_ask,
                       tcp_echo_server)

sys.path.insert(0, os.path.join(os.environ["MWPATH_SRC"], "bench"))
from congestion import tool_env  # noqa: E402

MWPATH = os.path.join(BUILD, "app", "mwpath")
RUN = os.path.join(BUILD, "provider", "mwpath-run")
EAL = "--no-huge --no-pci --no-shconf -m 512 --vdev=net_af_xdp0,iface=%s"
# where the servers wait for their clients (TCP)
PERFTEST_PORT = 18515		# ib_write_bw, ibv_rc_pingpong
QPERF_PORT = 19765
FI_PINGPONG_PORT = 47592
FOREIGN = """#include <linux/bpf.h>
__attribute__((section("xdp"), used)) int pass(struct xdp_md *c) { (void)c; return XDP_PASS; }
char _license[] __attribute__((section("license"), used)) = "GPL";
"""


def port_section(side, extra=""):
    _, ip4, ip6 = test_host.SIDES[side]
    return "[port 0]\nipv4 = %s\nipv6 = %s\nmtu = 1024\n%s" % (ip4, ip6, extra)


class XdpTest(unittest.TestCase):
    tag = "x"
    mtu = 1024

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mwp-xdp-")
        # the kernel holds both ends' addresses: no side is kept off
        cls.net = test_host.Net("x%s%d" % (cls.tag, os.getpid()), (), cls.tmp)
        cls.ns = cls.net.ns

    @classmethod
    def tearDownClass(cls):
        cls.net.close()

    def program(self, side, argv, extra="", env=None):
        path = os.path.join(self.tmp, "dev-%s.ini" % side)
        with open(path, "w") as f:
            f.write("[device 0]\neal = %s\nprogress = thread\n\n" % (EAL % ("v" + side)))
            f.write(port_section(side, extra).replace("mtu = 1024", "mtu = %d" % self.mtu))
        e = tool_env(BUILD)
        e.update(env or {})
        return subprocess.Popen(["ip", "netns", "exec", self.ns[side], RUN, "-c", path, "--"]
                                + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=e)

    def finish(self, p, timeout=90):
        return finish(self, p, timeout)

    def wait_server(self, tcp_port=None, timeout=30):
        """Until side a's server listens on tcp_port, or (a server reached
        through the CM alone) until its device has put mwpath's program
        on va, and a moment for its listener."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if tcp_port is not None:
                if sh(self.ns["a"], "ss -Hltn 'sport = :%d'" % tcp_port).stdout.strip():
                    return
            elif "prog/xdp" in sh(self.ns["a"], "ip link show va").stdout:
                time.sleep(0.5)
                return
            time.sleep(0.05)
        self.fail("the server did not start in %d s" % timeout)

    def pair(self, argv_srv, argv_cli, tcp_port, during=None):
        """Server on a, client on b (to 10.5.0.1): both outputs."""
        return server_client(self, self.program, argv_srv, argv_cli,
                             lambda: self.wait_server(tcp_port), during)

    def assert_split(self, err, roce_at_least):
        """The device's counters: RoCE went to mwpath, nothing else did,
        and the program's other frames went to the kernel."""
        st = stats_of(err)
        self.assertIsNotNone(st, err)
        self.assertGreaterEqual(st["xdp_to_mwpath"], roce_at_least, err)
        self.assertEqual(st["xdp_no_socket"], 0, err)
        self.assertEqual(st["ctrl"], 0, err)	# ARP and ND are the kernel's
        return st


class Devices(XdpTest):
    """Both sides mwpath devices on net_af_xdp."""
    tag = "d"

    def test_perftest_exchanges_over_tcp_on_the_rdma_address_while_ping_and_tcp_go_on(self):
        bw = ["ib_write_bw", "-d", "mwpath0", "-x", "0", "-s", "4096", "-n", "20000"]
        cout, cerr, sout, serr = self.pair(bw, bw + ["10.5.0.1"], PERFTEST_PORT,
                                           lambda: Alongside(self, self.ns, 7003).check())
        self.assertRegex(cout, r"\n\s*4096\s+20000\s")
        # 20000 WRITEs of 4 frames (path MTU 1024) to the server's mwpath;
        # perftest's TCP, the pings and the service to its kernel
        st = self.assert_split(serr, 80000)
        self.assertGreaterEqual(st["accepted"], 80000, serr)
        self.assertGreater(st["xdp_to_kernel"], 40, serr)
        self.assert_split(cerr, 100)

    def test_a_path_mtu_of_2048_on_a_link_that_carries_it(self):
        for ns in self.ns.values():
            sh(ns, "ip link set dev va mtu 2144 2>/dev/null; ip link set dev vb mtu 2144 "
               "2>/dev/null; true")
        try:
            bw = ["ib_write_bw", "-d", "mwpath0", "-x", "0", "-s", "65536", "-n", "500"]
            self.mtu = 2048
            cout, cerr, sout, serr = self.pair(bw, bw + ["10.5.0.1"], PERFTEST_PORT)
        finally:
            self.mtu = 1024
            for ns in self.ns.values():
                sh(ns, "ip link set dev va mtu 1500 2>/dev/null; ip link set dev vb mtu 1500 "
                   "2>/dev/null; true")
        self.assertRegex(cout, r"\n\s*65536\s+500\s")
        # 500 WRITEs of 32 frames of 2048 bytes, none missed
        st = self.assert_split(serr, 16000)
        self.assertEqual(st["imissed"], 0, serr)

    def test_pingpong_exchanges_over_tcp_on_the_rdma_address(self):
        pp = ["ibv_rc_pingpong", "-d", "mwpath0", "-g", "0", "-n", "2000"]
        cout, cerr, sout, serr = self.pair(pp, pp + ["10.5.0.1"], PERFTEST_PORT)
        self.assertIn("2000 iters", cout)
        self.assert_split(cerr, 2000)

    def test_qperf_reaches_the_rdma_address_over_tcp_then_connects_through_the_cm(self):
        for test, want in (("rc_bw", r"bw\s+=\s+[\d.]+ [MG]B/sec"),
                           ("rc_lat", r"latency\s+=\s+[\d.]+ us")):
            srv = self.program("a", ["qperf"])
            try:
                self.wait_server(QPERF_PORT)
                cli = self.program("b", ["qperf", "10.5.0.1", "-cm1", "-t", "2", test])
                cout, cerr = self.finish(cli, 120)
            finally:
                srv.kill()
                srv.communicate()
            self.assertEqual(cli.returncode, 0, cout + cerr)
            self.assertRegex(cout, want, cout + cerr)
            self.assert_split(cerr, 100)

    def test_fi_pingpong_over_verbs_datagrams_and_rdm(self):
        for argv in FI_PINGPONGS:
            pp = fi_pingpong_argv(argv)
            cout, cerr, sout, serr = self.pair(pp, pp + ["10.5.0.1"], FI_PINGPONG_PORT)
            check_fi_pingpong(self, cout, sout)
            self.assert_split(cerr, 1000)

    def test_the_kernel_resolves_the_cms_peer_with_empty_neighbour_tables(self):
        for ns in self.ns.values():
            sh(ns, "ip neigh flush all")
        rp = ["rping", "-C", "100", "-V", "-a", "10.5.0.1"]
        cout, cerr, sout, serr = self.pair(rp + ["-s"], rp + ["-c"], None)
        st = self.assert_split(cerr, 100)
        self.assertGreaterEqual(st["neigh_asked"], 1, cerr)
        self.assertGreaterEqual(st["neigh_reports"], 1, cerr)
        self.assertIn("02:00:00:00:5a:01", sh(self.ns["b"], "ip neigh show 10.5.0.1").stdout)


class App(XdpTest):
    """The mwpath application on side a; side b a plain kernel."""
    tag = "a"

    def start_app(self, extra="", env=None):
        path = os.path.join(self.tmp, "app.ini")
        with open(path, "w") as f:
            f.write(port_section("a", extra))
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.Popen(["ip", "netns", "exec", self.ns["a"], MWPATH]
                                + (EAL % "va").split() + ["-l", "0", "--", "-c", path],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=e)

    def stop_app(self, p):
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
        return out

    def refused(self, extra="", env=None):
        p = self.start_app(extra, env)
        out, _ = p.communicate(timeout=60)
        self.assertNotEqual(p.returncode, 0, out)
        return out

    def wait_prog(self, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if "prog/xdp" in sh(self.ns["a"], "ip link show va").stdout:
                return True
            time.sleep(0.1)
        return False

    def test_frames_of_any_kind_are_counted_and_the_kernel_still_answers(self):
        p = self.start_app()
        try:
            self.assertTrue(self.wait_prog())
            time.sleep(0.5)
            me = bytes.fromhex("020000005a01")
            src = bytes.fromhex("020000005a02")
            udp = bytes.fromhex("12b712b7001a0000")

            def ip4(dst, proto=0x11, rest=b""):
                return me + src + b"\x08\x00" + bytes.fromhex(
                    "4500002e00004000%02x0000" % (0x40 << 8 | proto) + "0a050002" + dst) + rest
            frames = odd_frames(me, src) + [
                ip4("0a050001", 0x06, b"\0" * 20),		# TCP, no port
                ip4("0a050063", 0x11, udp + b"\xff" * 18),	# RoCE, not ours
                ip4("0a050001", 0x11, udp + b"\xff" * 18)]	# RoCE, garbage
            send_raw(self.ns["b"], "vb", frames)
            rc, out = ping(self.ns["b"], "10.5.0.1", 3)
            self.assertEqual(rc, 0, out)
            self.assertNotIn("DUP", out)
            srv = tcp_echo_server(self.ns["a"], "10.5.0.1", 7005)
            self.assertEqual(tcp_ask(self.ns["b"], "10.5.0.1", 7005), "HELLO")
            srv.wait(timeout=10)
        finally:
            out = self.stop_app(p)
        m = re.search(r"xdp\s+(\d+)\s+RoCE to mwpath by the XDP program on va; to the kernel: "
                      r"(\d+) other frames, (\d+) RoCE for other addresses, (\d+) on a queue",
                      out)
        self.assertIsNotNone(m, out)
        to_mwpath, other, not_ours, no_socket = map(int, m.groups())
        self.assertEqual(to_mwpath, 20, out)	# the garbage RoCE to our address
        self.assertEqual(not_ours, 20, out)
        self.assertGreaterEqual(other, 7 * 20, out)
        self.assertEqual(no_socket, 0, out)
        self.assertRegex(out, r"packets in\s+20\s")
        self.assertRegex(out, r"dropped\s+20\s")
        # the program went with mwpath
        self.assertNotIn("prog/xdp", sh(self.ns["a"], "ip link show va").stdout)

    def test_an_address_the_interface_does_not_hold_is_refused(self):
        path = os.path.join(self.tmp, "app-other.ini")
        with open(path, "w") as f:
            f.write("[port 0]\nipv4 = 10.5.0.9\nmtu = 1024\n")
        p = subprocess.run(["ip", "netns", "exec", self.ns["a"], MWPATH]
                           + (EAL % "va").split() + ["-l", "0", "--", "-c", path],
                           capture_output=True, text=True, timeout=60)
        out = p.stdout + p.stderr
        self.assertNotEqual(p.returncode, 0, out)
        self.assertIn("va holds 10.5.0.1 and the port 10.5.0.9: they must agree", out)

    def test_a_mac_that_is_not_the_interfaces_is_refused(self):
        out = self.refused("mac = 02:00:00:00:99:99\n")
        self.assertIn("mac 02:00:00:00:99:99 is not the interface's (02:00:00:00:5A:01)", out)

    def test_a_path_mtu_the_link_or_the_pmd_cannot_carry_is_refused(self):
        path = os.path.join(self.tmp, "app-mtu.ini")
        for mtu, want in ((2048, "va's MTU is 1500 and the RoCE path MTU 2048 needs 2144: "
                                 "raise it (ip link set dev va mtu 2144)"),
                          (4096, "mtu 4096: net_af_xdp carries frames of up to a page")):
            with open(path, "w") as f:
                f.write(port_section("a").replace("mtu = 1024", "mtu = %d" % mtu))
            p = subprocess.run(["ip", "netns", "exec", self.ns["a"], MWPATH]
                               + (EAL % "va").split() + ["-l", "0", "--", "-c", path],
                               capture_output=True, text=True, timeout=60)
            out = p.stdout + p.stderr
            self.assertNotEqual(p.returncode, 0, out)
            self.assertIn(want, out)

    def test_exception_tap_is_refused_on_a_kernel_interface(self):
        out = self.refused("exception = tap\n")
        self.assertIn("on net_af_xdp the interface stays the kernel's", out)

    def test_an_xdp_program_that_does_not_load_stops_the_port_with_a_reason(self):
        bad = os.path.join(self.tmp, "not-bpf.o")
        with open(bad, "w") as f:
            f.write("not an object\n")
        out = self.refused(env={"MWPATH_XDP_PROG": bad})
        self.assertIn("Failed to load custom XDP program %s" % bad, out)
        self.assertIn("cannot start", out)
        self.assertNotIn("prog/xdp", sh(self.ns["a"], "ip link show va").stdout)

    def test_another_program_on_the_interface_is_left_alone(self):
        src = os.path.join(self.tmp, "pass.c")
        obj = os.path.join(self.tmp, "pass.o")
        with open(src, "w") as f:
            f.write(FOREIGN)
        subprocess.run(["clang", "-O2", "-target", "bpf",
                        "-I/usr/include/%s-linux-gnu" % os.uname().machine, "-c", src, "-o", obj],
                       check=True)
        sh(self.ns["a"], "ip link set dev va xdp obj %s sec xdp" % obj)
        try:
            out = self.refused()
            self.assertIn("va has an XDP program already, not mwpath's", out)
            self.assertIn("prog/xdp", sh(self.ns["a"], "ip link show va").stdout)
        finally:
            sh(self.ns["a"], "ip link set dev va xdp off")

    def test_the_program_a_killed_mwpath_left_is_taken_off(self):
        p = self.start_app()
        self.assertTrue(self.wait_prog())
        time.sleep(0.5)
        p.kill()
        p.communicate()
        self.assertIn("prog/xdp", sh(self.ns["a"], "ip link show va").stdout)
        p = self.start_app()
        try:
            self.assertTrue(self.wait_prog())
            time.sleep(0.5)
            rc, ping_out = ping(self.ns["b"], "10.5.0.1", 2)
            self.assertEqual(rc, 0, ping_out)
        finally:
            out = self.stop_app(p)
        self.assertIn("va: took off the XDP program of an mwpath that has ended", out)
        self.assertNotIn("prog/xdp", sh(self.ns["a"], "ip link show va").stdout)


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("test_xdp: needs root (network namespaces, XDP)", file=sys.stderr)
        sys.exit(77)
    if not os.path.exists(os.path.join(BUILD, "pmd", "mwp_xdp.bpf.o")):
        print("test_xdp: built without clang or libbpf: no XDP program", file=sys.stderr)
        sys.exit(77)
    unittest.main(verbosity=2)
