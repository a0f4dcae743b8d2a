# SPDX-License-Identifier: BSD-3-Clause
"""What mwpath prints and leaves for a person or a script: one style for
numbers that name something -- keys, QPNs, PSNs, addresses in hex strings
-- in objects.json, completions.json and mwpath-inspect (telemetry's are
checked by test_cli.py's telemetry test); JSON as jansson writes it; the
dump's port counters equal to the printed summary's; --stats-interval
lines with a timestamp and rates that agree with their counters, and the
summary's average rates.  No speed is asserted: only structure and
consistency."""
import datetime
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

from common import (INSPECT, MWPATH, SRC, hexval, load_dump, port_counts,
                    summary_counts)
import roce

EAL = ["--no-huge", "--no-pci", "--no-shconf", "-m", "128",
       "--log-level=lib.eal:error", "--log-level=lib.telemetry:error"]
PCAP = os.path.join(SRC, "conf", "default-traffic.pcap")

# the fields of the dump in hex, and their forms (common.HEX_FORMS)
DUMP_HEX = {"lkey": "key", "rkey": "key", "live_keys": "key", "invalidated_rkey": "key",
            "imm_data": "key", "qpn": "qpn", "remote_qpn": "qpn", "qp_num": "qpn",
            "qp": "qpn", "rq_psn": "psn", "sq_psn": "psn", "next_psn": "psn",
            "unacked_psn": "psn", "iova": "addr", "va": "addr"}


def walk(v, path=()):
    """Every (path, value) of a JSON value, leaves and inner nodes."""
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from walk(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk(x, path + (i,))


def field(path):
    """The name a value goes by: its key, or its list's key."""
    names = [p for p in path if isinstance(p, str)]
    return names[-1] if names else None


class Output(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_dump(self, args, name="dump"):
        """mwpath with args after "--" and --dump-dir: (result, dump dir)."""
        dump = os.path.join(self.d, name)
        r = subprocess.run([MWPATH, "-l", "0-1"] + EAL + args + ["--dump-dir", dump],
                           capture_output=True, text=True, cwd=self.d, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r, dump

    def replay(self, pcap=PCAP, config=None, name="dump"):
        out = os.path.join(self.d, name + "-out.pcap")
        return self.run_dump(["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (pcap, out), "--",
                              "--idle-exit", "100"] +
                             (["-c", config] if config else []), name)

    def check_json_file(self, path):
        """A dump file: JSON with jansson's two-space indent, as Python
        writes the same value (no hand-made spacing), and one style of
        number: the hex fields in their forms, every other number an
        integer (seconds excepted), no hex string elsewhere."""
        with open(path) as f:
            text = f.read()
        v = json.loads(text)
        self.assertEqual(text, json.dumps(v, indent=2) + "\n", path)
        seen = set()
        for p, x in walk(v):
            name = field(p)
            if name in DUMP_HEX and not isinstance(x, (dict, list)) and x is not None:
                hexval(DUMP_HEX[name], x)       # fails on another form
                seen.add(name)
            elif isinstance(x, str) and re.match(r"0x", x):
                self.fail("%s: %r: a hex string outside the hex fields" % (p, x))
            elif isinstance(x, float):
                self.assertEqual(p, ("run", "seconds"), path)
            elif isinstance(x, int) and not isinstance(x, bool):
                self.assertGreaterEqual(x, -1, p)   # "mr": -1 is "none"
        return v, seen

    def test_dump_files_are_json_with_hex_fields(self):
        r, dump = self.replay()
        objs, seen = self.check_json_file(os.path.join(dump, "objects.json"))
        comps, seen2 = self.check_json_file(os.path.join(dump, "completions.json"))
        seen |= seen2
        # the values of the default run
        mr, qp = objs["mrs"][0], objs["qps"][0]
        self.assertEqual((mr["lkey"], mr["rkey"], mr["iova"]), ("0x00000100", "0x00000100",
                                                                "0x10000"))
        self.assertEqual(mr["access"], ["local_write", "remote_write", "remote_read",
                                        "remote_atomic", "mw_bind"])
        self.assertEqual(objs["mws"][0]["rkey"], "0x80000042")
        self.assertEqual(objs["live_keys"], ["0x00000100", "0x00000200"])
        self.assertEqual((qp["qpn"], qp["remote_qpn"], qp["rq_psn"], qp["sq_psn"], qp["msn"]),
                         ("0x11", "0x99", "0x000006", "0x000000", 6))
        self.assertEqual(qp["requester"]["next_psn"], "0x000000")
        self.assertEqual(list(qp["counters"]["naks"]), ["0x60", "0x61", "0x62", "0x63"])
        cqes = comps["cqs"][0]["completions"]
        self.assertEqual(cqes[2]["invalidated_rkey"], "0x80000042")
        self.assertEqual({c["qp_num"] for c in cqes}, {"0x11"})
        self.assertEqual([c["wr_id"] for c in cqes], [0, 0, 1, 2, 3])

        # with no traffic the window stays bound: its range in hex
        empty = os.path.join(self.d, "empty.pcap")
        roce.write_pcap(empty, [])
        _, dump2 = self.replay(empty, name="dump-empty")
        objs2, seen2 = self.check_json_file(os.path.join(dump2, "objects.json"))
        seen |= seen2
        b = objs2["mws"][0]["bound"]
        self.assertEqual((b["mr"], b["va"], b["length"], b["qp"]), (0, "0x10100", 3072, "0x11"))
        self.assertEqual(objs2["qps"][0]["state"], "RTS")
        self.assertEqual(objs2["ports"][0]["counters"]["packets_in"], 0)
        # every hex field was met, so none of the checks above was vacuous
        self.assertEqual(seen, set(DUMP_HEX) - {"imm_data"})

    def test_dump_ports_are_the_summary(self):
        r, dump = self.replay()
        out = r.stdout
        objs = load_dump(dump, "objects.json")
        (p,) = objs["ports"]
        self.assertEqual((p["port"], p["name"]), (0, "net_pcap0"))
        c = port_counts(dump)
        s = summary_counts(out)
        for k in ("packets in", "packets out", "accepted", "control", "dropped"):
            self.assertEqual(c[k.replace(" ", "_")], s[k], k)
        self.assertEqual(c["drop"], s["drop"])
        self.assertEqual(set(c["drops"]) > set(c["drop"]), True, "every reason, zeros too")
        m = re.search(r"^  packets in +\d+  \((\d+) bytes\)\n  packets out +\d+  \((\d+) bytes\)",
                      out, re.M)
        self.assertEqual((c["bytes_in"], c["bytes_out"]), (int(m[1]), int(m[2])))
        m = re.search(r"answers: acks (\d+), naks 0x60 (\d+) 0x61 (\d+) 0x62 (\d+) 0x63 (\d+), "
                      r"rnr naks (\d+), duplicates (\d+)", out)
        self.assertEqual([c["acks"]] + list(c["naks"].values()) +
                         [c["rnr_naks"], c["duplicates"]], [int(x) for x in m.groups()])
        self.assertEqual(list(c["naks"]), ["0x60", "0x61", "0x62", "0x63"])
        denied = dict((k, int(n)) for k, n in
                      re.findall(r"^    denied (\w+) +(\d+)  NAK 0x6\d$", out, re.M))
        self.assertEqual({k: n for k, n in c["denied"].items() if n}, denied)
        self.assertEqual(denied, {"unknown_key": 1})
        ctrl = dict((k, int(n)) for k, n in re.findall(
            r"(\w+) (\d+)", re.search(r"^  control path:(.*)$", out, re.M)[1]))
        self.assertEqual({k: n for k, n in c["control_path"].items() if n}, ctrl)
        m = re.search(r"^  neighbours: (.*)$", out, re.M)
        neigh = {k: int(n) for k, n in re.findall(r"(\w+) (\d+)", m[1])}
        self.assertEqual({k: c["neighbours"][k] for k in neigh}, neigh)
        self.assertEqual(neigh["learned"], 1)
        m = re.search(r"^  ethdev: (.*)$", out, re.M)
        self.assertEqual(c["ethdev"], {k: int(n) for k, n in re.findall(r"(\w+) (\d+)", m[1])})
        # the run: its time and why it stopped, as the first line says
        m = re.search(r"^mwpath \S+: 1 port, \d polling lcores?, ran (\d+\.\d{3}) s, "
                      r"stopped: (.*)$", out, re.M)
        self.assertAlmostEqual(objs["run"]["seconds"], float(m[1]), delta=0.0006)
        self.assertEqual(objs["run"]["stopped"], m[2])
        self.check_average(out, c, objs["run"]["seconds"])

    def check_average(self, out, c, seconds):
        """The summary's second line: the run's average rates, from its
        counters and time (all ports: here one)."""
        lines = out.splitlines()
        first = [i for i, l in enumerate(lines) if l.startswith("mwpath ")][-1]
        m = re.fullmatch(r"average over (\d+\.\d{3}) s: Rx-pps (\d+) Rx-bps (\d+) "
                         r"Tx-pps (\d+) Tx-bps (\d+) \((\d+) packets in, (\d+) out\)",
                         lines[first + 1])
        self.assertIsNotNone(m, lines[first + 1])
        rx_pps, rx_bps, tx_pps, tx_bps, n_in, n_out = (int(x) for x in m.groups()[1:])
        self.assertEqual((n_in, n_out), (c["packets_in"], c["packets_out"]))
        for got, n in ((rx_pps, c["packets_in"]), (rx_bps, 8 * c["bytes_in"]),
                       (tx_pps, c["packets_out"]), (tx_bps, 8 * c["bytes_out"])):
            self.assertAlmostEqual(got, n / seconds, delta=1 + n / seconds * 1e-4)

    def test_stats_interval_lines_have_a_time_and_agree_with_their_counters(self):
        """Endless replay with --stats-interval 1 until two lines are out,
        then SIGINT."""
        dump = os.path.join(self.d, "dump")
        out_path = os.path.join(self.d, "out")
        with open(out_path, "w") as o:
            p = subprocess.Popen([MWPATH, "-l", "0-1"] + EAL + [
                "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % PCAP, "--",
                "--stats-interval", "1", "--dump-dir", dump],
                stdout=o, stderr=subprocess.PIPE, text=True)
        started = datetime.datetime.now(datetime.timezone.utc)
        try:
            deadline = time.time() + 60
            while p.poll() is None and time.time() < deadline:
                with open(out_path) as f:
                    if len(re.findall(r" port 0, last ", f.read())) >= 2:
                        break
                time.sleep(0.05)
        finally:
            p.send_signal(signal.SIGINT)
            err = p.communicate(timeout=30)[1]
        self.assertEqual(p.returncode, 0, err)
        with open(out_path) as f:
            out = f.read()
        line = re.compile(
            r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z \+(\d+\.\d{3}) s port 0, "
            r"last (\d+\.\d{3}) s: in (\d+) \((\d+) bytes\) out (\d+) \((\d+) bytes\) "
            r"accepted (\d+) dropped (\d+); Rx-pps (\d+) Rx-bps (\d+) Tx-pps (\d+) "
            r"Tx-bps (\d+)")
        rows = [m for m in map(line.fullmatch, out.splitlines()) if m]
        self.assertGreaterEqual(len(rows), 2, out)
        self.assertEqual(len(rows), len(re.findall(r" port 0, last ", out)), out)
        c = port_counts(dump)
        prev_when, prev_since, total = None, 0.0, [0, 0, 0, 0]
        for m in rows:
            when = datetime.datetime.fromisoformat(m[1]).replace(tzinfo=datetime.timezone.utc)
            since, last = float(m[2]), float(m[3])
            n_in, b_in, n_out, b_out, _, _, rx_pps, rx_bps, tx_pps, tx_bps = (
                int(x) for x in m.groups()[3:])
            # a UTC time of this run, later line by line; the interval is
            # the time since the previous line
            self.assertLessEqual(abs((when - started).total_seconds()), 120, m[0])
            if prev_when is not None:
                self.assertGreater(when, prev_when, m[0])
            self.assertAlmostEqual(last, since - prev_since, delta=0.0015)
            self.assertGreater(last, 0)
            prev_when, prev_since = when, since
            # the rates are the interval's counters over its time
            for got, n in ((rx_pps, n_in), (rx_bps, 8 * b_in), (tx_pps, n_out),
                           (tx_bps, 8 * b_out)):
                self.assertAlmostEqual(got, n / last, delta=1 + n / last * 0.002, msg=m[0])
            for i, n in enumerate((n_in, b_in, n_out, b_out)):
                total[i] += n
        self.assertTrue(any(int(m[10]) > 0 for m in rows), "no line with Rx-pps > 0")
        # the lines add up to no more than the run's counters
        for t, k in zip(total, ("packets_in", "bytes_in", "packets_out", "bytes_out")):
            self.assertLessEqual(t, c[k], k)
        self.assertGreater(total[0], 0)
        self.check_average(out, c, load_dump(dump, "objects.json")["run"]["seconds"])

    def test_a_run_without_verbs_objects_still_dumps_its_ports(self):
        ini = os.path.join(self.d, "port.ini")
        with open(ini, "w") as f:
            f.write("[port 0]\nmac = 02:00:00:00:00:01\nipv4 = 192.0.2.1\n")
        _, dump = self.replay(config=ini)
        objs, _ = self.check_json_file(os.path.join(dump, "objects.json"))
        comps, _ = self.check_json_file(os.path.join(dump, "completions.json"))
        self.assertEqual(port_counts(dump)["packets_in"], 15)
        for k in ("pds", "mrs", "mws", "cqs", "live_keys", "qps"):
            self.assertEqual(objs[k], [], k)
        self.assertEqual(comps, {"cqs": []})

    def test_inspect_prints_hex(self):
        """mwpath-inspect: keys, QPNs, PSNs, addresses, syndromes and
        P_Keys in hex strings, on the traffic and on mwpath's answers."""
        r, _ = self.replay(name="dump")
        answers = os.path.join(self.d, "dump-out.pcap")
        forms = {"qpn": r"0x[0-9a-f]{1,6}", "sqpn": r"0x[0-9a-f]{1,6}",
                 "psn": r"0x[0-9a-f]{6}", "pkey": r"0x[0-9a-f]{4}",
                 "rkey": r"0x[0-9a-f]{8}", "qkey": r"0x[0-9a-f]{8}",
                 "immdt": r"0x[0-9a-f]{8}", "syndrome": r"0x[0-9a-f]{2}",
                 "va": r"0x[0-9a-f]{1,16}", "swap_add": r"0x[0-9a-f]{1,16}",
                 "compare": r"0x[0-9a-f]{1,16}", "orig": r"0x[0-9a-f]{1,16}"}
        frames = {}
        for pcap in (PCAP, answers):
            text = subprocess.run([INSPECT, pcap], check=True, capture_output=True,
                                  text=True).stdout
            frames[pcap] = []
            for l in text.splitlines():
                f = json.loads(l)
                # one object a line, as jansson writes it without indent
                self.assertEqual(l, json.dumps(f))
                frames[pcap].append(f)
                for path, v in walk(f):
                    if field(path) in forms and not isinstance(v, dict):
                        self.assertRegex(v, "^%s$" % forms[field(path)], path)
                    elif isinstance(v, str):
                        self.assertNotRegex(v, r"^0x", path)
        first = frames[PCAP][0]
        self.assertEqual((first["qpn"], first["psn"], first["pkey"], first["opcode"]),
                         ("0x11", "0x000000", "0xffff", 10))
        self.assertEqual(first["reth"], {"va": "0x10040", "rkey": "0x00000100", "dmalen": 64})
        fa = [f for f in frames[PCAP] if f.get("opcode_name") == "RC_FETCH_ADD"][0]
        self.assertEqual(fa["atomiceth"], {"va": "0x10200", "rkey": "0x80000042",
                                           "swap_add": "0xa", "compare": "0x0"})
        inv = [f for f in frames[PCAP] if "ieth" in f][0]
        self.assertEqual(inv["ieth"], {"rkey": "0x80000042"})
        # the answers: ACKs, the READ response, the ATOMIC ACK, and the NAK
        # for the invalidated key, syndrome 0x62
        syn = [f["aeth"]["syndrome"] for f in frames[answers] if "aeth" in f]
        self.assertIn("0x62", syn)
        self.assertEqual({f["qpn"] for f in frames[answers] if f["roce"]}, {"0x99"})
        self.assertTrue(any("atomicacketh" in f for f in frames[answers]))

    def test_help_says_what_stats_interval_prints(self):
        r = subprocess.run([MWPATH, "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        m = re.search(r"--stats-interval S(.*?)--lcores-per-port", r.stdout, re.S)
        self.assertIsNotNone(m, r.stdout)
        for w in ("UTC", "Rx-pps", "Rx-bps", "Tx-pps", "Tx-bps"):
            self.assertIn(w, m[1])


if __name__ == "__main__":
    unittest.main(verbosity=2)
