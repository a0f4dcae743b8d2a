# SPDX-License-Identifier: BSD-3-Clause
"""Start-up fails loudly, and the replay gate keeps its promise.

Any object or start-up work request that cannot be made stops mwpath with
exit 2 and one line naming the file, line and section, before any traffic
(no summary is printed: nothing ran).  A program option put before "--"
gets a hint, not the EAL's usage; a bad rx_pcap is named.  A bind's addr
means what a data work request's does (an offset in a region without an
iova).  And a bind or invalidation due at after_rx = N has taken effect
before frame N + 1, however long the lcore is held up between posting it
and running it (MWPATH_DEBUG_GATE_DELAY_US)."""
import json
import os
import re
import subprocess
import unittest

from common import MWPATH, SRC, TmpDirCase

EAL = ["--no-huge", "--no-pci", "--no-shconf", "-m", "128",
       "--log-level=lib.eal:error", "--log-level=lib.telemetry:error"]
PCAP = os.path.join(SRC, "conf", "default-traffic.pcap")

BASE = """\
[security]
keys = sequential
[port 0]
mac = 02:00:00:00:00:01
ipv4 = 192.0.2.1
[pd 0]
[mr 0]
length = 4096
access = local_write,remote_write,mw_bind
[mw 0]
[mw 1]
type = 1
[cq 0]
[qp 0x11]
remote_ipv4 = 192.0.2.2
"""


def run(args, env=None, timeout=60):
    return subprocess.run([MWPATH] + args, capture_output=True, text=True,
                          timeout=timeout, env=env)


def hexnum(v):
    """A number of the dump: an integer, or a "0x..." string."""
    return int(v, 0) if isinstance(v, str) else v


def line_of(text, needle):
    """The 1-based number of the first line of text that is needle."""
    return text.splitlines().index(needle) + 1


class Startup(TmpDirCase):
    def replay(self, cfg, *extra):
        """mwpath on the default traffic with configuration cfg."""
        return run(["-l", "0"] + EAL + ["--vdev", f"net_pcap0,rx_pcap={PCAP}", "--",
                                        "-c", cfg, "--idle-exit", "50"] + list(extra))

    def assert_fails_at_start(self, r, pattern):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], "^mwpath: " + pattern)
        # nothing ran: no lcore started, no summary
        self.assertNotIn("packets in", r.stdout)

    def test_objects_and_work_requests_that_cannot_be_made_stop_it_at_start(self):
        bind = ("[wr 0]\nqp = 0x11\nopcode = bind_mw\nmw = 0\nmr = 0\n"
                "addr = {addr}\nlength = {length}\naccess = {access}\n")
        no_bind_right = BASE.replace("access = local_write,remote_write,mw_bind\n",
                                     "access = local_write,remote_write\n")
        cases = [
            # a window bound past its region
            (BASE, bind.format(addr=0x100, length=8192, access="remote_write"), "[wr 0]",
             r"\[wr 0\]: bind_mw failed at start: .*\(mw_bind_err\): the window must "
             r"lie inside its region"),
            # a region without mw_bind
            (no_bind_right, bind.format(addr=0, length=64, access="remote_write"), "[wr 0]",
             r"\[wr 0\]: bind_mw failed at start: .*\(mw_bind_err\)"),
            # a Type 1 window past its region
            (BASE, bind.format(addr=4000, length=200, access="remote_write").replace(
                "mw = 0", "mw = 1"), "[wr 0]",
             r"\[wr 0\]: bind_mw failed at start: .*\(mw_bind_err\)"),
            # an invalidation of a key that is not there
            (BASE, "[wr 0]\nqp = 0x11\nopcode = local_inv\nrkey = 0x1234\n", "[wr 0]",
             r"\[wr 0\]: local_inv failed at start: .*\(loc_qp_op_err\)"),
            # a UC QP asked for rights UC does not have: blamed at its key
            (BASE, "[qp 0x12]\ntype = uc\naccess = remote_write,remote_read\n"
             "remote_ipv4 = 192.0.2.3\n", "access = remote_write,remote_read",
             r"\[qp 0x12\] access: a uc QP takes local_write and remote_write only"),
            # a pinned key already live
            (BASE, "[mr 1]\nrkey = 0x500\n[mr 2]\nrkey = 0x500\n", "[mr 2]",
             r"\[mr 2\]: cannot make it: File exists"),
        ]
        for base, extra, where, pattern in cases:
            with self.subTest(where=where, extra=extra):
                text = base + extra
                cfg = self.write("bad.ini", text)
                r = self.replay(cfg)
                self.assert_fails_at_start(r, re.escape(cfg) + ":%d: " % line_of(text, where)
                                           + pattern)

    def test_a_uc_qp_gets_remote_write_by_default(self):
        # rc's default (remote_write,remote_read) is refused by UC: its
        # default is remote_write, and it comes up
        cfg = self.write("uc.ini", BASE.replace("[qp 0x11]\n", "[qp 0x11]\ntype = uc\n"))
        r = self.replay(cfg, "--dump-dir", os.path.join(self.d, "dump"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.d, "dump", "objects.json")) as f:
            qp = json.load(f)["qps"][0]
        self.assertEqual((qp["type"], qp["state"]), ("uc", "RTS"))

    def test_program_options_before_the_separator_get_a_hint(self):
        for args in (["--config", "x.ini", "--no-huge", "--"],
                     ["--no-huge", "--idle-exit=100", "--"],
                     ["--dump-dir", "d", "--"]):
            with self.subTest(args=args):
                r = run(args)
                self.assertEqual(r.returncode, 2)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertRegex(r.stderr, r"^mwpath: --[a-z-]+ is mwpath's option, not EAL's: "
                                           r"put it after \"--\"")

    def test_a_bad_rx_pcap_is_blamed_by_name(self):
        text = self.write("text.pcap", "not a capture\n")
        for vdev, pattern in (
                ("net_pcap0,rx_pcap=/nonexistent/in.pcap",
                 r"--vdev net_pcap0: rx_pcap /nonexistent/in.pcap: No such file"),
                (f"net_pcap1,rx_pcap={text},tx_pcap=/dev/null",
                 "--vdev net_pcap1: rx_pcap " + re.escape(text) + ": not a pcap or pcapng file")):
            for form in (["--vdev", vdev], ["--vdev=" + vdev]):
                with self.subTest(form=form):
                    r = run(EAL + form + ["--"])
                    self.assertEqual(r.returncode, 2)
                    self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                    self.assertRegex(r.stderr, "^mwpath: " + pattern)

    def test_a_bind_addr_is_an_offset_in_a_region_without_iova(self):
        # [wr] addr names the same byte for a bind as for a send: an offset
        # from the region's first byte when it has no iova (Type 2 and 1)
        text = BASE + ("[wr 0]\nqp = 0x11\nopcode = bind_mw\nmw = 0\nmr = 0\naddr = 0x100\n"
                       "length = 256\naccess = remote_write\nkey = 7\n"
                       "[wr 1]\nqp = 0x11\nopcode = bind_mw\nmw = 1\nmr = 0\naddr = 0x300\n"
                       "length = 64\naccess = remote_write\n")
        r = self.replay(self.write("off.ini", text), "--dump-dir", os.path.join(self.d, "dump"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.d, "dump", "objects.json")) as f:
            objs = json.load(f)
        base = hexnum(objs["mrs"][0]["iova"])
        got = [(hexnum(w["bound"]["va"]) - base, hexnum(w["bound"]["length"]))
               for w in objs["mws"]]
        self.assertEqual(got, [(0x100, 256), (0x300, 64)])

    def test_the_replay_gate_holds_when_the_lcore_is_delayed(self):
        # the pcap cases whose binds, invalidations and sends are due at
        # after_rx = N, each replayed with the lcore held up for 50 ms
        # between posting that work and running it: every case must still
        # match what gen_cases.py expects (before the gate waited without
        # a time limit, vec_rc_write_invalidated_between_packets let a
        # revoked key write 1020 bytes)
        cases = []
        pcap_dir = os.path.join(SRC, "test", "pcap")
        for name in sorted(os.listdir(pcap_dir)):
            cfg = os.path.join(pcap_dir, name, "config.ini")
            if not os.path.exists(cfg):
                continue
            with open(cfg) as f:
                if re.search(r"^after_rx\s*=\s*[1-9]", f.read(), re.M):
                    cases.append(name)
        self.assertIn("vec_rc_write_invalidated_between_packets", cases)
        env = dict(os.environ, MWPATH_DEBUG_GATE_DELAY_US="50000")
        r = subprocess.run(["/usr/bin/python3", os.path.join(pcap_dir, "run.py"), MWPATH]
                           + cases, capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("%d cases, 0 failed" % len(cases), r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
