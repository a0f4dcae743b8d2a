# SPDX-License-Identifier: BSD-3-Clause
"""librdmacm programs on mwpath (docs/cm.md): Debian's unmodified rping,
ucmatose, udaddy, rdma_server/rdma_client, riostream and rstream
(rsockets) and perftest's -R between two
mwpath devices, two processes joined by net_memif, each through
mwpath-run.  They find each other by IP address alone: the RDMA CM's
REQ/REP/RTU (SIDR for UD) on QP1, then their own traffic.  Every tool must
exit 0 on both sides, and print what shows its data went through (rping
-V checks every byte).  A connection to a port nobody listens on is
REJECTED with reason 8 (invalid service ID), as against a kernel peer.
"""
import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BUILD, SRC  # noqa: E402
from test_verbs_device import (EAL, ENV, LIBRDMACM, RUN, SHIM, MemifPair,  # noqa: E402
                               config, objdump_functions, run, run_two)

TIMEOUT = 90


class Pair(MemifPair):
    """A server and a client mwpath device on one memif link."""

    def pair(self, server, client, wait=1.5):
        """server's command, then (after wait s) client's: both results."""
        return run_two(self, [RUN, "-c", self.server, "--"] + server,
                       [RUN, "-c", self.client, "--"] + client, ENV, wait, TIMEOUT)

    def test_rping_verifies_a_thousand_pings(self):
        s, c = self.pair(["rping", "-s", "-a", "192.0.2.1", "-V", "-C", "1000"],
                         ["rping", "-c", "-a", "192.0.2.1", "-V", "-C", "1000"])
        self.assert_both_ok(s, c)
        self.assertIn("server DISCONNECT EVENT", s[1] + s[2])

    def test_rping_over_ipv6(self):
        s, c = self.pair(["rping", "-s", "-a", "2001:db8::1", "-v", "-C", "10"],
                         ["rping", "-c", "-a", "2001:db8::1", "-v", "-C", "10"])
        self.assert_both_ok(s, c)
        pings = re.findall(r"^ping data: rdma-ping-(\d+)", c[1], re.M)
        self.assertEqual(pings, [str(i) for i in range(10)], c[1])

    def test_ucmatose_one_and_several_connections(self):
        for n in ("1", "8"):
            s, c = self.pair(["ucmatose", "-c", n, "-C", "20"],
                             ["ucmatose", "-s", "192.0.2.1", "-c", n, "-C", "20"])
            self.assert_both_ok(s, c)
            for side in (s, c):
                self.assertIn("data transfers complete", side[1])
                self.assertIn("return status 0", side[1])

    def test_udaddy(self):
        s, c = self.pair(["udaddy", "-C", "20"], ["udaddy", "-s", "192.0.2.1", "-C", "20"])
        self.assert_both_ok(s, c)
        for side in (s, c):
            self.assertIn("data transfers complete", side[1])

    def test_rdma_server_and_rdma_client(self):
        s, c = self.pair(["rdma_server"], ["rdma_client", "-s", "192.0.2.1"])
        self.assert_both_ok(s, c)
        self.assertIn("rdma_server: end 0", s[1])
        self.assertIn("rdma_client: end 0", c[1])

    def riostream(self, server_addr, *args):
        """riostream's server and client, args on both: both results, each
        with its one result row."""
        s, c = self.pair(["riostream"] + list(args),
                         ["riostream", "-s", server_addr] + list(args))
        self.assert_both_ok(s, c)
        for side in (s, c):
            self.assertNotIn("failed", side[1] + side[2])
            self.assertRegex(side[1], r"(?m)^custom\s+\S+\s+\d+\s+\d+\s+\S+\s+[\d.]+s\s+[\d.]+",
                             side[1])
        return s, c

    def test_riostream_verifies_its_iowrites_in_every_mode(self):
        # rsockets over the RDMA CM: the iomap offered in the first send,
        # then riowrite (RDMA WRITE into the peer's buffer) both ways,
        # every byte checked (-T v).  Non-blocking calls (riostream's
        # default), blocking ones (-T b) and rpoll (-T a); 64 B goes
        # inline, 4 KiB and 100000 B through the send ring in pieces
        # that wrap it.
        for size, count, mode in (("64", "100", "n"), ("4096", "200", "b"),
                                  ("100000", "60", "a"), ("100000", "60", "n")):
            with self.subTest(size=size, mode=mode):
                self.riostream("192.0.2.1", "-S", size, "-C", count, "-T", "v",
                               "-T", mode)

    def test_riostream_over_ipv6(self):
        self.riostream("2001:db8::1", "-S", "4096", "-C", "100", "-T", "v", "-b", "::")

    def test_rstream_verifies_its_stream(self):
        # rsend/rrecv: data into the peer's granted receive buffer, its
        # credits returned as it reads (RDMA WRITE WITH IMMEDIATE)
        s, c = self.pair(["rstream", "-S", "100000", "-C", "100", "-T", "v"],
                         ["rstream", "-s", "192.0.2.1", "-S", "100000", "-C", "100",
                          "-T", "v"])
        self.assert_both_ok(s, c)
        for side in (s, c):
            self.assertNotIn("failed", side[1] + side[2])
            self.assertRegex(side[1], r"(?m)^custom\s+97k\s+100\s+", side[1])

    def test_plain_sockets_through_librspreload(self):
        # librdmacm's librspreload turns a program's socket calls into
        # rsockets; preloaded before mwpath's library it finds mwpath's
        # rsocket(): rstream -T s uses plain sockets, every byte checked
        preload = glob.glob("/usr/lib/*/rsocket/librspreload.so*")
        self.assertTrue(preload, "librdmacm1's librspreload.so is not installed")
        env = dict(ENV, LD_PRELOAD=":".join(filter(None, [ENV.get("LD_PRELOAD"), preload[0]])))
        args = ["rstream", "-T", "s", "-S", "100000", "-C", "50", "-T", "v"]
        s, c = run_two(self, [RUN, "-c", self.server, "--"] + args,
                       [RUN, "-c", self.client, "--"] + args + ["-s", "192.0.2.1"],
                       env, 1.5, TIMEOUT)
        self.assert_both_ok(s, c)
        for side in (s, c):
            self.assertNotIn("failed", side[1] + side[2])
            self.assertRegex(side[1], r"(?m)^custom\s+97k\s+50\s+", side[1])

    def test_riostream_to_a_port_nobody_listens_on_is_refused(self):
        s, c = self.pair(["timeout", "6", "ibv_rc_pingpong", "-d", "mwpath0", "-g", "0",
                          "-p", "18520"],
                         ["riostream", "-s", "192.0.2.1", "-S", "64", "-C", "1"])
        # (riostream's calls are non-blocking: rconnect says EINPROGRESS,
        # and rpoll shows the REJ as POLLERR with ECONNREFUSED)
        self.assertNotEqual(c[0], 0)
        self.assertIn("rpoll: Connection refused", c[1] + c[2])

    def test_rsockets_answer_bad_calls_and_bad_peers(self):
        # one process, its connections to its own port: calls rsockets
        # do not take, an RDMA CM peer whose connection data is not
        # rsockets' (version 2, none) rejected with the listener still
        # serving, a peer that breaks the data rules (a length beyond
        # any grant, more messages than credits: EPROTO), riowrite
        # outside the peer's iomap, the peer's close
        # (net_null receiving nothing: its default is a flood of frames)
        alone = os.path.join(self.tmp.name, "alone-rs.ini")
        config(alone, "02:00:00:00:00:03", "192.0.2.3", eal=EAL + " --vdev=net_null0,no-rx=1")
        r = run(alone, os.path.join(BUILD, "test", "tools", "rsocket_rules"), "192.0.2.3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(re.findall(r"(?m)^ok: ", r.stdout)), 37, r.stdout)
        self.assertNotIn("broken", r.stderr)

    def perftest(self, *cmd):
        s, c = self.pair(list(cmd) + ["-R", "-d", "mwpath0"],
                         list(cmd) + ["-R", "-d", "mwpath0", "192.0.2.1"])
        self.assert_both_ok(s, c)
        rows = re.findall(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", c[1], re.M)
        self.assertTrue(rows, c[1])
        self.assertGreater(float(rows[0][3]), 0, c[1])

    def test_ib_write_bw_over_the_rdma_cm(self):
        self.perftest("ib_write_bw", "-n", "2000")

    def test_ib_send_bw_on_ud_over_the_rdma_cm(self):
        # as test_verbs_device's: no more sends than the receiver has
        # receives posted (UD drops what finds none, and perftest's
        # receiver waits for every one)
        self.perftest("ib_send_bw", "-c", "UD", "-n", "500")

    def test_a_port_nobody_listens_on_is_rejected_invalid_service_id(self):
        # the server side opens its device (QP1 answers) and listens on
        # no RDMA CM port: a pingpong waiting for its TCP peer
        s, c = self.pair(["timeout", "6", "ibv_rc_pingpong", "-d", "mwpath0", "-g", "0",
                          "-p", "18519"],
                         ["rping", "-c", "-a", "192.0.2.1", "-C", "1", "-v"])
        self.assertNotEqual(c[0], 0)
        self.assertIn("RDMA_CM_EVENT_REJECTED, error 8", c[1] + c[2])

    def test_an_id_keeps_the_kernels_rules(self):
        # nobody has 192.0.2.99: ADDR_ERROR (-ETIMEDOUT) after the call's
        # 200 ms; a second resolve or a bind meanwhile is EINVAL; the
        # event is held 300 ms by one thread while another destroys its
        # id, which must wait for the acknowledgement (librdmacm's
        # contract, which rping's two threads rely on)
        alone = os.path.join(self.tmp.name, "alone.ini")
        config(alone, "02:00:00:00:00:03", "192.0.2.3", eal=EAL + " --vdev=net_null0")
        r = run(alone, os.path.join(BUILD, "test", "tools", "cm_id_rules"),
                "192.0.2.3", "192.0.2.99")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("event: RDMA_CM_EVENT_ADDR_ERROR, status -110", r.stdout)
        self.assertIn("destroy returned after the acknowledgement", r.stdout)

class Exports(unittest.TestCase):
    def test_every_librdmacm_function_is_defined_or_listed_with_a_reason(self):
        exported = objdump_functions(LIBRDMACM)
        ours = objdump_functions(SHIM)
        listed = set()
        with open(os.path.join(SRC, "provider", "not-interposed-rdmacm.txt")) as f:
            for line in f:
                line = line.split("#")[0].strip()
                if line:
                    listed.add(line)
        self.assertEqual(sorted(exported - ours - listed), [],
                         "neither defined by libmwpath-ibverbs.so nor listed")
        self.assertEqual(sorted(listed - exported), [], "listed but not in librdmacm")
        self.assertEqual(sorted(listed & ours), [], "listed but defined")


if __name__ == "__main__":
    unittest.main(verbosity=2)
