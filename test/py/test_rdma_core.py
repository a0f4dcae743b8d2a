# SPDX-License-Identifier: BSD-3-Clause
"""rdma-core's own Python tests (Debian's python3-pyverbs ships them in
/usr/share/doc/rdma-core/tests/) on mwpath0, through mwpath-run: one
process, whose QPs talk to each other on one device (the port loops frames
to itself, as a NIC does).

Every test must pass or be skipped; every memory-window test must pass; and
the tests that skip must be exactly those docs/verbs-device.md lists under
"rdma-core's tests", so that a skip is never counted as a pass and a new
one (or a skip that became a pass) shows.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BUILD, SRC  # noqa: E402
from test_verbs_device import ENV, RUN, config  # noqa: E402

TESTS = "/usr/share/doc/rdma-core/tests"
RUNNER = os.path.join(SRC, "test", "verbs_device", "rdma_core_run.py")
DOC = os.path.join(SRC, "docs", "verbs-device.md")
MODULES = ["test_device", "test_pd", "test_cq", "test_cq_events", "test_cqex", "test_qp",
           "test_qpex", "test_mr", "test_atomic", "test_relaxed_ordering", "test_addr",
           "test_odp", "test_parent_domain", "test_shared_pd", "test_fork", "test_flow",
           "test_rss_traffic", "test_tag_matching", "test_rdmacm"]


def documented_skips():
    """The test ids in the doc's table of skips (its second column): those
    that always skip, and those that may ("sometimes: ...")."""
    with open(DOC) as f:
        text = f.read()
    part = text.split("### rdma-core's tests", 1)[1].split("\n## ", 1)[0]
    always, sometimes = set(), set()
    for row in part.splitlines():
        if not row.startswith("|"):
            continue
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[1] in ("tests", "---"):
            continue
        ids = {t.strip(" `") for t in cells[1].split(",")}
        (sometimes if cells[0].startswith("sometimes") else always).update(ids)
    return always, sometimes


def unpacked_tests():
    """A temporary folder holding rdma-core's tests/, unpacked (Debian
    gzips the larger files)."""
    tmp = tempfile.TemporaryDirectory()
    tests = os.path.join(tmp.name, "tests")
    shutil.copytree(TESTS, tests)
    for name in os.listdir(tests):
        if name.endswith(".gz"):
            with gzip.open(os.path.join(tests, name)) as src, \
                    open(os.path.join(tests, name[:-3]), "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.unlink(os.path.join(tests, name))
    return tmp


class RdmaCore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = unpacked_tests()
        cfg = os.path.join(cls.tmp.name, "dev.ini")
        config(cfg, "02:00:00:00:00:01", "192.0.2.1", "2001:db8::1",
               eal="--no-huge --no-pci --no-shconf -m 256 --vdev=net_null0,no-rx=1")
        r = subprocess.run([RUN, "-c", cfg, "--", "/usr/bin/python3", RUNNER, cls.tmp.name,
                            "mwpath0"] + MODULES,
                           capture_output=True, text=True, timeout=600, env=ENV)
        cls.stderr = r.stderr
        cls.returncode = r.returncode
        cls.rows = [json.loads(line) for line in r.stdout.splitlines()
                    if line.startswith("{")]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def outcome(self, kind):
        return {r["id"].replace("tests.", "", 1): r["reason"] for r in self.rows
                if r["outcome"] == kind}

    def test_the_run_finished(self):
        self.assertEqual(self.returncode, 0, self.stderr[-3000:])
        self.assertGreater(len(self.rows), 150, self.stderr[-3000:])

    def test_nothing_fails(self):
        bad = {**self.outcome("fail"), **self.outcome("error")}
        self.assertEqual(bad, {}, "\n".join("%s:\n%s" % kv for kv in bad.items()))

    def test_every_memory_window_test_passes(self):
        mw = [r for r in self.rows if ".MWTest." in r["id"]]
        self.assertEqual(len(mw), 7, [r["id"] for r in mw])
        for r in mw:
            self.assertEqual(r["outcome"], "pass", r)

    def test_the_extended_verbs_tests_pass(self):
        """Every test of test_cqex and test_qpex that needs no XRC (and no
        feature listed as absent), the extended-attribute QP tests of
        test_qp and the four rereg tests of test_mr pass (issue 38)."""
        always, _ = documented_skips()
        mods = ("test_cqex.", "test_qpex.", "test_qp.QPTest.", "test_mr.MRTest.test_mr_rereg")
        picked = [r for r in self.rows
                  if r["id"].replace("tests.", "", 1).startswith(mods)
                  and r["id"].replace("tests.", "", 1) not in always]
        self.assertGreater(len(picked), 40)
        for r in picked:
            self.assertEqual(r["outcome"], "pass", r)
        rereg = [r for r in picked if ".test_mr_rereg" in r["id"]]
        self.assertEqual(len(rereg), 4, rereg)
        self.assertIn("tests.test_qpex.QpExTestCase.test_qp_ex_rc_atomic_write",
                      [r["id"] for r in picked], "ATOMIC WRITE through ibv_wr_*")

    def test_the_skips_are_the_documented_ones(self):
        skipped = self.outcome("skip")
        always, sometimes = documented_skips()
        self.assertGreater(len(always), 50)
        new = set(skipped) - always - sometimes
        self.assertEqual(sorted(new), [], "skipped but not in docs/verbs-device.md: %s" %
                         {k: skipped[k] for k in new})
        self.assertEqual(sorted(always - set(skipped)), [],
                         "in docs/verbs-device.md but not skipped (passes now?)")
        ran = {r["id"].replace("tests.", "", 1) for r in self.rows}
        self.assertEqual(sorted(sometimes - ran), [], "listed but not run")


SHIM = os.path.join(SRC, "test", "verbs_device", "sysfs_net.sh")
FORKS = os.path.join(SRC, "test", "verbs_device", "shared_fork.py")
CM_PASS = ["test_rdmacm_sync_traffic", "test_rdmacm_async_traffic",
           "test_rdmacm_async_reject_traffic", "test_rdmacm_async_traffic_external_qp",
           "test_rdmacm_async_udp_traffic", "test_rdmacm_async_read",
           "test_rdmacm_async_write"]
CM_MULTICAST = ["test_rdmacm_async_multicast_traffic",
                "test_rdmacm_async_ex_multicast_traffic",
                "test_rdmacm_async_ex_leave_multicast_traffic"]


class RdmaCoreCm(unittest.TestCase):
    """rdma-core's test_rdmacm (issue 39): each test forks a passive and an
    active process from the test's own, which has the device open, and
    they connect to one address through the RDMA CM -- so the device is a
    shared one ([device 0] share = on, docs/verbs-device.md): a
    net_af_packet port on a veth, where each process drives the address
    with a packet socket of its own.  The tests find the device's
    interface through sysfs, which a device in user space has not:
    sysfs_net.sh shows them the one folder they read, in a mount namespace
    of the run's own.  Every test but multicast must pass; multicast
    skips."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = unpacked_tests()
        cls.ifname = "mwpcm%d" % (os.getpid() % 10000)
        subprocess.run(["ip", "link", "del", cls.ifname], capture_output=True)
        subprocess.run(["ip", "link", "add", cls.ifname, "type", "veth", "peer", "name",
                        cls.ifname + "p"], check=True)
        for cmd in (["ip", "link", "set", cls.ifname + "p", "up"],
                    ["ip", "link", "set", cls.ifname, "up"],
                    # what the tests read with `ip addr show`; the kernel
                    # never sees the RoCE frames (they leave through
                    # packet sockets)
                    ["ip", "addr", "add", "192.0.2.1/24", "dev", cls.ifname]):
            subprocess.run(cmd, check=True)
        with open("/sys/class/net/%s/address" % cls.ifname) as f:
            mac = f.read().strip()
        cls.cfg = cfg = os.path.join(cls.tmp.name, "dev.ini")
        config(cfg, mac, "192.0.2.1",
               eal="--no-huge --no-pci --no-shconf -m 256 --vdev=net_af_packet0,iface=%s,"
                   "qdisc_bypass=0" % cls.ifname,
               extra="share = on")
        r = subprocess.run(["unshare", "-m", SHIM, "mwpath0", cls.ifname, RUN, "-c", cfg, "--",
                            "/usr/bin/python3", RUNNER, cls.tmp.name, "mwpath0", "test_rdmacm"],
                           capture_output=True, text=True, timeout=600, env=ENV)
        cls.stdout = r.stdout
        cls.stderr = r.stderr
        cls.returncode = r.returncode
        cls.rows = {json.loads(line)["id"].rsplit(".", 1)[1]: json.loads(line)
                    for line in r.stdout.splitlines() if line.startswith("{")}

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["ip", "link", "del", cls.ifname], capture_output=True)
        cls.tmp.cleanup()

    def test_every_rdmacm_test_but_multicast_passes(self):
        self.assertEqual(self.returncode, 0, self.stderr[-3000:])
        for name in CM_PASS:
            self.assertIn(name, self.rows, self.stdout[-3000:] + self.stderr[-3000:])
            self.assertEqual(self.rows[name]["outcome"], "pass",
                             "%s\n%s" % (self.rows[name]["reason"], self.stdout[-2000:]))

    def test_listeners_refusals_and_a_parent_with_qps(self):
        """test/verbs_device/shared_fork.py on the same device: a second
        process's listener on a taken port is EADDRINUSE, a connect to a
        port nobody listens on is REJECTED (by the parent's CM, which
        answers for nobody), two children connect in turn to a third's
        listener and exchange SENDs, and a child forked after the parent
        made a QP gets no device."""
        r = subprocess.run([RUN, "-c", self.cfg, "--", "/usr/bin/python3", FORKS, "192.0.2.1"],
                           capture_output=True, text=True, timeout=120, env=ENV)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-3000:])
        self.assertNotIn("FAIL", r.stdout)
        self.assertEqual(r.stdout.count("ok: "), 6, r.stdout)

    def test_two_programs_started_apart_share_the_address(self):
        """Debian's rping server and client, each under its own
        mwpath-run with the one configuration: two processes started
        apart on one address, as on a kernel device.  Each opens its own
        packet socket and takes its part from the table in /dev/shm;
        100 pings, every one verified (-V), both exit 0."""
        srv = subprocess.Popen([RUN, "-c", self.cfg, "--", "rping", "-s", "-a", "192.0.2.1",
                                "-p", "7174", "-C", "100", "-V"], env=ENV, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            time.sleep(2)
            cli = subprocess.run([RUN, "-c", self.cfg, "--", "rping", "-c", "-a", "192.0.2.1",
                                  "-p", "7174", "-C", "100", "-V", "-v"], env=ENV, text=True,
                                 capture_output=True, timeout=120)
            out, err = srv.communicate(timeout=60)
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
        self.assertEqual(cli.returncode, 0, cli.stdout[-2000:] + cli.stderr[-2000:])
        self.assertEqual(srv.returncode, 0, out[-2000:] + err[-2000:])
        self.assertEqual(cli.stdout.count("ping data: rdma-ping-"), 100, cli.stdout[-2000:])

    def test_a_device_that_cannot_be_shared_says_why(self):
        """share = on on a port that is not a kernel interface's packet
        socket, or one that bypasses the queueing layer (the other
        processes' sockets would never see what it sends), and a value
        that is not on or off: one line each, and no device."""
        cases = [("--vdev=net_null0,no-rx=1", "on",
                  "share = on needs a net_af_packet port"),
                 ("--vdev=net_af_packet0,iface=%s" % self.ifname, "on",
                  "share = on needs qdisc_bypass=0"),
                 ("--vdev=net_null0,no-rx=1", "sometimes",
                  "share: 'sometimes' is not on or off")]
        for eal, share, says in cases:
            cfg = os.path.join(self.tmp.name, "bad.ini")
            config(cfg, "02:00:00:00:00:01", "192.0.2.1",
                   eal="--no-huge --no-pci --no-shconf -m 256 " + eal, extra="share = " + share)
            r = subprocess.run([RUN, "-c", cfg, "--", "ibv_devinfo", "-d", "mwpath0"],
                               capture_output=True, text=True, timeout=60, env=ENV)
            self.assertIn(says, r.stderr)
            self.assertNotIn("PORT_ACTIVE", r.stdout)

    def test_multicast_skips_and_nothing_else_ran(self):
        for name in CM_MULTICAST:
            self.assertEqual(self.rows.get(name, {}).get("outcome"), "skip", self.rows.get(name))
        self.assertEqual(sorted(self.rows), sorted(CM_PASS + CM_MULTICAST))


if __name__ == "__main__":
    unittest.main(verbosity=2)
