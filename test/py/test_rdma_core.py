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


class RdmaCore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tests = os.path.join(cls.tmp.name, "tests")
        shutil.copytree(TESTS, tests)
        for name in os.listdir(tests):
            if name.endswith(".gz"):
                with gzip.open(os.path.join(tests, name)) as src, \
                        open(os.path.join(tests, name[:-3]), "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.unlink(os.path.join(tests, name))
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
