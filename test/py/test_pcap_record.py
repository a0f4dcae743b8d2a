# SPDX-License-Identifier: BSD-3-Clause
"""run.py's record mode and its user-facing edges: a case recorded from a
capture and a configuration replays; one byte changed in what it expects
makes the replay fail with the frame and field named; --keep leaves the
failed run's files and a command.txt that runs mwpath again; bad
arguments are one line and exit 2, never a traceback; and the dump reader
takes today's integers and the coming hex strings and port counters
alike."""
import glob
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import unittest

from common import CAPTURES, MWPATH, SRC

PCAP = os.path.join(SRC, "test", "pcap")
RUN = os.path.join(PCAP, "run.py")
# a responder case whose answers carry a payload (READ responses)
FROM = os.path.join(PCAP, "vec_rc_read_multi")

import run  # noqa: E402  (common put test/pcap on the path)
import roce  # noqa: E402


def runpy(*args, env=None):
    return subprocess.run(["/usr/bin/python3", RUN] + list(args), capture_output=True,
                          text=True, timeout=600,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {})))


def flip_payload_byte(path):
    """Change the first payload byte of the first frame with a payload:
    (frame number, the byte's new value)."""
    frames = run.read_pcap(path)
    for i, fr in enumerate(frames):
        f = dict(run.fields(fr))
        if f.get("payload.len", 0) > 0:
            off = len(fr) - 4 - f["bth.pad"] - f["payload.len"]
            b = bytearray(fr)
            b[off] ^= 0xff
            frames[i] = bytes(b)
            roce.write_pcap(path, frames)
            return i + 1
    raise AssertionError("%s: no frame with a payload" % path)


class Record(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-pcap-record-")
        self.cases = os.path.join(self.tmp, "cases")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def record(self, name="mine", inp=os.path.join(FROM, "in.pcap"),
               cfg=os.path.join(FROM, "config.ini"), *more):
        return runpy("--cases-dir", self.cases, "--record", name, "--input", inp,
                     "--config", cfg, *more, MWPATH)

    def config_with(self, name, old, new):
        """The case's config.ini with old replaced by new, written as name."""
        cfg = os.path.join(self.tmp, name)
        with open(os.path.join(FROM, "config.ini")) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(cfg, "w") as f:
            f.write(text.replace(old, new))
        return cfg

    def replay(self, *cases, opts=()):
        return runpy("--cases-dir", self.cases, *opts, MWPATH, *cases)

    def test_round_trip(self):
        r = self.record()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("recorded mine in %s" % os.path.join(self.cases, "mine"), r.stdout)
        self.assertIn("review", r.stdout)
        d = os.path.join(self.cases, "mine")
        self.assertEqual(sorted(os.listdir(d)),
                         ["config.ini", "expect-out.pcap", "expect.json", "in.pcap"])
        with open(os.path.join(d, "expect.json")) as f:
            exp = json.load(f)
        rec = exp["recorded"]
        self.assertEqual(rec["by"].split(" (")[0], "mwpath record mode")
        self.assertTrue(rec["mwpath"].startswith("mwpath "), rec)
        self.assertRegex(rec["date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        for k in ("memory", "qps", "keys", "completions", "port"):
            self.assertIn(k, exp)
        self.assertEqual(exp["qps"]["0x11"], {"state": "RTS"})
        self.assertEqual(exp["port"]["packets in"], len(run.read_pcap(
            os.path.join(FROM, "in.pcap"))))
        self.assertEqual(exp["port"]["packets out"], 3)
        self.assertEqual(len(run.read_pcap(os.path.join(d, "expect-out.pcap"))), 3)

        # replay passes, and says the case was recorded
        r = self.replay()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^mine +ok \(recorded\)$")

        # one byte of an answer's payload changed: the replay names it
        n = flip_payload_byte(os.path.join(d, "expect-out.pcap"))
        r = self.replay("mine")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^mine +FAIL \(recorded\)$")
        # (a long payload: where it differs and the bytes around it, not
        # the whole of both)
        self.assertRegex(r.stdout, r"frame %d: payload: \d+ bytes expected, \d+ sent, first "
                                   r"difference at byte 0: expected \.\.\.([0-9a-f]{2})[0-9a-f]*"
                                   r"\.\.\., got \.\.\.(?!\1)[0-9a-f]+\.\.\." % n)
        self.assertNotIn("Traceback", r.stderr)

        # one byte of the expected memory changed: the region and offset named
        with open(os.path.join(d, "expect.json")) as f:
            exp = json.load(f)
        exp["memory"]["1"]["changed"] = [[0x10, "01"]]
        with open(os.path.join(d, "expect.json"), "w") as f:
            json.dump(exp, f)
        r = self.replay("mine")
        self.assertIn("mr 1: 1 bytes differ, first at offset 0x10: expected 01", r.stdout)

    def test_a_capture_of_shared_is_named_not_copied(self):
        cap = os.path.join(CAPTURES, "valid-icrc",
                           "soft-roce__rdma-write-read__ibdump__read2.pcap")
        r = self.record("cx", cap, os.path.join(PCAP, "connectx_write_read_replay",
                                                "config.ini"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        d = os.path.join(self.cases, "cx")
        self.assertNotIn("in.pcap", os.listdir(d))
        with open(os.path.join(d, "expect.json")) as f:
            exp = json.load(f)
        self.assertEqual(exp["input"], "captures/valid-icrc/"
                         "soft-roce__rdma-write-read__ibdump__read2.pcap")
        # the same answers as the generated case, whose expectations come
        # from the spec: memory and completions
        with open(os.path.join(PCAP, "connectx_write_read_replay", "expect.json")) as f:
            gen = json.load(f)
        self.assertEqual(exp["memory"], gen["memory"])
        self.assertEqual(exp["completions"], gen["completions"])
        r = self.replay("cx")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_keep_leaves_a_command_that_runs_mwpath_again(self):
        self.assertEqual(self.record().returncode, 0)
        out = os.path.join(self.cases, "mine", "expect-out.pcap")
        shutil.copyfile(out, out + ".good")
        flip_payload_byte(out)
        keep = os.path.join(self.tmp, "kept")
        r = self.replay("mine", opts=["--keep=" + keep])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        d = os.path.join(keep, "mine")
        self.assertIn("kept: %s" % d, r.stdout)
        for f in ("out.pcap", "dump", "stdout.txt", "stderr.txt", "command.txt"):
            self.assertTrue(os.path.exists(os.path.join(d, f)), f)
        with open(os.path.join(d, "command.txt")) as f:
            cmd = f.read().strip()
        self.assertIn("command: %s" % cmd, r.stdout)
        self.assertEqual(shlex.split(cmd)[0], os.path.abspath(MWPATH))

        # the command, run again, makes the same frames and dump
        first = run.read_pcap(os.path.join(d, "out.pcap"))
        with open(os.path.join(d, "dump", "mr-0.bin"), "rb") as f:
            mem = f.read()
        os.remove(os.path.join(d, "out.pcap"))
        shutil.rmtree(os.path.join(d, "dump"))
        p = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(run.read_pcap(os.path.join(d, "out.pcap")), first)
        with open(os.path.join(d, "dump", "mr-0.bin"), "rb") as f:
            self.assertEqual(f.read(), mem)

        # bare --keep picks a directory; a passing case leaves nothing
        r = self.replay("mine", opts=["--keep"])
        kept = [l.split(": ", 1)[1] for l in r.stdout.splitlines()
                if l.strip().startswith("kept: ")]
        self.assertEqual(len(kept), 1, r.stdout)
        self.assertTrue(os.path.isfile(os.path.join(kept[0], "command.txt")))
        self.assertTrue(os.path.basename(os.path.dirname(kept[0])).startswith(
            "mwpath-pcap-"), kept[0])
        shutil.rmtree(os.path.dirname(kept[0]))
        os.replace(out + ".good", out)
        r = self.replay("mine", opts=["--keep=" + keep])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(os.listdir(keep)), ["mine"])

    def test_a_run_that_does_not_repeat_is_not_recorded(self):
        # random keys (the default): the second run's keys differ
        cfg = self.config_with("random.ini", "keys = sequential", "")
        r = self.record("rnd", os.path.join(FROM, "in.pcap"), cfg)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("not recorded", r.stderr)
        self.assertIn("live keys: expected", r.stdout)
        self.assertNotIn("Traceback", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.cases, "rnd")))

    def test_random_fill_is_computed_as_mwpath_fills(self):
        cfg = self.config_with("fill.ini", "fill = zero", "fill = random:0x1234567")
        r = self.record("fill", os.path.join(FROM, "in.pcap"), cfg)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.cases, "fill", "expect.json")) as f:
            mem = json.load(f)["memory"]["1"]
        self.assertEqual(mem, {"fill": "random:0x1234567", "length": 4096, "changed": []})

    def test_errors_are_one_line_and_exit_2(self):
        self.assertEqual(self.record().returncode, 0)
        bad = os.path.join(self.cases, "bad")
        shutil.copytree(os.path.join(self.cases, "mine"), bad)
        with open(os.path.join(bad, "expect.json"), "w") as f:
            f.write("{not json")
        nocap = os.path.join(self.cases, "nocap")
        shutil.copytree(os.path.join(PCAP, "connectx_write_read_replay"), nocap)
        badcfg = os.path.join(self.tmp, "bad.ini")
        with open(badcfg, "w") as f:
            f.write("[qp 0x11]\nbogus = 1\n")
        checks = [
            ((), {}, "MWPATH is required"),
            (("--cases-dir", self.cases, "/nonexistent/mwpath"), {}, "no such executable"),
            (("--cases-dir", self.cases, MWPATH, "nope"), {}, "no case nope"),
            (("--cases-dir", "/nonexistent", "--list"), {}, "no such directory"),
            (("--cases-dir", self.cases, "--record", "x", "--input",
              os.path.join(FROM, "in.pcap"), "--config", badcfg, MWPATH), {},
             "mwpath exited 2: mwpath: %s:2" % badcfg),
            (("--record", "x", "--input", os.path.join(FROM, "in.pcap"), "--config",
              os.path.join(FROM, "config.ini"), "--cases-dir", PCAP, MWPATH), {},
             "refusing to record into"),
            (("--cases-dir", self.cases, "--record", "mine", "--input",
              os.path.join(FROM, "in.pcap"), "--config", os.path.join(FROM, "config.ini"),
              MWPATH), {}, "exists (--force replaces it)"),
            (("--cases-dir", self.cases, "--record", "x", "--input",
              os.path.join(FROM, "config.ini"), "--config",
              os.path.join(FROM, "config.ini"), MWPATH), {}, "not a readable pcap"),
            (("--record", "x", MWPATH), {}, "needs --input PCAP and --config INI"),
            (("--input", "x", MWPATH), {}, "go with --record"),
            (("--bogus", MWPATH), {}, "unrecognized arguments"),
        ]
        for args, env, msg in checks:
            r = runpy(*args, env=env)
            with self.subTest(args=args):
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertNotIn("Traceback", r.stderr)
                self.assertIn(msg, r.stderr)
                errs = [l for l in r.stderr.splitlines() if "error:" in l]
                self.assertEqual(len(errs), 1, r.stderr)
        # nothing was recorded into the suite's own directory
        self.assertFalse(os.path.exists(os.path.join(PCAP, "x")))

        # a case that cannot run is an ERROR with its reason on one line;
        # the others still run, and the exit status is 2
        for case, env, msg in (("bad", {}, "expect.json: not JSON"),
                               ("nocap", {"MWPATH_SHARED": self.tmp},
                                "the capture captures/valid-icrc/")):
            r = runpy("--cases-dir", self.cases, MWPATH, case, "mine", env=env)
            with self.subTest(case=case):
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertNotIn("Traceback", r.stderr)
                self.assertRegex(r.stdout, r"(?m)^%s +ERROR$" % case)
                self.assertRegex(r.stdout, r"(?m)^    .*%s" % msg)
                self.assertRegex(r.stdout, r"(?m)^mine +ok \(recorded\)$")
                self.assertIn("2 cases, 0 failed, 1 could not run", r.stdout)

    def test_help_and_list(self):
        r = runpy("--help")
        self.assertEqual(r.returncode, 0)
        for s in ("--record CASE", "--keep[=DIR]", "--cases-dir DIR", "examples:",
                  "docs/regression-cases.md"):
            self.assertIn(s, r.stdout)
        r = runpy("--list")
        self.assertEqual(r.stdout.split(), sorted(
            os.path.basename(os.path.dirname(p))
            for p in glob.glob(os.path.join(PCAP, "*", "expect.json"))))


class DumpFormats(unittest.TestCase):
    """read_dump takes the dump as mwpath writes it today (integers, port
    counters in the printed summary) and as it will (hex strings, "ports"
    in objects.json), and both compare equal to expect.json's integers."""

    OBJS = {"qps": [{"qpn": 17, "state": "RTS"}], "live_keys": [256, 2147483714]}
    CQES = {"cqs": [{"cq": 0, "completions": [
        {"wr_id": 7, "status": "success", "opcode": "recv_rdma_with_imm", "qp_num": 17,
         "byte_len": 16, "imm_data": 3735928559},
        {"wr_id": 8, "status": "success", "opcode": "recv", "qp_num": 17,
         "byte_len": 0, "invalidated_rkey": 2147483714}]}]}
    SUMMARY = ("port 0 (net_pcap0) mac 02:00:00:00:00:01\n"
               "  packets in                        3  (86 bytes)\n"
               "  packets out                       2  (62 bytes)\n"
               "  accepted                          2\n"
               "  dropped                           1\n"
               "    bad_icrc                        1  frames\n")

    def dump(self, objs, cqes):
        d = tempfile.mkdtemp(prefix="test-dump-")
        self.addCleanup(shutil.rmtree, d)
        for name, obj in (("objects.json", objs), ("completions.json", cqes)):
            with open(os.path.join(d, name), "w") as f:
                json.dump(obj, f)
        with open(os.path.join(d, "mr-0.bin"), "wb") as f:
            f.write(bytes(16))
        return d

    def test_num(self):
        self.assertEqual(run.num(17), 17)
        self.assertEqual(run.num("0x11"), 17)
        self.assertEqual(run.num("0X80000042"), 0x80000042)
        self.assertEqual(run.num("12"), 12)
        for bad in ("zz", None, True, 1.5, "0x"):
            with self.assertRaises(run.Error):
                run.num(bad)

    def test_today_and_hex_forms_read_the_same(self):
        today = run.read_dump(self.dump(self.OBJS, self.CQES), self.SUMMARY)
        hexed = {"qps": [{"qpn": "0x11", "state": "RTS"}],
                 "live_keys": ["0x100", "0x80000042"],
                 "ports": [{"port": 0, "name": "net_pcap0", "counters": {
                     "packets_in": 3, "packets_out": 2, "accepted": 2, "control": 0,
                     "dropped": 1, "drops": {"bad_icrc": 1, "not_ip": 0}}}]}
        cq = json.loads(json.dumps(self.CQES))
        for e in cq["cqs"][0]["completions"]:
            for k in ("qp_num", "imm_data", "invalidated_rkey"):
                if k in e:
                    e[k] = hex(e[k])
        new = run.read_dump(self.dump(hexed, cq), "no summary here\n")
        self.assertEqual(today["qps"], new["qps"])
        self.assertEqual(today["live"], new["live"])
        self.assertEqual(today["cqes"], new["cqes"])
        self.assertEqual(today["mr"], new["mr"])
        self.assertEqual(new["port"], {"packets in": 3, "packets out": 2, "accepted": 2,
                                       "control": 0, "dropped": 1,
                                       "ce marked": 0, "cnps sent": 0, "cnps received": 0,
                                       "drop": {"bad_icrc": 1}})
        for k in ("packets in", "packets out", "accepted", "dropped", "drop"):
            self.assertEqual(today["port"][k], new["port"][k], k)

        # expect.json's integers against either form: no mismatch
        case = tempfile.mkdtemp(prefix="test-case-")
        self.addCleanup(shutil.rmtree, case)
        roce.write_pcap(os.path.join(case, "out.pcap"), [])
        exp = {"qps": {"0x11": {"state": "RTS"}},
               "keys": {"live": [256, 2147483714], "dead": [512]},
               "memory": {"0": {"fill": "zero", "length": 16, "changed": []}},
               "completions": {"send": [], "recv": self.CQES["cqs"][0]["completions"]},
               "port": {"packets in": 3, "accepted": 2, "drop": {"bad_icrc": 1}}}
        for got in (today, new):
            self.assertEqual(run.compare(case, exp, os.path.join(case, "out.pcap"), got), [])
        exp["completions"]["recv"][0] = dict(exp["completions"]["recv"][0], imm_data=1)
        errs = run.compare(case, exp, os.path.join(case, "out.pcap"), new)
        self.assertEqual(len(errs), 1, errs)
        self.assertIn("completions of qp 0x11 recv queue", errs[0])

    def test_a_dump_of_another_form_is_an_error(self):
        d = self.dump({"qps": "none"}, self.CQES)
        with self.assertRaises(run.Error) as e:
            run.read_dump(d, "")
        self.assertIn("unexpected form", str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
