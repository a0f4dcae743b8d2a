# SPDX-License-Identifier: BSD-3-Clause
"""The committed pcap regression cases (test/pcap/<case>/) are exactly
what test/pcap/gen_cases.py makes from the spec: none stale, none missing,
none edited by hand.  And the runner catches a wrong expectation."""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import CAPTURES, MWPATH, SRC

PCAP = os.path.join(SRC, "test", "pcap")
sys.path.insert(0, PCAP)


def case_dirs(root):
    return sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n))
                  and not n.startswith("__"))


class PcapCases(unittest.TestCase):
    def test_committed_cases_are_what_the_generator_makes(self):
        with tempfile.TemporaryDirectory() as t:
            subprocess.run(["/usr/bin/python3", os.path.join(PCAP, "gen_cases.py"), t,
                            CAPTURES], check=True,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
            self.assertEqual(case_dirs(PCAP), case_dirs(t))
            for n in case_dirs(t):
                files = sorted(os.listdir(os.path.join(t, n)))
                self.assertEqual(sorted(os.listdir(os.path.join(PCAP, n))), files, n)
                match, mismatch, errors = filecmp.cmpfiles(
                    os.path.join(PCAP, n), os.path.join(t, n), files, shallow=False)
                self.assertEqual(mismatch + errors, [], "%s: stale files" % n)

    def test_the_runner_reports_a_wrong_expectation(self):
        import run
        case = "vec_rc_write_only"
        with tempfile.TemporaryDirectory() as t:
            shutil.copytree(os.path.join(PCAP, case), os.path.join(t, case))
            with open(os.path.join(t, case, "expect.json")) as f:
                exp = json.load(f)
            exp["qps"]["0x11"]["state"] = "ERR"
            exp["memory"]["0"]["changed"][0][1] = "ff" + exp["memory"]["0"]["changed"][0][1][2:]
            with open(os.path.join(t, case, "expect.json"), "w") as f:
                json.dump(exp, f)
            old = run.HERE
            run.HERE = t
            try:
                errs = run.run_case(MWPATH, case)
            finally:
                run.HERE = old
        self.assertTrue(any("state: expected ERR, got RTS" in e for e in errs), errs)
        self.assertTrue(any(e.startswith("mr 0: 1 bytes differ") for e in errs), errs)


if __name__ == "__main__":
    unittest.main(verbosity=2)
