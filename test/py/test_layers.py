# SPDX-License-Identifier: BSD-3-Clause
"""lib/ runs one way: each file includes and calls only what its own
folder or a layer below it defines -- never a folder beside it, never one
above it.  The order is lib/meson.build's lib_layers, stated there once;
the includes are read from the sources, the calls from the objects of
the static library the build made (nm).  A file of lib/ that names a
header of a higher layer, or an object that calls into one, fails here
with the file, the line and both layers."""
import os
import re
import subprocess
import tempfile
import unittest

from common import BUILD, SRC

LIB = os.path.join(SRC, "lib")


def read_layers(meson_build):
    """lib_layers of a meson.build: a list of lists of folder names, from
    the bottom up."""
    with open(meson_build) as f:
        text = re.sub(r"#.*", "", f.read())
    m = re.search(r"^lib_layers\s*=\s*\[(.*?)^\]", text, flags=re.M | re.S)
    if m is None:
        raise AssertionError(f"{meson_build}: no lib_layers")
    layers = [re.findall(r"'([^']+)'", group)
              for group in re.findall(r"\[([^\]]*)\]", m.group(1))]
    if not layers or any(not g for g in layers):
        raise AssertionError(f"{meson_build}: lib_layers is not a list of lists of folders")
    return layers


def level_of(layers):
    """folder -> its layer's number (0: the bottom)."""
    level = {}
    for n, group in enumerate(layers):
        for folder in group:
            if folder in level:
                raise AssertionError(f"lib_layers names {folder} twice")
            level[folder] = n
    return level


def sources(lib, level):
    """(folder, file name, path) of every .c and .h of the layers' folders."""
    for folder in level:
        d = os.path.join(lib, folder)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                yield folder, name, os.path.join(d, name)


def include_violations(lib, layers):
    """Every include in lib that names a header of a folder beside or
    above the file's own: (file, line, header, its folder)."""
    level = level_of(layers)
    home = {}
    for folder, name, _ in sources(lib, level):
        if name.endswith(".h"):
            if name in home:
                raise AssertionError(f"two headers named {name}: in {home[name]} and {folder}"
                                     " (an include by name would be ambiguous)")
            home[name] = folder
    bad = []
    for folder, name, path in sources(lib, level):
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m is None or m.group(1) not in home:
                    continue
                to = home[m.group(1)]
                if to != folder and level[to] >= level[folder]:
                    bad.append((f"{folder}/{name}", lineno, m.group(1), to))
    return bad


def member_folder(member, level):
    """The folder of a static library's member: meson names an object
    after its source's path with '/' made '_' (verbs_mwp_qp.c.o)."""
    for folder in level:
        if folder != "." and member.startswith(folder + "_"):
            return folder
    return "."


def call_violations(archive, layers):
    """Every symbol an object of the archive takes from an object of a
    folder beside or above its own: (object, symbol, defining object)."""
    level = level_of(layers)
    out = subprocess.run(["nm", "-A", archive], check=True, capture_output=True,
                         text=True).stdout
    defined, used = {}, []
    for line in out.splitlines():
        m = re.match(r".*?:([^:]+\.o):\s*(?:[0-9a-f]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if m is None:
            continue
        member, kind, sym = m.groups()
        if kind == "U":
            used.append((member, sym))
        elif kind.isupper():
            defined[sym] = member
    bad = []
    for member, sym in used:
        if sym not in defined:
            continue
        a = member_folder(member, level)
        b = member_folder(defined[sym], level)
        if b != a and level[b] >= level[a]:
            bad.append((member, sym, defined[sym]))
    return bad


class Layers(unittest.TestCase):
    def setUp(self):
        self.layers = read_layers(os.path.join(LIB, "meson.build"))

    def test_the_layers_cover_every_folder_of_lib(self):
        level = level_of(self.layers)
        self.assertIn(".", level)
        for name in os.listdir(LIB):
            if os.path.isdir(os.path.join(LIB, name)) and name != "include":
                self.assertIn(name, level, f"lib/{name} is in no layer of lib_layers")

    def test_no_file_includes_a_header_beside_or_above_its_layer(self):
        bad = include_violations(LIB, self.layers)
        level = level_of(self.layers)
        self.assertEqual(
            [f"lib/{f}:{n}: includes {h}, of {to}/ (layer {level[to]}), not below "
             f"{f.split('/')[0]}/ (layer {level[f.split('/')[0]]})"
             for f, n, h, to in bad], [])

    def test_no_object_calls_into_a_folder_beside_or_above_its_layer(self):
        archive = os.path.join(BUILD, "lib", "libmwpath.a")
        bad = call_violations(archive, self.layers)
        self.assertEqual([f"{a} uses {s}, defined in {b}" for a, s, b in bad], [])

    def test_the_check_catches_an_upward_include_and_a_sideways_one(self):
        # a lib/ of three layers: the checker must see both wrong includes
        with tempfile.TemporaryDirectory() as d:
            files = {
                "meson.build": "lib_layers = [\n\t['low'],\n\t['a', 'b'],\n\t['top'],\n]\n",
                "low/low.h": "", "a/a.h": "", "b/b.h": "", "top/top.h": "",
                "low/low.c": '#include "low.h"\n#include "top.h"\n',
                "a/a.c": '#include "a.h"\n#include "low.h"\n#include "b.h"\n',
                "top/top.c": '#include "a.h"\n#include "b.h"\n#include "top.h"\n',
            }
            for name, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, name)) or d, exist_ok=True)
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            layers = read_layers(os.path.join(d, "meson.build"))
            self.assertEqual(layers, [["low"], ["a", "b"], ["top"]])
            self.assertEqual(sorted(include_violations(d, layers)),
                             [("a/a.c", 3, "b.h", "b"), ("low/low.c", 2, "top.h", "top")])


if __name__ == "__main__":
    unittest.main(verbosity=2)
