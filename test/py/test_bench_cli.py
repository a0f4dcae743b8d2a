# SPDX-License-Identifier: BSD-3-Clause
"""Every program in bench/ answers --help (exit 0, its usage on stdout)
and refuses an option it does not know (exit 2, its usage on stderr),
through getopt_long or argparse (issue 24)."""
import os
import subprocess
import unittest

from common import BUILD, SRC

C_BENCHES = ["bench_wire", "bench_keys", "bench_resp", "bench_lcores", "bench_keys_load",
             "mw_verbs_bench"]
PY_BENCHES = ["pcap_rate.py", "perftest_rate.py"]


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


class BenchCli(unittest.TestCase):
    def test_every_c_bench_answers_help_and_refuses_an_unknown_option(self):
        for b in C_BENCHES:
            exe = os.path.join(BUILD, "bench", b)
            with self.subTest(bench=b):
                r = run([exe, "--help"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.startswith("usage: "), r.stdout)
                r = run([exe, "--no-such-option"])
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("usage: ", r.stderr)

    def test_every_python_bench_answers_help_and_refuses_an_unknown_option(self):
        for b in PY_BENCHES:
            script = os.path.join(SRC, "bench", b)
            with self.subTest(bench=b):
                r = run(["/usr/bin/python3", script, "--help"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.startswith("usage: "), r.stdout)
                r = run(["/usr/bin/python3", script, "--no-such-option"])
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("usage: ", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
