# SPDX-License-Identifier: BSD-3-Clause
"""Every program in bench/ answers --help (exit 0, its usage on stdout)
and refuses an option it does not know (exit 2, its usage on stderr),
through getopt_long or argparse; each one's --quick --json FILE writes
one result document with the meta (commit, build options, CPU model,
core count, date, argv) and its figures; bench/compare.py sets two such
files side by side with ratios, and bench/plot.py draws their sweeps
(issue 24).  Quick modes only: no figure is asserted, only its shape."""
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import BUILD, SRC

C_BENCHES = ["bench_wire", "bench_keys", "bench_resp", "bench_req", "bench_lcores",
             "bench_keys_load", "mw_verbs_bench", "loop_verbs_bench"]
PY_BENCHES = ["pcap_rate.py", "perftest_rate.py", "cm_rate.py"]
TOOLS = ["compare.py", "plot.py"]
PY = "/usr/bin/python3"
RUN = os.path.join(BUILD, "provider", "mwpath-run")
META_BUILD = ("buildtype", "optimization", "cpu_instruction_set", "c_args", "compiler",
              "dpdk")


def run(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def have_matplotlib():
    return run([PY, "-c", "import matplotlib"]).returncode == 0


class BenchCli(unittest.TestCase):
    def test_every_c_bench_answers_help_and_refuses_an_unknown_option(self):
        for b in C_BENCHES:
            exe = os.path.join(BUILD, "bench", b)
            with self.subTest(bench=b):
                r = run([exe, "--help"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.startswith("usage: "), r.stdout)
                self.assertIn("--json", r.stdout)
                self.assertIn("--quick", r.stdout)
                r = run([exe, "--no-such-option"])
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("usage: ", r.stderr)

    def test_every_python_bench_and_tool_answers_help_and_refuses_an_unknown_option(self):
        for b in PY_BENCHES + TOOLS:
            script = os.path.join(SRC, "bench", b)
            with self.subTest(bench=b):
                r = run([PY, script, "--help"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.startswith("usage: "), r.stdout)
                if b in PY_BENCHES:
                    self.assertIn("--json", r.stdout)
                    self.assertIn("--quick", r.stdout)
                r = run([PY, script, "--no-such-option"])
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("usage: ", r.stderr)

    def test_instr_count_answers_help_and_refuses_an_unknown_option(self):
        # before installing or building anything
        script = os.path.join(SRC, "bench", "instr_count.sh")
        r = run(["bash", script, "--help"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bench/instr_count.sh [BUILD_DIR]", r.stdout)
        self.assertIn("AVX-512", r.stdout)
        r = run(["bash", script, "--no-such-option"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("usage: ", r.stderr)


class BenchJson(unittest.TestCase):
    """Each program's --quick --json: one document, meta and results."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.files = {}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name + ".json")

    def check_document(self, path, bench):
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual(doc["bench"], bench)
        meta = doc["meta"]
        for k in ("commit", "build", "cpu_model", "cores", "date", "argv"):
            self.assertIn(k, meta)
        self.assertIsInstance(meta["commit"], str)
        self.assertNotEqual(meta["commit"], "")
        for k in META_BUILD:
            self.assertIn(k, meta["build"])
        self.assertIsInstance(meta["cpu_model"], str)
        self.assertGreaterEqual(meta["cores"], 1)
        date = datetime.datetime.strptime(meta["date"], "%Y-%m-%dT%H:%M:%SZ")
        self.assertLess(abs((datetime.datetime.utcnow() - date).total_seconds()), 3600)
        self.assertIn("--json", meta["argv"])
        self.assertGreaterEqual(len(doc["results"]), 1)
        names = [r["name"] for r in doc["results"]]
        self.assertEqual(len(names), len(set(names)), names)
        for r in doc["results"]:
            figures = [v for v in r.values()
                       if isinstance(v, (int, float)) and not isinstance(v, bool)]
            self.assertTrue(figures, r)
            for v in figures:
                self.assertTrue(math.isfinite(v), r)
        return doc

    def c_bench(self, b, *args):
        out = self.path(b)
        r = run([os.path.join(BUILD, "bench", b), "--quick", "--json", out] + list(args),
                timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return self.check_document(out, b)

    def test_bench_wire(self):
        doc = self.c_bench("bench_wire")
        self.assertEqual({r["payload"] for r in doc["results"]}, {64, 256, 1024})
        self.assertTrue(all(r["mpps"] > 0 for r in doc["results"]))

    def test_bench_keys(self):
        doc = self.c_bench("bench_keys")
        self.assertIn("lookup_burst_1024keys", [r["name"] for r in doc["results"]])

    def test_bench_resp_sweeps_payloads_and_keys(self):
        doc = self.c_bench("bench_resp", "--payloads", "64,1024", "--keys", "1,1024")
        writes = {(r["payload"], r["keys"]) for r in doc["results"]
                  if r.get("series") == "write"}
        self.assertEqual(writes, {(64, 1), (1024, 1), (64, 1024), (1024, 1024)})
        for r in doc["results"]:
            if "mpps" in r:
                self.assertGreater(r["mpps"], 0)
                self.assertGreater(r["ticks_per_pkt"], 0)

    def test_bench_resp_refuses_a_bad_list(self):
        for bad in (["--keys", "0"], ["--payloads", "2048"], ["--payloads", "64,x"]):
            with self.subTest(args=bad):
                r = run([os.path.join(BUILD, "bench", "bench_resp")] + bad)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)

    def test_bench_req_sweeps_sizes_and_every_operation(self):
        doc = self.c_bench("bench_req", "--sizes", "64,4096")
        names = {r["name"] for r in doc["results"]}
        self.assertEqual(names, {"req_%s_%dB" % (w, s) for w in ("write", "send", "read")
                                 for s in (64, 4096)} | {"req_fetch_add", "req_cmp_swap"})
        for r in doc["results"]:
            for k in ("post_ns", "send_ns", "completion_ns", "mpps"):
                self.assertGreater(r[k], 0, r)
            # a 4 KiB message at the 1 KiB path MTU is four packets; a READ
            # request is one
            self.assertEqual(r["packets_per_wr"], 4 if r["payload"] == 4096 and
                             r["series"] != "read" else 1, r)

    def test_bench_req_refuses_bad_options(self):
        for bad in (["--sizes", "0"], ["--sizes", "8192"], ["--workload", "5"],
                    ["--workload", "x"]):
            with self.subTest(args=bad):
                r = run([os.path.join(BUILD, "bench", "bench_req")] + bad)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)

    def test_bench_lcores(self):
        doc = self.c_bench("bench_lcores")
        self.assertEqual([r["lcores"] for r in doc["results"]], [1, 2])
        self.assertEqual(doc["results"][0]["ratio"], 1.0)

    def test_bench_keys_load(self):
        doc = self.c_bench("bench_keys_load")
        churn = [r for r in doc["results"] if r["name"] == "datapath_churn"][0]
        self.assertGreater(churn["ratio"], 0)

    def test_mw_verbs_bench_on_mwpath0(self):
        cfg = os.path.join(self.tmp.name, "dev.ini")
        with open(cfg, "w") as f:
            f.write("[device 0]\neal = --no-huge --no-pci --no-shconf -m 256 "
                    "--vdev=net_null0,no-rx=1\n[port 0]\nmac = 02:00:00:00:00:01\n"
                    "ipv4 = 192.0.2.1\n")
        out = self.path("mw_verbs_bench")
        r = run([RUN, "-c", cfg, "--", os.path.join(BUILD, "bench", "mw_verbs_bench"),
                 "-d", "mwpath0", "--quick", "--json", out], timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = self.check_document(out, "mw_verbs_bench")
        self.assertTrue(doc["check_ok"])	# the figures under their earlier names too
        self.assertIn("write_64B", [r["name"] for r in doc["results"]])

    def test_loop_verbs_bench_on_mwpath0_in_both_progress_modes(self):
        for progress in ("thread", "calls"):
            with self.subTest(progress=progress):
                cfg = os.path.join(self.tmp.name, "loop-%s.ini" % progress)
                with open(cfg, "w") as f:
                    f.write("[device 0]\neal = --no-huge --no-pci --no-shconf -m 256 "
                            "--vdev=net_null0,no-rx=1\nprogress = %s\n[port 0]\n"
                            "mac = 02:00:00:00:00:01\nipv4 = 192.0.2.1\n" % progress)
                out = self.path("loop_verbs_bench_" + progress)
                r = run([RUN, "-c", cfg, "--", os.path.join(BUILD, "bench", "loop_verbs_bench"),
                         "-d", "mwpath0", "--quick", "--sizes", "64,4096", "--json", out],
                        timeout=120)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                doc = self.check_document(out, "loop_verbs_bench")
                names = {x["name"] for x in doc["results"]}
                self.assertEqual(names, {"loop_%s_%dB" % (o, n) for o in ("write", "send", "read")
                                         for n in (64, 4096)} |
                                 {"loop_fetch_add", "loop_cmp_swap"})
                for x in doc["results"]:
                    self.assertGreater(x["mpps"], 0, x)

    def test_loop_verbs_bench_refuses_bad_options(self):
        exe = os.path.join(BUILD, "bench", "loop_verbs_bench")
        for bad in (["--sizes", "0"], ["--sizes", "8192"], ["--op", "nop"], ["-t", "0"],
                    ["-t", "64", "-c", "65"], ["-n", "x"]):
            with self.subTest(args=bad):
                r = run([exe] + bad)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)

    def test_pcap_rate(self):
        if shutil.which("dpdk-testpmd") is None:
            self.skipTest("no dpdk-testpmd (./install-deps.sh installs Debian's dpdk)")
        out = self.path("pcap_rate")
        r = run([PY, os.path.join(SRC, "bench", "pcap_rate.py"), BUILD, "--quick",
                 "--lcores", "1", "--json", out], timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = self.check_document(out, "pcap_rate")
        self.assertIn("implausible", doc)
        mw = [x for x in doc["results"] if x["name"] == "mwpath_1lcores"][0]
        for k in ("mpps", "testpmd_mpps", "ratio", "warnings", "implausible"):
            self.assertIn(k, mw)
        self.assertEqual(mw["accepted_share"], 1.0, r.stdout)
        # both programs timed the same way: one window each, from the port's counter
        for x in doc["results"]:
            for w in x["windows"]:
                self.assertGreater(w["packets"], 0)
                self.assertGreater(w["seconds"], 0)
        # a warning on stderr for each implausible figure, and only then
        self.assertEqual("WARNING" in r.stderr, doc["implausible"], r.stderr)

    def test_perftest_rate(self):
        if shutil.which("ib_write_bw") is None:
            self.skipTest("no perftest")
        out = self.path("perftest_rate")
        r = run([PY, os.path.join(SRC, "bench", "perftest_rate.py"), BUILD, "--quick",
                 "--json", out], timeout=240)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = self.check_document(out, "perftest_rate")
        by = {x["name"]: x for x in doc["results"]}
        self.assertIn("ratio", by["write_64B"])
        self.assertGreater(by["write_65536B"]["memcpy_mb_per_s"], 0)
        self.assertGreater(by["send_lat_64B"]["median_us"], 0)
        self.assertGreater(by["one_process_write_64B"]["ratio"], 0)

    def test_cm_rate(self):
        if shutil.which("cmtime") is None:
            self.skipTest("no rdmacm-utils")
        out = self.path("cm_rate")
        r = run([PY, os.path.join(SRC, "bench", "cm_rate.py"), BUILD, "--quick",
                 "--json", out], timeout=240)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = self.check_document(out, "cm_rate")
        many = [x for x in doc["results"] if x["name"] == "connect_20"][0]
        self.assertGreater(many["connections_per_s"], 0)
        self.assertGreater([x for x in doc["results"] if x["name"] == "connect_1"][0]
                           ["connect_ms"], 0)


class CompareAndPlot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.a, cls.b = (os.path.join(cls.tmp.name, n) for n in ("a.json", "b.json"))
        for p in (cls.a, cls.b):
            subprocess.run([os.path.join(BUILD, "bench", "bench_resp"), "--quick",
                            "--payloads", "64,256", "--keys", "1,1024", "--json", p],
                           check=True, capture_output=True, timeout=120)
        cls.lc = os.path.join(cls.tmp.name, "lcores.json")
        subprocess.run([os.path.join(BUILD, "bench", "bench_lcores"), "--quick",
                        "--json", cls.lc], check=True, capture_output=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def compare(self, *args):
        return run([PY, os.path.join(SRC, "bench", "compare.py")] + list(args))

    def test_compare_prints_every_common_figure_with_its_ratio(self):
        r = self.compare(self.a, self.b)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.a) as f:
            a = json.load(f)
        with open(self.b) as f:
            b = {x["name"]: x for x in json.load(f)["results"]}
        lines = r.stdout.splitlines()
        row = [l for l in lines if l.startswith("write_64B_1024keys ") and " mpps " in l]
        self.assertEqual(len(row), 1, r.stdout)
        want = b["write_64B_1024keys"]["mpps"] / \
            [x for x in a["results"] if x["name"] == "write_64B_1024keys"][0]["mpps"]
        self.assertAlmostEqual(float(row[0].split()[-1]), want, places=2)
        self.assertIn("B/A", r.stdout)
        self.assertIn("same commit, CPU, cores and build options", r.stdout)

    def test_compare_names_what_differs_in_the_meta(self):
        with open(self.b) as f:
            b = json.load(f)
        b["meta"]["commit"] = "0000000"
        b["meta"]["cpu_model"] = "Another CPU"
        b["meta"]["build"]["buildtype"] = "debug"
        other = os.path.join(self.tmp.name, "other.json")
        with open(other, "w") as f:
            json.dump(b, f)
        r = self.compare(self.a, other)
        self.assertEqual(r.returncode, 0, r.stderr)
        for k in ("commit", "cpu_model", "build.buildtype", "Another CPU"):
            self.assertIn(k, r.stdout)

    def test_compare_says_what_is_wrong_with_a_file_and_exits_2(self):
        bad = os.path.join(self.tmp.name, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        notres = os.path.join(self.tmp.name, "list.json")
        with open(notres, "w") as f:
            f.write("[1, 2]")
        for args in ([self.a, os.path.join(self.tmp.name, "missing.json")], [bad, self.a],
                     [self.a, notres]):
            with self.subTest(args=args):
                r = self.compare(*args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertTrue(r.stderr.startswith("compare: "), r.stderr)
                self.assertNotIn("Traceback", r.stderr)

    def test_plot_draws_the_sweeps(self):
        if not have_matplotlib():
            self.skipTest("no matplotlib (./install-deps.sh installs python3-matplotlib)")
        out = os.path.join(self.tmp.name, "img")
        r = run([PY, os.path.join(SRC, "bench", "plot.py"), self.a, self.b, self.lc,
                 "-o", out], timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for dim in ("payload", "keys", "lcores"):
            with open(os.path.join(out, "rate-vs-%s.png" % dim), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_plot_without_a_sweep_says_so(self):
        if not have_matplotlib():
            self.skipTest("no matplotlib")
        one = os.path.join(self.tmp.name, "one.json")
        with open(one, "w") as f:
            json.dump({"bench": "x", "meta": {}, "results": [{"name": "a", "mpps": 1}]}, f)
        r = run([PY, os.path.join(SRC, "bench", "plot.py"), one, "-o",
                 os.path.join(self.tmp.name, "none")])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("no sweep", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
