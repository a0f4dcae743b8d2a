# SPDX-License-Identifier: BSD-3-Clause
"""Run rdma-core's own Python tests (Debian's python3-pyverbs ships them)
on one device and print each test's outcome as JSON lines:
{"id": ..., "outcome": "pass" | "skip" | "fail" | "error", "reason": ...}.

    rdma_core_run.py TESTS_DIR DEVICE MODULE...

TESTS_DIR holds rdma-core's tests/ folder, unpacked; it becomes the
working directory (with no pyverbs/ folder in it, so that the installed
pyverbs is the one imported).  Run it under mwpath-run for mwpath's
devices.
"""
import json
import os
import sys
import unittest


class Record(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.rows = []

    def addSuccess(self, test):
        self.rows.append((test.id(), "pass", ""))

    def addSkip(self, test, reason):
        self.rows.append((test.id(), "skip", reason))

    def addFailure(self, test, err):
        self.rows.append((test.id(), "fail", self._exc_info_to_string(err, test)))

    def addError(self, test, err):
        self.rows.append((test.id(), "error", self._exc_info_to_string(err, test)))

    def addExpectedFailure(self, test, err):
        self.rows.append((test.id(), "fail", "expected failure counted as failure"))

    def addUnexpectedSuccess(self, test):
        self.rows.append((test.id(), "pass", ""))


def main():
    tests_dir, dev, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.chdir(tests_dir)
    sys.path.insert(0, os.path.join(tests_dir, "tests"))
    sys.path.insert(0, tests_dir)
    from args_parser import parser  # rdma-core's: --dev, --gid, ...
    sys.argv[1:] = ["--dev", dev, "--gid", "0"]
    parser.parse_args()
    suite = unittest.TestLoader().loadTestsFromNames(["tests." + m for m in modules])
    result = Record()
    suite.run(result)
    for test_id, outcome, reason in result.rows:
        print(json.dumps({"id": test_id, "outcome": outcome, "reason": reason}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
