# SPDX-License-Identifier: BSD-3-Clause
"""The mwpath program: --help documents every option of the option table,
bad options and bad or missing configuration files give one line and a
non-zero exit before any port starts, the default run does exactly what
the traffic's generator says, and SIGINT/SIGTERM stop the lcores and print
the summary."""
import json
import os
import re
import signal
import subprocess
import time
import unittest

from common import MWPATH, SRC, TmpDirCase, cqe, key, load_dump, port_counts, psn
import default_traffic
import roce

EAL = ["--no-huge", "--no-pci", "--no-shconf", "-m", "128",
       "--log-level=lib.eal:error", "--log-level=lib.telemetry:error"]


def run(args, cwd=None, timeout=60):
    return subprocess.run([MWPATH] + args, capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


class Cli(TmpDirCase):
    def assert_one_line_error(self, r, pattern, code=2):
        self.assertEqual(r.returncode, code, r.stderr)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], "^mwpath: " + pattern)

    def test_help_documents_every_option_of_the_table(self):
        with open(os.path.join(SRC, "app", "options.c")) as f:
            table = re.findall(r'\{ "([a-z-]+)", (?:no|required)_argument', f.read())
        self.assertGreaterEqual(len(table), 5)
        r = run(["--help"])
        self.assertEqual(r.returncode, 0)
        for opt in table:
            self.assertIn("--" + opt, r.stdout)
        self.assertIn("Default EAL options", r.stdout)

    def test_version(self):
        r = run(["--version"])
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^mwpath \d+\.\d+\.\d+ \(DPDK 22\.11")

    def test_bad_option_is_one_line_and_exit_2(self):
        self.assert_one_line_error(run(["--bogus"]), "unknown option '--bogus'")
        self.assert_one_line_error(run(EAL + ["--", "--bogus"]), "unknown option")
        self.assert_one_line_error(run(["--idle-exit", "soon"]), "--idle-exit: 'soon'")
        self.assert_one_line_error(run(["--config"]), "option '--config' needs a value")
        self.assert_one_line_error(run(["extra"]), "unexpected argument")

    def test_missing_config_is_one_line_and_exit_2(self):
        self.assert_one_line_error(run(["--config", "/nonexistent.ini"]),
                                   "cannot read config '/nonexistent.ini': No such file")

    def test_bad_config_names_file_line_section_and_key(self):
        cases = [
            ("[port 0]\nmtu = 1500\n", r".*bad\.ini:2: \[port 0\] mtu: '1500' is not a RoCE path MTU"),
            ("[port 0]\n\nmac = 01:00:00:00:00:01\n", r".*bad\.ini:3: \[port 0\] mac: .*not a unicast MAC"),
            ("[port 0]\nipv4 = 300.1.1.1\n", r".*:2: \[port 0\] ipv4: "),
            ("[port 0]\nipv6 = ::g\n", r".*:2: \[port 0\] ipv6: "),
            ("[port 0]\nneigh_probes = 256\n",
             r".*:2: \[port 0\] neigh_probes: '256' is not a number from 1 to 255"),
            ("[port 0]\nneigh_size = 5000\n",
             r".*:2: \[port 0\] neigh_size: '5000' is not a number from 1 to 4096"),
            ("[port 0]\nctrl_rate = 0\n",
             r".*:2: \[port 0\] ctrl_rate: '0' is not a number from 1 to 10000000"),
            ("[port 0]\ncolour = blue\n", r".*:2: \[port 0\] colour: unknown key"),
            # the verbs sections' key tables
            ("[pd 0]\n[mr 0]\npd = 0\nlength = 0\n",
             r".*:4: \[mr 0\] length: '0' is not a length from 1 to 2\^32 - 1"),
            ("[pd 0]\n[mr 0]\nshade = red\n",
             r".*:3: \[mr 0\] shade: unknown key \(known: pd, length, access, iova, "
             r"fill, rkey\)"),
            ("[mw 1]\ntype = 3\n", r".*:2: \[mw 1\] type: '3' is not 1 or 2"),
            ("[qp 5]\nrq_psn = 0x1000000\n",
             r".*:2: \[qp 5\] rq_psn: '0x1000000' is not a 24-bit PSN"),
            ("[qp 5]\ntype = rd\n", r".*:2: \[qp 5\] type: 'rd' is not rc or uc"),
            ("[qp 5]\nremote_ipv4 = 10.0.0\n",
             r".*:2: \[qp 5\] remote_ipv4: '10.0.0' is not an IPv4 address"),
            ("[qp 5]\nremote_mac = 01:00:5e:00:00:01\n",
             r".*:2: \[qp 5\] remote_mac: .* is not a unicast MAC address"),
            ("[wr 1]\nopcode = jump\n", r".*:2: \[wr 1\] opcode: 'jump' is not an opcode"),
            ("[wr 1]\nfence = maybe\n", r".*:2: \[wr 1\] fence: 'maybe' is not yes or no"),
            ("[wr 1]\nsge = 0:0\n", r".*:2: \[wr 1\] sge: '0:0' is not MR:ADDR:LENGTH"),
            ("[recv 1]\nwr_id = -1\n", r".*:2: \[recv 1\] wr_id: '-1' is not a number"),
            ("[port 0]\n[widget 1]\n", r".*:2: \[widget 1\]: unknown section kind"),
            ("[port]\n", r".*:1: \[port\]: section names are"),
            ("mtu = 1024\n", r".*:1: key outside any section"),
            ("[port 0]\njust words\n", r".*:2: expected 'key = value'"),
            ("[port 0\n", r".*:1: section header without"),
            # met twice: blamed where it is met the second time
            ("[port 0]\nmac = 02:00:00:00:00:01\nmac = 02:00:00:00:00:02\n",
             r".*bad\.ini:3: \[port 0\] mac: key appears twice in the section \(first at line 2\)"),
            ("[port 0]\nmtu = 1024\n[pd 0]\n[port 0]\n",
             r".*bad\.ini:4: \[port 0\]: section appears twice \(first at line 1\)"),
            ("[pd 0]\n[ pd 0 ]\n", r".*:2: \[pd 0\]: section appears twice"),
        ]
        for text, pattern in cases:
            with self.subTest(text=text):
                self.assert_one_line_error(run(["-c", self.write("bad.ini", text)]), pattern)

    def test_config_for_a_port_the_eal_does_not_have(self):
        cfg = self.write("two.ini", "[port 1]\nmtu = 1024\n")
        r = run(EAL + ["--vdev", "net_null0", "--", "-c", cfg])
        self.assertEqual(r.returncode, 2)
        self.assertIn("[port 1] configured, but the EAL has only 1 port", r.stderr)

    def test_default_run_matches_the_generator(self):
        # The bundled files are what the committed script makes.
        pcap, exp = os.path.join(self.d, "t.pcap"), os.path.join(self.d, "t.json")
        frames, expect, answers = default_traffic.build()
        roce.write_pcap(pcap, frames)
        with open(os.path.join(SRC, "conf", "default-traffic.pcap"), "rb") as f:
            with open(pcap, "rb") as g:
                self.assertEqual(f.read(), g.read(), "conf/default-traffic.pcap is stale")
        with open(os.path.join(SRC, "conf", "default-traffic.expect.json")) as f:
            self.assertEqual(json.load(f), json.loads(json.dumps(expect)))

        dump = os.path.join(self.d, "dump")
        r = run(["--dump-dir", dump], cwd=self.d)
        self.assertEqual(r.returncode, 0, r.stderr)
        c = port_counts(dump)
        self.assertEqual(c["packets_in"], expect["frames"])
        self.assertEqual(c["accepted"], expect["accepted"])
        self.assertEqual(c["control"], expect["control"])
        self.assertEqual(c["drop"], expect["drop"])
        self.assertEqual(c["dropped"], sum(expect["drop"].values()))
        self.assertIn("stopped: idle (--idle-exit)", r.stdout)
        self.assertEqual(c["packets_out"], expect["answers"])
        # the answers, byte for byte, as the script says they must be
        from scapy.utils import RawPcapReader
        rd = RawPcapReader(os.path.join(self.d, "mwpath-out.pcap"))
        got = [data for data, _ in rd]
        rd.close()
        self.assertEqual(len(got), len(answers))
        for i, (g, w) in enumerate(zip(got, answers)):
            self.assertEqual(g.hex(), w.hex(), f"answer {i}")
        self.assertIn("denied unknown_key", r.stdout)
        self.assertRegex(r.stdout, r"qp 0x11 rc ERR: in 7 acks 2 naks 0/0/1/0")
        # conf/default.ini posts 4 receives; the SEND and the SEND_WITH_INV
        # take two, the QP's ERR flushes the other two
        self.assertIn("receives: 2 ok, 0 failed, 2 flushed", r.stdout)

    def run_until_signal(self, sig, dump):
        """Run on replayed traffic until the first --stats-interval line,
        then a little longer, then send sig.  Not after a fixed sleep:
        before the EAL is up the signal's default action would kill the
        process, and on a loaded machine the start took longer than the
        2.5 s once allowed."""
        pcap = os.path.join(SRC, "conf", "default-traffic.pcap")
        out_path, err_path = os.path.join(self.d, "out"), os.path.join(self.d, "err")
        with open(out_path, "w") as o, open(err_path, "w") as e:
            p = subprocess.Popen([MWPATH, "-l", "0-1"] + EAL + [
                "--vdev", f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "--",
                "--stats-interval", "1", "--dump-dir", dump], stdout=o, stderr=e,
                text=True)
        deadline = time.time() + 60
        while p.poll() is None and time.time() < deadline:
            with open(out_path) as f:
                if re.search(r" port 0, last ", f.read()):
                    break
            time.sleep(0.05)
        time.sleep(0.5)
        p.send_signal(sig)
        p.wait(timeout=30)
        with open(out_path) as o, open(err_path) as e:
            return p.returncode, o.read(), e.read()

    def test_sigint_and_sigterm_stop_and_summarise(self):
        for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
            with self.subTest(signal=name):
                dump = os.path.join(self.d, "dump-" + name)
                code, out, err = self.run_until_signal(sig, dump)
                self.assertEqual(code, 0, err)
                self.assertIn(f"stopped: {name}", out)
                self.assertEqual(load_dump(dump, "objects.json")["run"]["stopped"], name)
                c = port_counts(dump)
                self.assertGreater(c["packets_in"], 1000)
                self.assertEqual(c["dropped"] + c["accepted"] + c["control"],
                                 c["packets_in"])
                # --stats-interval
                self.assertRegex(out, r" port 0, last \d+\.\d{3} s: in \d+ \(\d+ bytes\) "
                                 r"out \d+ \(\d+ bytes\)")

    def test_bad_verbs_sections_name_file_line_section_and_key(self):
        base = "[pd 0]\n[cq 0]\n"
        QP = "[qp 0x11]\npd = 0\ncq = 0\nremote_ipv4 = 192.0.2.2\n"
        cases = [
            ("[mr 0]\npd = 3\n", r".*:4: \[mr 0\] pd: no \[pd 3\]"),
            ("[mr 0]\npd = 0\naccess = remote_sing\n", r".*:5: \[mr 0\] access: 'remote_sing'"),
            ("[mr 0]\npd = 0\nfill = ones\n", r".*:5: \[mr 0\] fill: 'ones' is not zero, pattern or random:SEED"),
            ("[mw 0]\npd = 0\ntype = 3\n", r".*:5: \[mw 0\] type: '3' is not 1 or 2"),
            ("[qp 0x11]\npd = 0\ncq = 0\n", r".*:3: \[qp 0x11\]: needs remote_ipv4"),
            ("[qp 0x11]\ntype = xrc\n", r".*:4: \[qp 0x11\] type: 'xrc' is not rc or uc"),
            ("[qp 0x11]\nrecv = lots\n", r".*:4: \[qp 0x11\] recv: 'lots' is not COUNTxSIZE"),
            ("[qp 1]\n", r".*:3: \[qp 1\]: QP numbers go from 2"),
            ("[wr 0]\nqp = 0x11\nopcode = teleport\n", r".*:5: \[wr 0\] opcode: 'teleport'"),
            ("[wr 0]\nqp = 0x11\nafter_rx = soon\n", r".*:5: \[wr 0\] after_rx: 'soon'"),
            ("[mr 0]\npd = 0\nrkey = 0x1ffffffff\n", r".*:5: \[mr 0\] rkey: "),
            ("[qp 0x11]\nremote_mac = 01:00:5e:00:00:01\n",
             r".*:4: \[qp 0x11\] remote_mac: .*not a unicast MAC"),
            (QP + "type = uc\n[mr 0]\npd = 0\n[wr 0]\nqp = 0x11\nopcode = read\nmr = 0\n"
             "length = 8\nremote_rkey = 0x100\n", r".*:\d+: \[wr 0\] opcode: read needs an rc QP"),
            (QP + "[mr 0]\npd = 0\n[wr 0]\nqp = 0x11\nopcode = write\nmr = 0\nlength = 8\n",
             r".*:\d+: \[wr 0\] remote_rkey: write needs the peer's remote_rkey"),
            (QP + "[mr 0]\npd = 0\n[wr 0]\nqp = 0x11\nopcode = fetch_add\nmr = 0\nlength = 4\n"
             "remote_rkey = 0x100\n", r".*:\d+: \[wr 0\] length: an atomic's result is one 8-byte"),
            (QP + "[mr 0]\npd = 0\n[wr 0]\nqp = 0x11\nopcode = send\nsge = 0:0:8,1:0:8\n",
             r".*:\d+: \[wr 0\] sge: no \[mr 1\]"),
            (QP + "timeout = 32\n", r".*:\d+: \[qp 0x11\] timeout: '32'"),
            (QP.replace("0x11", "0x12") + "retry_cnt = 8\n", r".*:\d+: \[qp 0x12\] retry_cnt: '8'"),
            (QP + "remote_mac = 02:00:00:00:00:99\n[wr 0]\nqp = 0x11\nopcode = send_with_inv\n",
             r".*:\d+: \[wr 0\] rkey: send_with_inv needs an rkey"),
            (QP + "remote_mac = 02:00:00:00:00:99\n[mr 0]\npd = 0\nlength = 64\n"
             "[wr 0]\nqp = 0x11\nopcode = send\nmr = 0\naddr = 60\nlength = 8\n",
             r".*:\d+: \[wr 0\] length: .*not inside it"),
            ("[wr 0]\nqp = 0x42\nopcode = local_inv\nrkey = 1\n", r".*:4: \[wr 0\] qp: no \[qp 0x42\]"),
            # two names, one number
            (QP + "[qp 17]\n", r".*:7: \[qp 17\]: the same number as \[qp 0x11\]"),
            (QP + "[wr 1]\nqp = 0x11\nopcode = local_inv\nrkey = 1\n[wr 0x1]\n",
             r".*:11: \[wr 0x1\]: the same number as \[wr 1\]"),
            ("[security]\nkeys = guessable\n",
             r".*:4: \[security\] keys: 'guessable' is not random or sequential"),
            ("[security]\nguess_threshold = some\n",
             r".*:4: \[security\] guess_threshold: 'some' is not a number of refused"),
            ("[security]\nguess_block_ms = 0\n",
             r".*:4: \[security\] guess_block_ms: '0' is not milliseconds"),
        ]
        for text, pattern in cases:
            with self.subTest(text=text):
                self.assert_one_line_error(run(["-c", self.write("bad.ini", base + text)]),
                                           pattern)

    def test_main_lcore_polls_when_there_is_no_worker(self):
        pcap = os.path.join(SRC, "conf", "default-traffic.pcap")
        dump = os.path.join(self.d, "dump")
        r = run(["-l", "0"] + EAL + ["--vdev", f"net_pcap0,rx_pcap={pcap}", "--",
                 "--idle-exit", "100", "--dump-dir", dump])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 polling lcore", r.stdout)
        self.assertIn("stopped: idle (--idle-exit)", r.stdout)
        self.assertEqual(port_counts(dump)["packets_in"], 15)

    def test_bad_program_options(self):
        for args, pattern in (
                (["--lcores-per-port", "0"], r"--lcores-per-port: 0 lcores"),
                (["--lcores-per-port", "99"], r"--lcores-per-port: '99' is not a number from 0 to"),
                (["--dump-dir"], r"option '--dump-dir' needs a value")):
            with self.subTest(args=args):
                self.assert_one_line_error(run(args), ".*" + pattern)

    def test_telemetry_commands(self):
        """/mwpath/stats, /mwpath/qp, /mwpath/keys, /mwpath/neigh,
        /mwpath/lcores and /mwpath/sources answer on the
        telemetry socket while traffic runs, and agree with the config."""
        import socket
        pcap = os.path.join(SRC, "conf", "default-traffic.pcap")
        prefix = "mwptel%d" % os.getpid()
        p = subprocess.Popen([MWPATH, "-l", "0-1"] + EAL + ["--file-prefix", prefix,
                              "--vdev", f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "--"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
            for _ in range(100):
                if os.path.exists(path):
                    break
                time.sleep(0.05)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            for attempt in range(50):
                try:
                    s.connect(path)
                    break
                except OSError:
                    if attempt == 49:
                        raise
                    time.sleep(0.05)
            json.loads(s.recv(16384))

            def ask(cmd):
                s.send(cmd.encode())
                return json.loads(s.recv(65536))[cmd.split(",")[0]]
            # the socket is up with the EAL; the lcores start later (on a
            # loaded machine, much later): ask until a whole pass of the
            # file is counted, not after a fixed sleep
            deadline = time.time() + 30
            while True:
                st = (ask("/mwpath/stats") or {}).get("port0", {})  # null before the ports
                if st.get("rx_pkts", 0) > 15 or time.time() > deadline:
                    break
                time.sleep(0.05)
            self.assertGreater(st.get("rx_pkts", 0), 15)
            self.assertGreater(st["drop_bad_icrc"], 0)
            self.assertEqual(ask("/mwpath/stats,0")["rx_pkts"] >= st["rx_pkts"], True)
            qp = ask("/mwpath/qp,0x11")
            self.assertEqual((qp["qpn"], qp["type"]), ("0x11", "rc"))
            self.assertEqual(qp["denied_unknown_key"], 1)
            self.assertIn("0x11", ask("/mwpath/qp"))
            # keys, QPNs, PSNs in hex strings, as objects.json has them
            self.assertEqual(qp["remote_qpn"], "0x99")
            self.assertGreaterEqual(psn(qp["expected_psn"]), 6)  # a whole pass went by
            for k in ("sq_psn", "req_next_psn", "req_unacked_psn"):
                self.assertEqual(qp[k], "0x000000", k)
            keys = ask("/mwpath/keys")
            # the region, the receives' buffer and the CM's receive region (QP1)
            self.assertEqual(keys["live"], 3)
            self.assertEqual(keys["0x00000100"]["kind"], "mr")
            self.assertEqual(keys["0x00000100"]["rkey"], "0x00000100")
            self.assertEqual(keys["0x00000100"]["va"], "0x10000")
            # what the key grants a peer, by name
            self.assertEqual(keys["0x00000100"]["access"],
                             "remote_write,remote_read,remote_atomic")
            self.assertEqual(ask("/mwpath/keys,0x100")["length"], 4096)
            # the ARP request taught the port its sender; it was answered
            # (the endless replay meets the reply rate: counted, not lost)
            st = ask("/mwpath/stats,0")
            self.assertGreater(st["ctrl_arp_reply_out"], 0)
            self.assertLessEqual(st["ctrl_arp_reply_out"] + st["ctrl_rate_limited"],
                                 st["ctrl_arp_request_in"])
            self.assertGreaterEqual(st["ctrl_arp_reply_out"] + st["ctrl_rate_limited"] + 1,
                                    st["ctrl_arp_request_in"])
            neigh = ask("/mwpath/neigh,0")
            self.assertEqual(neigh["192_0_2_2"]["ip"], "192.0.2.2")
            self.assertEqual(neigh["192_0_2_2"]["mac"], default_traffic.PEER_MAC)
            self.assertIn(neigh["192_0_2_2"]["state"], ("stale", "reachable"))
            self.assertGreaterEqual(neigh["learned"], 1)
            self.assertIn("port0", ask("/mwpath/neigh"))
            # per lcore: its packets and rate, and the QPs its engine owns
            lcores = ask("/mwpath/lcores")
            self.assertEqual(len(lcores), 1, lcores)
            (name, lc), = lcores.items()
            self.assertEqual(name, "lcore%d" % lc["lcore"])
            self.assertGreater(lc["rx_pkts"], 0)
            self.assertIn("rx_pps", lc)
            self.assertEqual(lc["qps_owned"], 2, "QP 0x11 and QP1, the CM's")
            self.assertEqual((lc["handoffs_out"], lc["handoffs_in"]), (0, 0))
            self.assertEqual(ask("/mwpath/qp,0x11")["lcore"], lc["lcore"])
            # the one refused request (the window's key, after its
            # invalidation) is counted against its source, not blocked:
            # no guess_threshold in the default configuration
            src = ask("/mwpath/sources")
            self.assertEqual(src["skipped"], 0)
            peer = src["192_0_2_2_p0q0"]
            self.assertEqual((peer["ip"], peer["refused"], peer["blocked"], peer["blocks"]),
                             ("192.0.2.2", 1, 0, 0))
            s.close()
        finally:
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)

    def test_dump_dir_and_two_queues(self):
        """Two rx_pcap files are two queues: --lcores-per-port 2 polls
        both; --dump-dir leaves the objects, completions and regions."""
        pcap = os.path.join(SRC, "conf", "default-traffic.pcap")
        dump = os.path.join(self.d, "dump")
        # three lcores on two CPUs: the main one and a worker per queue
        r = run(["--lcores", "0@0,1@1,2@1"] + EAL + ["--vdev", "net_pcap0,rx_pcap=%s,rx_pcap=%s" % (pcap, pcap),
                 "--", "--lcores-per-port", "2", "--idle-exit", "100", "--dump-dir", dump],
                cwd=self.d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(port_counts(dump)["packets_in"], 30)
        self.assertIn("2 polling lcores", r.stdout)
        # QP 0x11 belongs to queue 1's lcore (0x11 % 2): the 8 frames
        # for it that queue 0 received (7 requests and a CNP) were handed
        # over, not processed there
        q = dict((int(m[0]), (int(m[1]), int(m[2]), int(m[3]))) for m in re.findall(
            r"queue (\d) \(lcore \d\): in (\d+), handed to the owner (\d+), "
            r"handed over (\d+)", r.stdout))
        self.assertEqual(q, {0: (15, 8, 0), 1: (15, 0, 8)}, r.stdout)
        self.assertEqual({e["queue"]: (e["packets_in"], e["handed_to_owner"], e["handed_over"])
                          for e in load_dump(dump, "objects.json")["ports"][0]["queues"]}, q)
        # net_pcap has no rte_flow: said, and the hand-offs do the work
        self.assertRegex(r.stdout, r"rte_flow: 0 rules steering QPs to their lcores' queues, "
                         r"0 spreading RoCEv2 over the queues \(per-QP steering: .*\)\n"
                         r"    what the PMD refused goes by RSS, then hand-offs")
        with open(os.path.join(dump, "objects.json")) as f:
            objs = json.load(f)
        self.assertEqual(objs["mrs"][0]["rkey"], "0x00000100")
        self.assertEqual(objs["mws"][0]["state"], "free")   # invalidated by SEND_WITH_INV
        self.assertEqual(objs["qps"][0]["state"], "ERR")
        with open(os.path.join(dump, "completions.json")) as f:
            cqes = [cqe(c) for c in json.load(f)["cqs"][0]["completions"]]
        self.assertEqual([c["opcode"] for c in cqes[:3]], ["bind_mw", "recv", "recv"])
        self.assertEqual(cqes[2]["invalidated_rkey"], 0x80000042)
        with open(os.path.join(dump, "mr-0.bin"), "rb") as f:
            mem = f.read()
        self.assertEqual(mem[0x40:0x80], bytes(range(64)))   # the first WRITE

    def test_keys_are_random_unless_the_configuration_pins_them(self):
        """The default configuration without its [security] section: the
        first region's key is no longer 0x100, the window's index no
        longer 0x800000 (odds of either by chance: 2^-31 and 2^-23), and
        two runs give other keys."""
        pcap = os.path.join(SRC, "conf", "default-traffic.pcap")
        with open(os.path.join(SRC, "conf", "default.ini")) as f:
            text = f.read()
        self.assertIn("[security]\nkeys = sequential\n", text)
        ini = self.write("random.ini", text.replace("[security]\nkeys = sequential\n", ""))
        keys, psns = [], []
        for n in range(2):
            dump = os.path.join(self.d, "dump-random-%d" % n)
            r = run(EAL + ["--vdev", "net_pcap0,rx_pcap=%s" % pcap, "--", "-c", ini,
                           "--idle-exit", "100", "--dump-dir", dump], cwd=self.d)
            self.assertEqual(r.returncode, 0, r.stderr)
            # the section gives rq_psn (kept) but no sq_psn (drawn)
            m = re.search(r"mwpath: \[qp 0x11\] starting PSNs: sq_psn (0x[0-9a-f]{6}), "
                          r"rq_psn 0x000000 \(drawn at random", r.stdout)
            self.assertIsNotNone(m, r.stdout)
            psns.append(int(m.group(1), 16))
            with open(os.path.join(dump, "objects.json")) as f:
                objs = json.load(f)
            mr, mw = key(objs["mrs"][0]["rkey"]), key(objs["mws"][0]["rkey"])
            self.assertNotEqual(mr, 0x100)
            self.assertGreaterEqual(mr >> 8, 1)
            self.assertLess(mr >> 8, 0x800000)
            self.assertNotEqual(mw >> 8, 0x800000)
            self.assertGreaterEqual(mw >> 8, 0x800000)
            keys.append((mr, mw))
        self.assertNotEqual(keys[0], keys[1])
        self.assertNotEqual(psns[0], psns[1])   # odds by chance: 2^-24

    def test_pinned_keys_keep_the_starting_psns_at_zero(self):
        """keys = sequential (replays): a PSN the section does not give is
        0, and nothing is said about it."""
        pcap = os.path.join(SRC, "conf", "default-traffic.pcap")
        ini = os.path.join(SRC, "conf", "default.ini")
        dump = os.path.join(self.d, "dump-pinned")
        r = run(EAL + ["--vdev", "net_pcap0,rx_pcap=%s" % pcap, "--", "-c", ini,
                       "--idle-exit", "100", "--dump-dir", dump], cwd=self.d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("starting PSNs", r.stdout)
        with open(os.path.join(dump, "objects.json")) as f:
            qp = json.load(f)["qps"][0]
        self.assertEqual(qp["sq_psn"], "0x000000")

    def test_no_port_is_a_clear_error(self):
        r = run(EAL + ["--"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("mwpath: no DPDK port", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
