# SPDX-License-Identifier: BSD-3-Clause
"""The README opens with the two commands, and .ci/run runs exactly the
second one (the test command)."""
import os
import re
import unittest

from common import SRC


def readme_commands():
    with open(os.path.join(SRC, "README.md")) as f:
        text = f.read()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    cmds = []
    for b in blocks:
        cmds += [l for l in b.splitlines() if l and not l.startswith("#")]
    return text, cmds


class ReadmeCi(unittest.TestCase):
    def test_readme_opens_with_two_commands(self):
        text, cmds = readme_commands()
        self.assertGreaterEqual(len(cmds), 2)
        first_block = text.index("```sh")
        self.assertLess(first_block, 600, "the commands must open the README")
        self.assertTrue(cmds[0].endswith("build/app/mwpath"), cmds[0])
        self.assertTrue(cmds[0].startswith("./install-deps.sh"))
        self.assertTrue(cmds[1].startswith("./install-deps.sh"))

    def test_ci_runs_exactly_the_readme_test_command(self):
        _, cmds = readme_commands()
        with open(os.path.join(SRC, ".ci", "run")) as f:
            lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
        self.assertIn(cmds[1], lines)


if __name__ == "__main__":
    unittest.main(verbosity=2)
