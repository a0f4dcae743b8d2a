# SPDX-License-Identifier: BSD-3-Clause
"""`meson install` ships a usable library: a program outside the tree,
compiled with only `pkg-config libmwpath` against the installed header,
links the shared library and parses a frame with it; and the library
exports exactly the functions its installed headers declare."""
import json
import os
import re
import subprocess
import tempfile
import unittest

from common import BUILD, SRC

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <mwpath.h>

int main(void)
{
	static uint8_t buf[256];
	struct rte_mbuf m;
	struct mwp_flow f = { .sport = 1 };
	struct mwp_hdrs h = { .opcode = ROCE_OP_RC_ACKNOWLEDGE, .dqpn = 5, .psn = 9 };
	struct mwp_pkt p;

	mwp_mbuf_wrap(&m, buf, sizeof(buf), 0);
	if (mwp_build(&m, &f, &h, NULL, 0, NULL) != 0)
		return 1;
	if (mwp_parse(&m, &p) != MWP_DROP_NONE || p.qpn != 5 || !mwp_icrc_ok(&m, &p))
		return 2;
	printf("%s %s\n", mwp_version(), roce_opcode[p.opcode].name);
	return 0;
}
"""


def exported_symbols(so):
    out = subprocess.run(["nm", "-D", "--defined-only", so], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines()
            if re.match(r"(mwp|roce)_", line.split()[-1])}


def header_functions(incdir):
    """Names of mwp_/roce_ functions and tables declared in the installed
    headers, and those of them defined there static inline."""
    declared, inline = set(), set()
    for name in os.listdir(incdir):
        with open(os.path.join(incdir, name)) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        text = re.sub(r"^#.*(\\\n.*)*$", "", text, flags=re.M)
        # one top-level statement at a time: a prototype or extern table
        # ends with ';', a definition opens '{'
        for stmt in re.split(r"(?<=[;}])", text):
            m = re.search(r"\b((?:mwp|roce)_\w+)\s*(\(|\[|;)", stmt)
            if m is None or re.search(r"\b(struct|enum|union)\s+" + m.group(1) + r"\b",
                                      stmt):
                continue
            if "static" in stmt[:m.start()]:
                inline.add(m.group(1))
                declared.add(m.group(1))
            elif m.group(2) == "(" or "extern" in stmt[:m.start()]:
                declared.add(m.group(1))
    return declared, inline


def version_map_names():
    with open(os.path.join(SRC, "lib", "version.map")) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    return set(re.findall(r"^\s*((?:mwp|roce)_\w+);", text, flags=re.M))


class Install(unittest.TestCase):
    def test_installed_library_builds_and_runs_an_outside_program(self):
        with tempfile.TemporaryDirectory() as d:
            dest = os.path.join(d, "root")
            subprocess.run(["meson", "install", "-C", BUILD, "--destdir", dest,
                            "--quiet", "--no-rebuild"], check=True,
                           capture_output=True)
            prefix = subprocess.run(
                ["meson", "introspect", BUILD, "--buildoptions"], check=True,
                capture_output=True, text=True).stdout
            opts = {o["name"]: o["value"] for o in json.loads(prefix)}
            root = dest + opts["prefix"]
            pcdir = os.path.join(root, opts["libdir"], "pkgconfig")
            self.assertTrue(os.path.exists(os.path.join(pcdir, "libmwpath.pc")))
            self.assertTrue(os.path.exists(os.path.join(root, "include", "mwpath", "mwpath.h")))
            # Relocate our .pc to the staging root; libdpdk's stays put.
            pc2 = os.path.join(d, "pc")
            os.makedirs(pc2)
            with open(os.path.join(pcdir, "libmwpath.pc")) as f:
                pc = f.read()
            pc = pc.replace("prefix=" + opts["prefix"] + "\n", "prefix=" + root + "\n", 1)
            with open(os.path.join(pc2, "libmwpath.pc"), "w") as f:
                f.write(pc)
            env = dict(os.environ, PKG_CONFIG_PATH=pc2)
            flags = subprocess.run(
                ["pkg-config", "--cflags", "--libs", "libmwpath"], check=True,
                capture_output=True, text=True, env=env).stdout.split()
            src = os.path.join(d, "prog.c")
            exe = os.path.join(d, "prog")
            with open(src, "w") as f:
                f.write(PROGRAM)
            # An instrumented libmwpath.so needs an instrumented program.
            san = opts.get("b_sanitize", "none")
            san = [] if san in ("none", []) else ["-fsanitize=" + (
                san if isinstance(san, str) else ",".join(san))]
            subprocess.run(["cc", "-Wall", "-Werror", src, "-o", exe] + san + flags,
                           check=True)
            libdir = os.path.join(root, opts["libdir"])
            out = subprocess.run([exe], check=True, capture_output=True, text=True,
                                 env=dict(os.environ, LD_LIBRARY_PATH=libdir)).stdout
            self.assertRegex(out, r"^\d+\.\d+\.\d+ RC_ACKNOWLEDGE$")
            self.assertTrue(any(n.startswith("libmwpath.so") for n in os.listdir(libdir)))

            # The verbs program: only <infiniband/verbs.h> and <mwpath.h>.
            ex = os.path.join(d, "verbs_example")
            subprocess.run(["cc", "-Wall", "-Werror",
                            os.path.join(SRC, "test", "verbs", "verbs_example.c"),
                            "-o", ex] + san + flags, check=True)
            out = subprocess.run([ex], capture_output=True, text=True,
                                 env=dict(os.environ, LD_LIBRARY_PATH=libdir))
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("0 failed", out.stdout)
            self.assertIn("libmwpath.a", os.listdir(libdir))

            # What the shared library exports is what its headers declare
            so = os.path.join(libdir, "libmwpath.so")
            exported = exported_symbols(so)
            declared, inline = header_functions(os.path.join(root, "include", "mwpath"))
            self.assertEqual(sorted(exported - declared), [],
                             "exported, but no installed header declares them")
            self.assertEqual(sorted(declared - inline - exported), [],
                             "declared (not inline) in an installed header, not exported")
            self.assertEqual(sorted(version_map_names() - exported), [],
                             "named in lib/version.map, not exported")


class Layering(unittest.TestCase):
    def test_the_program_includes_only_installed_headers_of_the_library(self):
        with open(os.path.join(SRC, "lib", "meson.build")) as f:
            meson = f.read()
        installed = set(re.findall(r"'(?:\w+/)?(\w+\.h)'",
                                   meson[meson.index("lib_headers = files("):]))
        self.assertIn("mwpath.h", installed)
        self.assertNotIn("mwp_priv.h", installed)
        # app/, pmd/ (the program's ethdev and lcore layer) and provider/
        # (the libibverbs device) may use each other's headers; of lib/,
        # only what `meson install` ships (they compile against a copy of
        # just those: lib/include/)
        parts = ("app", "pmd", "provider")
        own = set().union(*(os.listdir(os.path.join(SRC, p)) for p in parts))
        for part in parts:
            for name in sorted(os.listdir(os.path.join(SRC, part))):
                if not name.endswith((".c", ".h")):
                    continue
                with open(os.path.join(SRC, part, name)) as f:
                    for inc in re.findall(r'^#include "([^"]+)"', f.read(), flags=re.M):
                        self.assertTrue(inc in own or inc in installed,
                                        f"{part}/{name} includes {inc}, a private header")


if __name__ == "__main__":
    unittest.main(verbosity=2)
