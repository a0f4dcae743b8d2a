# SPDX-License-Identifier: BSD-3-Clause
"""Interop with Linux RDMA (docs/interop.md): the kernel's Soft-RoCE (rxe)
in a QEMU guest with Debian's unmodified ibv_rc_pingpong and perftest on one
side of a tap; mwpath's device mwpath0 (net_af_packet on the tap, its own
MAC and addresses, found by the guest through ARP and neighbour discovery)
with the same unmodified tools on the other.  One boot runs every scenario,
in both roles and over IPv4 and IPv6 GIDs; each is a test with a verdict
taken from both sides' exit status and output.  UD and shared receive
queues too: ibv_ud_pingpong, ib_send_bw -c UD, ibv_srq_pingpong.

Then memory windows (test/interop/mw_peer.c, one program on both sides):
mwpath owning the windows with rxe accessing them, and the reverse; a lossy
link (netem in the guest, both directions); mwpath as the requester of
every operation, RNR included; and, in the guest, an mwpath device beside
rxe0 under mwpath-run, both listed and rxe0 still carrying traffic.

Writes the results table to $MWPATH_BUILD/interop-results.md.
"""
import glob
import os
import re
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from guest import (GUEST_IP4, GUEST_IP6, HOST_IP4, MWPATH_IP4, MWPATH_IP6, Guest,  # noqa: E402
                   GuestError, Link)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))
from common import hung_state  # noqa: E402

BUILD = os.environ["MWPATH_BUILD"]
SRC = os.environ["MWPATH_SRC"]
RUN = os.path.join(BUILD, "provider", "mwpath-run")
MW_PEER = os.path.join(BUILD, "test", "interop", "mw_peer")
# mwpath's device inside the guest too, beside rxe0: DPDK on net_null
GUEST_CONFIG = "/tmp/mwpath-guest.ini"
GUEST_DEVICE = ("[device 0]\neal = --no-huge --no-pci --no-shconf -m 128 --vdev=net_null0\n"
                "[port 0]\nmac = 02:00:00:99:00:02\nipv4 = 10.99.0.2\nmtu = 1024\n")
TOOL_TIMEOUT = 60

link = guest = cfg = None
results = []
next_port = [18600]
# coreutils' stdbuf: a tool killed at its time limit still shows its output
LINE_BUFFERED = dict(os.environ, _STDBUF_O="L",
                     LD_PRELOAD="/usr/libexec/coreutils/libstdbuf.so")


def guest_binaries(work):
    """What the guest runs of ours: mw_peer, and mwpath's device
    (mwpath-run, libmwpath-ibverbs.so and the DPDK drivers it loads), from
    a build for any x86-64 (-Dcpu_instruction_set=generic): this build's
    may use instructions that QEMU's TCG lacks (AVX-512)."""
    gbuild = os.path.join(work, "build-generic")
    if not os.path.exists(os.path.join(gbuild, "build.ninja")):
        subprocess.run(["meson", "setup", gbuild, SRC, "-Dcpu_instruction_set=generic",
                        "-Dbenchmarks=false", "-Dfuzz=disabled"],
                       check=True, capture_output=True)
    subprocess.run(["ninja", "-C", gbuild, "provider/libmwpath-ibverbs.so",
                    "test/interop/mw_peer"], check=True, capture_output=True)
    pmds = sorted(glob.glob("/usr/lib/*/dpdk/pmds-*/"))[-1]
    return ([os.path.join(gbuild, "test", "interop", "mw_peer"),
             os.path.join(SRC, "provider", "mwpath-run"),
             os.path.join(gbuild, "provider", "libmwpath-ibverbs.so")]
            + [pmds + "librte_%s.so" % d for d in ("bus_vdev", "mempool_ring", "net_null")])


def on_sigterm(signum, frame):
    """meson's SIGTERM at the suite's time limit: QEMU and this side's
    tools go too (left alone, QEMU ran on, a CPU busy, until its own 20
    min)."""
    if guest is not None and guest.qemu is not None:
        # (QEMU runs under timeout(1), which passes a TERM on; a KILL
        # would end timeout alone)
        guest.qemu.terminate()
        try:
            guest.qemu.wait(timeout=10)
        except subprocess.TimeoutExpired:
            guest.qemu.kill()
    if link is not None:
        link.close()
    # and this side's tools still running
    subprocess.run(["pkill", "-KILL", "-P", str(os.getpid())], check=False)
    os._exit(128 + signum)


def setUpModule():
    global link, guest, cfg
    signal.signal(signal.SIGTERM, on_sigterm)
    work = os.path.join(BUILD, "interop")
    os.makedirs(work, exist_ok=True)
    link = Link()
    cfg = link.device_config(os.path.join(work, "mwpath.ini"))
    try:
        guest = Guest(link, work, guest_binaries(work))
        t = time.monotonic()
        guest.boot()
        print("guest ready in %.1f s: rxe0 RoCE v2 GIDs %d (IPv4), %d (IPv6)"
              % (time.monotonic() - t, guest.gid4, guest.gid6), file=sys.stderr)
        st, out = guest.run("printf '%s' >%s" % (GUEST_DEVICE, GUEST_CONFIG), 20)
        if st != 0:
            raise GuestError("writing %s: %s" % (GUEST_CONFIG, out))
    except Exception:
        if guest is not None:
            guest.quit()
        link.close()
        raise


def reboot_guest():
    """A fresh guest for a scenario's second try.  A hang can leave the
    guest's side stuck for every scenario after it -- its killed
    processes, or rxe itself under TCG on a loaded host (a CI run where
    ib_send_bw hung, and every later scenario with it, until the suite's
    time ran out)."""
    t = time.monotonic()
    guest.quit()
    guest.boot()
    st, out = guest.run("printf '%s' >%s" % (GUEST_DEVICE, GUEST_CONFIG), 20)
    if st != 0:
        raise GuestError("writing %s: %s" % (GUEST_CONFIG, out))
    print("guest booted again in %.1f s" % (time.monotonic() - t), file=sys.stderr)


def tearDownModule():
    guest.quit()
    link.close()
    path = os.path.join(BUILD, "interop-results.md")
    with open(path, "w") as f:
        f.write("| scenario | mwpath is | GID | result | seconds |\n|---|---|---|---|---|\n")
        for row in results:
            f.write("| %s | %s | %s | %s | %s |\n" % tuple(row))
        if departures:
            f.write("\nWhere rxe departed from the specification in this run:\n\n")
            for d in sorted(departures):
                f.write("- %s\n" % d)
    with open(path) as f:
        print(f.read(), file=sys.stderr)


def listening(port):
    """Whether some socket on this host listens on TCP PORT."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(name) as f:
            for line in f.readlines()[1:]:
                w = line.split()
                if w[3] == "0A" and int(w[1].rsplit(":", 1)[1], 16) == port:
                    return True
    return False


class Scenario(unittest.TestCase):
    """A tool on both sides: one serves, the other connects to it."""

    def pair(self, host_args, guest_args, host_serves, family):
        """host_args run on mwpath0 under mwpath-run, guest_args on rxe0;
        the client side gets the server's host-kernel address.  Returns
        ((host status, output), (guest status, output))."""
        port = next_port[0]
        next_port[0] += 1
        gidx_host = 0 if family == 4 else 1
        gidx_guest = guest.gid4 if family == 4 else guest.gid6
        host_cmd = [RUN, "-c", cfg, "--"] + [a.format(gid=gidx_host, port=port)
                                              for a in host_args]
        guest_cmd = " ".join(a.format(gid=gidx_guest, port=port) for a in guest_args)
        t0 = time.monotonic()
        if host_serves:
            host = subprocess.Popen(host_cmd, stdout=subprocess.PIPE, env=LINE_BUFFERED,
                                    stderr=subprocess.STDOUT, text=True)
            deadline = time.monotonic() + 30
            while not listening(port) and host.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            job = guest.start(guest_cmd + " " + HOST_IP4 + " 2>&1", TOOL_TIMEOUT)
        else:
            job = guest.start(guest_cmd + " 2>&1", TOOL_TIMEOUT)
            st, out = guest.run("until netstat -ltn | grep -q ':%d '; do sleep 0.1; done"
                                % port, 30)
            if st != 0:
                self.fail("the guest's server never listened:\n" + guest.wait(job)[1])
            host = subprocess.Popen(host_cmd + [GUEST_IP4], stdout=subprocess.PIPE,
                                    env=LINE_BUFFERED, stderr=subprocess.STDOUT, text=True)
        return self.finish(host, job, t0)

    def finish(self, host, job, t0):
        """Both sides' ends: ((host status, output), (guest status, output))."""
        try:
            hout, _ = host.communicate(timeout=TOOL_TIMEOUT - 10)
            hout += "\n(mwpath side ended after %.1f s)" % (time.monotonic() - t0)
            # the guest's side should end with it
            stuck = guest.stuck(job, 10)
        except subprocess.TimeoutExpired:
            # what the guest's side waits for, before its time runs out
            stuck = guest.stuck(job, 0)
            hang = "\n(its threads and counters when it was killed:\n%s)" % hung_state(host.pid)
            host.kill()
            hout, _ = host.communicate()
            hout += hang
            hout += "\n(killed after %.1f s)" % (time.monotonic() - t0)
        gst, gout = guest.wait(job)
        gout += "\n(rxe side ended after %.1f s)" % (time.monotonic() - t0)
        if stuck:
            gout += "\n(the rxe side's processes when the mwpath side ended:\n%s)" % stuck
        return (host.returncode, hout), (gst, gout)

    def run_pingpong(self, tool, size, iters, extra, host_serves, family):
        """One of rdma-core's pingpongs on both sides: both exit 0 and
        print 2*size*iters bytes."""
        args = [tool, "-g", "{gid}", "-p", "{port}", "-s", str(size),
                "-n", str(iters)] + extra
        h, g = self.pair(args + ["-d", "mwpath0"], args + ["-d", "rxe0"],
                         host_serves, family)
        self.both_ok(h, g)
        for side, (st, out) in (("mwpath", h), ("rxe", g)):
            m = re.search(r"(\d+) bytes in [\d.]+ seconds = ([\d.]+) Mbit/sec", out)
            self.assertIsNotNone(m, side + ":\n" + out)
            self.assertEqual(int(m.group(1)), 2 * size * iters, side)

    def run_perftest(self, tool, args, kind, host_serves, family):
        """Unmodified perftest on both sides; the client's figures checked."""
        common = [tool, "-x", "{gid}", "-p", "{port}", "-F"] + args
        h, g = self.pair(common + ["-d", "mwpath0"], common + ["-d", "rxe0"],
                         host_serves, family)
        self.both_ok(h, g)
        out = g[1] if host_serves else h[1]
        size = 8 if tool == "ib_atomic_bw" else int(args[args.index("-s") + 1])
        m = re.search(r"^\s*%d\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)" % size, out, re.M)
        self.assertIsNotNone(m, "no result row in the client's output:\n" + out)
        self.assertEqual(int(m.group(1)), 200, "iterations")
        # bw: BW peak, BW average, MsgRate; lat: t_min, t_max, t_typical;
        # unless perftest says itself that it could not time the CPU's
        # clock (TCG's TSC, now and then): then its figures read 0.00
        if "Correlation coefficient" not in out:
            self.assertGreater(float(m.group(3)), 0, out)
            self.assertGreater(float(m.group(4)), 0, out)

    def record(self, name, role, family, fn):
        """Runs FN, a scenario, into the results table.  A scenario that
        hung (a side killed at its time limit) runs once more, and the
        table says so; the hang's stacks stay in the log.  A wrong answer
        fails at once."""
        row = [name, role, "IPv%d" % family, "FAIL", ""]
        results.append(row)
        t0 = time.monotonic()
        try:
            fn()
        except AssertionError as e:
            if "(killed after" not in str(e) and "exit 137" not in str(e):
                raise
            print("\n%s (mwpath %s, IPv%d) hung; once more, in a guest booted again. "
                  "The hang:\n%s" % (name, role, family, e), file=sys.stderr)
            row[3] = "FAIL (hung twice)"
            reboot_guest()
            fn()
            row[3] = "pass (on the second try: the first hung)"
        else:
            row[3] = "pass"
        row[4] = "%.1f" % (time.monotonic() - t0)

    def both_ok(self, h, g):
        for side, (st, out) in (("mwpath", h), ("rxe", g)):
            self.assertEqual(st, 0, "%s side: exit %d\n%s\n--- other side ---\n%s"
                             % (side, st, out, (g if side == "mwpath" else h)[1]))


ROLES = (("server", True), ("client", False))
FAMILIES = (4, 6)


class Pingpong(Scenario):
    """ibv_rc_pingpong: below, at and above the 1024 B path MTU; -e."""

    def test_pingpong(self):
        for role, host_serves in ROLES:
            for family in FAMILIES:
                for size, iters, extra in ((64, 100, []), (4096, 50, []),
                                           (1024, 50, ["-e"])):
                    name = "ibv_rc_pingpong -s %d%s" % (size, " -e" if extra else "")
                    with self.subTest(role=role, family=family, size=size, extra=extra):
                        self.record(name, role, family, lambda: self.run_pingpong(
                            "ibv_rc_pingpong", size, iters, extra, host_serves, family))


PERFTEST = (
    ("ib_write_bw", ["-s", "8192", "-n", "200"], "bw"),
    ("ib_read_bw", ["-s", "8192", "-n", "200"], "bw"),
    ("ib_send_bw", ["-s", "4096", "-n", "200"], "bw"),
    ("ib_atomic_bw", ["-A", "FETCH_AND_ADD", "-n", "200"], "bw"),
    ("ib_atomic_bw", ["-A", "CMP_AND_SWAP", "-n", "200"], "bw"),
    ("ib_write_lat", ["-s", "64", "-n", "200"], "lat"),
    ("ib_read_lat", ["-s", "64", "-n", "200"], "lat"),
)


class Perftest(Scenario):
    """Unmodified perftest on both sides; the client's figures checked."""

    def test_perftest(self):
        for tool, args, kind in PERFTEST:
            for role, host_serves in ROLES:
                for family in FAMILIES:
                    name = " ".join([tool] + (args[:2] if tool == "ib_atomic_bw" else []))
                    with self.subTest(tool=name, role=role, family=family):
                        self.record(name, role, family, lambda: self.run_perftest(
                            tool, args, kind, host_serves, family))


class UdSrq(Scenario):
    """UD QPs, address handles and SRQs against rxe: ibv_ud_pingpong at the
    1024 B path MTU, ib_send_bw -c UD, ibv_srq_pingpong (16 RC QPs a side
    on one SRQ)."""

    def test_ud_and_srq(self):
        for role, host_serves in ROLES:
            for family in FAMILIES:
                for tool, size, iters in (("ibv_ud_pingpong", 1024, 100),
                                          ("ibv_srq_pingpong", 4096, 50)):
                    with self.subTest(tool=tool, role=role, family=family):
                        self.record(tool, role, family, lambda: self.run_pingpong(
                            tool, size, iters, [], host_serves, family))
                with self.subTest(tool="ib_send_bw -c UD", role=role, family=family):
                    self.record("ib_send_bw -c UD", role, family,
                                lambda: self.run_perftest(
                                    "ib_send_bw", ["-c", "UD", "-s", "1024", "-n", "200"],
                                    "bw", host_serves, family))


def verdicts(out):
    return {m.group(1): (m.group(2), m.group(3))
            for m in re.finditer(r"^VERDICT (\S+) (\S+) ?(.*)$", out, re.M)}


class MemoryWindows(Scenario):
    """mw_peer: windows bound, rebound and invalidated mid-run by one side
    while the other reads, writes and does atomics through them."""

    def run_mw(self, mwpath_owns, family, rnr=False, lossy=False):
        args = [MW_PEER, "-v", "-g", "{gid}", "-p", "{port}"]
        gargs = ["/usr/bin/mw_peer", "-v", "-g", "{gid}", "-p", "{port}", "-d", "rxe0"]
        if lossy:
            args.append("-l")
            gargs.append("-l")
        owner_extra = ["-o"] + (["-r"] if rnr else [])
        if mwpath_owns:
            h, g = self.pair(args + ["-d", "mwpath0"] + owner_extra, gargs, True, family)
        else:
            h, g = self.pair(args + ["-d", "mwpath0"], gargs + owner_extra, False, family)
        owner, accessor = (h, g) if mwpath_owns else (g, h)
        v = verdicts(accessor[1])
        if lossy and not mwpath_owns:
            # rxe drops a retried READ of a ZERO_BASED window as a
            # "duplicate outside the original request" (duplicate_request()
            # in rxe_resp.c compares the zero-based VA with the absolute
            # one it kept): the READ that met a loss ends in
            # RETRY_EXC_ERR.  Only those may fail, and only that way.
            bad = {k: d for k, (r, d) in v.items() if r == "FAIL"}
            for k, d in bad.items():
                self.assertTrue(k.startswith("type2-zero-based-")
                                and "transport retry counter exceeded" in d,
                                "%s: %s\n%s" % (k, d, accessor[1]))
                departures.add("a retried READ of a ZERO_BASED window is dropped"
                               " by rxe (%s: %s)" % (k, d))
            if bad:
                self.assertEqual(accessor[0], 1, accessor[1])
                self.assertEqual(owner[0], 0, owner[1])
                self.assertRegex(owner[1], r"(?m)^RESULT pass$")
                return v
        self.both_ok(h, g)
        self.assertRegex(owner[1], r"(?m)^RESULT pass$")
        self.assertRegex(accessor[1], r"(?m)^RESULT pass$")
        self.assertEqual(v["owner-verdicts"][0], "ok")
        for kind in ("type1", "type2", "type2-zero-based"):
            for check in ("valid-accesses", "rebind-mid-run", "new-key-after-rebind",
                          "old-key-after-rebind", "invalidate-mid-run",
                          "access-after-invalidation-0"):
                self.assertEqual(v[kind + "-" + check][0], "ok", kind + "-" + check)
            for op in ("WRITE", "READ"):
                got = v["%s-%s-one-byte-past-end" % (kind, op)][0]
                if mwpath_owns:
                    # the specification (memory-windows.md §3 step 5)
                    self.assertEqual(got, "refused", "%s %s one byte past" % (kind, op))
                else:
                    # rxe checks only the region's bounds: a known departure
                    # (recorded from a clean link: with -l, a READ that rxe
                    # dropped as a duplicate also reads "refused")
                    self.assertIn(got, ("refused", "accepted"))
                    if not lossy:
                        departures.add("%s one byte past a %s window: %s by rxe"
                                       % (op, kind, got))
        if rnr:
            self.assertEqual(v["send-after-rnr"][0], "ok", v["send-after-rnr"])
        return v

    def test_mwpath_owns_rxe_accesses(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                self.record("memory windows: rxe requester", "owner (responder)",
                            family, lambda: self.run_mw(True, family, rnr=True))

    def test_rxe_owns_mwpath_accesses(self):
        """mwpath as the requester of every operation towards rxe (WRITE,
        READ, FETCH_ADD, CMP_SWAP, SEND), and RNR: the guest's receive queue
        stays empty for 300 ms."""
        for family in FAMILIES:
            with self.subTest(family=family):
                self.record("memory windows + RNR: mwpath requester", "accessor (requester)",
                            family, lambda: self.run_mw(False, family, rnr=True))


departures = set()


class RdmaCm(Scenario):
    """librdmacm programs against Linux's own connection manager
    (docs/cm.md): rping (every byte checked) and ucmatose (two
    connections), mwpath serving and connecting, over IPv4 and IPv6.  No
    TCP: they find each other by address alone, through the CM's MADs on
    QP1."""

    def cm_pair(self, host_args, guest_args, host_serves, wait=3.0, config=None):
        """The server's side, then after `wait` s the client's."""
        host_cmd = [RUN, "-c", config or cfg, "--"] + host_args
        guest_cmd = " ".join(guest_args) + " 2>&1"
        t0 = time.monotonic()
        if host_serves:
            host = subprocess.Popen(host_cmd, stdout=subprocess.PIPE, env=LINE_BUFFERED,
                                    stderr=subprocess.STDOUT, text=True)
            time.sleep(wait)
            job = guest.start(guest_cmd, TOOL_TIMEOUT)
        else:
            job = guest.start(guest_cmd, TOOL_TIMEOUT)
            time.sleep(wait)
            host = subprocess.Popen(host_cmd, stdout=subprocess.PIPE, env=LINE_BUFFERED,
                                    stderr=subprocess.STDOUT, text=True)
        return self.finish(host, job, t0)

    def port(self):
        next_port[0] += 1
        return str(next_port[0])

    def both_sides(self, name, server, client, check=None, guest_wrap=(), families=FAMILIES,
                   roles=ROLES):
        """server and client (lists, with {addr} for the server's address
        and {port}), each role, each family; the guest's command after
        guest_wrap."""
        for role, host_serves in roles:
            for family in families:
                addr = (MWPATH_IP4 if family == 4 else MWPATH_IP6) if host_serves else \
                       (GUEST_IP4 if family == 4 else GUEST_IP6)
                port = self.port()

                def run(server=server, client=client, addr=addr, port=port,
                        host_serves=host_serves):
                    fill = [[a.format(addr=addr, port=port) for a in cmd]
                            for cmd in (server, client)]
                    h, g = self.cm_pair(fill[0] if host_serves else fill[1],
                                        list(guest_wrap) +
                                        (fill[1] if host_serves else fill[0]), host_serves)
                    self.both_ok(h, g)
                    if check is not None:
                        check(h[1], g[1])
                with self.subTest(role=role, family=family):
                    self.record(name, role, family, run)

    def test_rping(self):
        self.both_sides("rping -V -C 100",
                        ["rping", "-s", "-a", "{addr}", "-p", "{port}", "-V", "-C", "100"],
                        ["rping", "-c", "-a", "{addr}", "-p", "{port}", "-V", "-C", "100"])

    def test_rping_through_the_systems_librdmacm_beside_mwpath(self):
        # in the guest under mwpath-run, beside its mwpath0 (10.99.0.2 on
        # net_null): the addresses are rxe0's, so the guest's rping goes
        # through the system's librdmacm to the kernel's CM, and mwpath's
        # preload must hand it over whole (ids, events, QPs)
        self.both_sides("rping -V -C 100 under mwpath-run, on rxe0 beside mwpath0",
                        ["rping", "-s", "-a", "{addr}", "-p", "{port}", "-V", "-C", "100"],
                        ["rping", "-c", "-a", "{addr}", "-p", "{port}", "-V", "-C", "100"],
                        guest_wrap=["mwpath-run", "-c", GUEST_CONFIG, "--"])

    def test_rping_to_a_listener_on_any_address_beside_mwpath(self):
        # in the guest under mwpath-run, rping's server bound to any
        # address listens on its mwpath0 and, through the system's
        # librdmacm, on rxe0 too: mwpath on the host connects to rxe0's
        name = "rping -V -C 100 to a listener on any address under mwpath-run, beside mwpath0"
        for family, any_addr, addr in ((4, "0.0.0.0", GUEST_IP4), (6, "::", GUEST_IP6)):
            port = self.port()

            def run(any_addr=any_addr, addr=addr, port=port):
                h, g = self.cm_pair(
                    ["rping", "-c", "-a", addr, "-p", port, "-V", "-C", "100"],
                    ["mwpath-run", "-c", GUEST_CONFIG, "--", "rping", "-s", "-a", any_addr,
                     "-p", port, "-V", "-C", "100"], False)
                self.both_ok(h, g)
            with self.subTest(family=family):
                self.record(name, "client", family, run)

    def test_udaddy(self):
        def done(h, g):
            for out in (h, g):
                self.assertIn("data transfers complete", out)
        self.both_sides("udaddy -C 10 (UD: SIDR)",
                        # (udaddy's -p is the port space: its port is 7174)
                        ["udaddy", "-b", "{addr}", "-C", "10"],
                        ["udaddy", "-s", "{addr}", "-C", "10"],
                        done)

    def test_riostream(self):
        # rsockets: mwpath's own (provider/mwp_rsocket.c) against
        # librdmacm's in the guest, on the same wire protocol: the
        # connection data in the REQ and REP, the iomap written into the
        # peer's table, then riowrite both ways with every byte checked;
        # 4 KiB goes from the send ring, not inline
        def done(h, g):
            for out in (h, g):
                self.assertNotIn("failed", out)
                self.assertRegex(out, r"(?m)^custom\s+4k\s+50\s+1\s")
        self.both_sides("riostream -S 4096 -C 50 -T v (rsockets)",
                        ["riostream", "-b", "{addr}", "-p", "{port}", "-S", "4096", "-C", "50",
                         "-T", "v"],
                        ["riostream", "-s", "{addr}", "-p", "{port}", "-S", "4096", "-C", "50",
                         "-T", "v"], done)

    def test_ib_write_bw_over_the_cm(self):
        def done(h, g):
            # the client prints the figures: 4096 B, 200 iterations
            self.assertRegex(h + g, r"(?m)^\s*4096\s+200\s")
        # mwpath serving, IPv4 (docs/cm.md): perftest 4.5-0.17 asks
        # rdma_getaddrinfo for AF_INET alone; and its server listens only
        # after its TCP handshake, which its client follows with the REQ
        # at once -- the guest's server under TCG is not listening yet,
        # its kernel rejects the REQ (REJ 8, rightly), and perftest's
        # client retries on the ids and address it has just freed.
        self.both_sides("ib_write_bw -R -s 4096 -n 200",
                        ["ib_write_bw", "-R", "-p", "{port}", "-n", "200", "-s", "4096", "-F"],
                        ["ib_write_bw", "-R", "-p", "{port}", "-n", "200", "-s", "4096", "-F",
                         "{addr}"], done, families=(4,), roles=ROLES[:1])

    def test_a_port_nobody_listens_on(self):
        # each side's CM answers a REQ for a service nobody listens on
        # with REJ reason 8 (invalid service ID): rping says so
        def run(host_serves, family):
            addr = (MWPATH_IP4 if family == 4 else MWPATH_IP6) if host_serves else \
                   (GUEST_IP4 if family == 4 else GUEST_IP6)
            client = ["rping", "-c", "-a", addr, "-p", self.port(), "-C", "1", "-v"]
            if host_serves:
                # mwpath's device open (its QP1 answers), nobody listening:
                # a pingpong waiting for its TCP peer
                _, (st, out) = self.cm_pair(["timeout", "10", "ibv_rc_pingpong", "-d", "mwpath0",
                                             "-g", "0", "-p", self.port()], client, True)
            else:
                r = subprocess.run([RUN, "-c", cfg, "--"] + client, capture_output=True,
                                   text=True, timeout=TOOL_TIMEOUT, env=LINE_BUFFERED)
                st, out = r.returncode, r.stdout + r.stderr
            self.assertNotEqual(st, 0, out)
            self.assertIn("RDMA_CM_EVENT_REJECTED, error 8", out)
        for role, host_serves in ROLES:
            for family in FAMILIES:
                with self.subTest(role=role, family=family):
                    self.record("rping to a port nobody listens on: REJECTED 8", role, family,
                                lambda: run(host_serves, family))

    def test_the_cm_exchange_decodes_cleanly_in_tshark(self):
        # the link captured while rping connects and disconnects, mwpath
        # serving over IPv4 and connecting over IPv6; Wireshark's
        # InfiniBand dissector reads every CM MAD, none malformed, and the
        # messages pair up: each REP answers a REQ's communication ID,
        # each RTU and DREP the pair's
        pcap = os.path.join(BUILD, "interop", "cm-exchange.pcap")
        # (net_af_packet's frames bypass the qdisc, and with it the
        # capture, unless told otherwise)
        seen_cfg = link.device_config(os.path.join(BUILD, "interop", "mwpath-seen.ini"),
                                      vdev_args=",qdisc_bypass=0")
        env = dict(os.environ, HOME="/tmp")
        cap = subprocess.Popen(["tshark", "-q", "-i", link.tap, "-f", "udp port 4791",
                                "-w", pcap], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(3)
            for host_serves, family in ((True, 4), (False, 6)):
                addr = (MWPATH_IP4 if family == 4 else MWPATH_IP6) if host_serves else \
                       (GUEST_IP4 if family == 4 else GUEST_IP6)
                port = self.port()
                h, g = self.cm_pair(
                    ["rping", "-s" if host_serves else "-c", "-a", addr, "-p", port,
                     "-C", "3", "-V"],
                    ["rping", "-c" if host_serves else "-s", "-a", addr, "-p", port,
                     "-C", "3", "-V"], host_serves, config=seen_cfg)
                self.both_ok(h, g)
            time.sleep(2)
        finally:
            cap.terminate()
            err = cap.communicate(timeout=30)[1]
        fields = ["ip.src", "ipv6.src", "infiniband.mad.attributeid", "_ws.malformed",
                  # (Wireshark names the REQ's and REP's local IDs so)
                  "infiniband.cm.req", "infiniband.cm.rep",
                  "infiniband.cm.rep.remotecommid", "infiniband.cm.rtu.localcommid",
                  "infiniband.cm.rtu.remotecommid", "infiniband.cm.dreq.localcommid",
                  "infiniband.cm.drsp.remotecommid"]
        cmd = ["tshark", "-r", pcap, "-n", "-d", "udp.port==4791,infiniband",
               "-Y", "infiniband.mad.mgmtclass == 0x07", "-T", "fields",
               "-E", "separator=\t", "-E", "occurrence=f"]
        for f in fields:
            cmd += ["-e", f]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        rows = [dict(zip(fields, line.split("\t"))) for line in out.splitlines()]
        self.assertTrue(rows, "no CM MAD captured\n" + err)
        mine = (MWPATH_IP4, MWPATH_IP6)
        seen = {True: set(), False: set()}
        reqs, reps = set(), set()
        for r in rows:
            self.assertEqual(r["_ws.malformed"], "", r)
            attr = int(r["infiniband.mad.attributeid"], 16)
            seen[(r["ip.src"] or r["ipv6.src"]) in mine].add(attr)
            if attr == 0x10:
                reqs.add(r["infiniband.cm.req"])
            elif attr == 0x13:
                self.assertIn(r["infiniband.cm.rep.remotecommid"], reqs, r)
                reps.add((r["infiniband.cm.rep.remotecommid"], r["infiniband.cm.rep"]))
            elif attr == 0x14:
                self.assertIn((r["infiniband.cm.rtu.localcommid"],
                               r["infiniband.cm.rtu.remotecommid"]), reps, r)
        # REQ 0x10, REP 0x13, RTU 0x14 from each side (it served once and
        # connected once); DREQ 0x15 and DREP 0x16 on the link
        for side in (True, False):
            self.assertLessEqual({0x10, 0x13, 0x14}, seen[side], (side, seen))
        self.assertLessEqual({0x15, 0x16}, seen[True] | seen[False], seen)
        results.append(["CM MADs of rping (both roles) in tshark: %d, none malformed, "
                        "REQ/REP/RTU paired" % len(rows), "both", "IPv4+6", "pass", ""])

    def test_ucmatose(self):
        def done(h, g):
            for out in (h, g):
                self.assertIn("data transfers complete", out)
        self.both_sides("ucmatose -c 2",
                        ["ucmatose", "-b", "{addr}", "-p", "{port}", "-c", "2", "-C", "10"],
                        ["ucmatose", "-s", "{addr}", "-p", "{port}", "-c", "2", "-C", "10"],
                        done)


class BesideRealDevice(Scenario):
    """mwpath's device beside a real one (issue 22): in the guest, under
    mwpath-run, libibverbs lists rxe0 and mwpath0 (the latter on DPDK's
    net_null there), both open, and rxe0 still carries traffic: an
    interposed ibv_rc_pingpong on rxe0 against mwpath0 on this host."""

    def test_both_listed(self):
        def run():
            st, out = guest.run("mwpath-run -c %s -- ibv_devices && "
                                "mwpath-run -c %s -- ibv_devinfo -d rxe0 && "
                                "mwpath-run -c %s -- ibv_devinfo -d mwpath0"
                                % ((GUEST_CONFIG,) * 3), 60)
            self.assertEqual(st, 0, out)
            self.assertRegex(out, r"(?m)^\s+rxe0\s+[0-9a-f]{16}$")
            self.assertRegex(out, r"(?m)^\s+mwpath0\s+[0-9a-f]{16}$")
            self.assertEqual(len(re.findall(r"state:\s+PORT_ACTIVE", out)), 2, out)
        self.record("ibv_devices, ibv_devinfo under mwpath-run: rxe0 and mwpath0",
                    "beside rxe0 (in the guest)", 4, run)

    def test_rxe_usable_under_mwpath_run(self):
        args = ["ibv_rc_pingpong", "-g", "{gid}", "-p", "{port}", "-s", "4096", "-n", "50"]
        wrap = ["mwpath-run", "-c", GUEST_CONFIG, "--"]
        for family in FAMILIES:
            with self.subTest(family=family):
                def run():
                    h, g = self.pair(args + ["-d", "mwpath0"], wrap + args + ["-d", "rxe0"],
                                     True, family)
                    self.both_ok(h, g)
                    for out in (h[1], g[1]):
                        self.assertRegex(out, r"409600 bytes in [\d.]+ seconds", out)
                self.record("ibv_rc_pingpong on rxe0 under mwpath-run", "server", family, run)


class Lossy(Scenario):
    """netem in the guest, on eth0's egress and (through ifb0) its ingress:
    loss, delay and reordering in both directions."""

    def netem(self, loss):
        def qd(dev):
            return ("/usr/sbin/tc qdisc replace dev %s root netem loss %d%%"
                    " delay 2ms reorder 10%% 50%%" % (dev, loss))
        st, out = guest.run(
            "set -e; tc=/usr/sbin/tc; ip=/usr/sbin/ip;"
            "$ip link show ifb0 >/dev/null 2>&1 || { $ip link add ifb0 type ifb;"
            " $ip link set ifb0 up; $tc qdisc add dev eth0 handle ffff: ingress;"
            " $tc filter add dev eth0 parent ffff: matchall"
            " action mirred egress redirect dev ifb0; };"
            + qd("eth0") + ";" + qd("ifb0"), 20)
        self.assertEqual(st, 0, out)

    def clear(self):
        guest.run("/usr/sbin/tc qdisc del dev eth0 root; /usr/sbin/tc qdisc del dev ifb0 root", 20)

    def test_lossy_link(self):
        mw = MemoryWindows("run_mw")
        pt = Perftest("run_perftest")
        try:
            for loss in (1, 5):
                self.netem(loss)
                for role, host_serves in ROLES:
                    for tool in ("ib_write_bw", "ib_read_bw"):
                        with self.subTest(loss=loss, tool=tool, role=role):
                            self.record("%s, %d%% loss + reordering" % (tool, loss), role, 4,
                                        lambda: pt.run_perftest(
                                            tool, ["-s", "8192", "-n", "200"], "bw",
                                            host_serves, 4))
                for mwpath_owns in (True, False):
                    with self.subTest(loss=loss, mwpath_owns=mwpath_owns):
                        self.record("memory windows, %d%% loss + reordering" % loss,
                                    "owner" if mwpath_owns else "accessor", 4,
                                    lambda: mw.run_mw(mwpath_owns, 4, lossy=True))
        finally:
            self.clear()

    def test_the_rdma_cm_on_the_lossy_link(self):
        # 5% loss each way (and delay, reordering): a lost REQ, REP, RTU,
        # DREQ or DREP is sent again after its timeout (the CM's retries;
        # the kernel's on the guest's side), and rping's data is checked
        cm = RdmaCm("test_rping")
        try:
            self.netem(5)
            cm.both_sides("rping -V -C 20, 5% loss + reordering",
                          ["rping", "-s", "-a", "{addr}", "-p", "{port}", "-V", "-C", "20"],
                          ["rping", "-c", "-a", "{addr}", "-p", "{port}", "-V", "-C", "20"],
                          families=(4,))
        finally:
            self.clear()


if __name__ == "__main__":
    try:
        unittest.main(verbosity=2)
    except GuestError as e:
        print(e, file=sys.stderr)
        sys.exit(1)
