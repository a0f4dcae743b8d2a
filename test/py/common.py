# SPDX-License-Identifier: BSD-3-Clause
"""Paths and helpers shared by the Python-level tests (run by meson test
with MWPATH_BUILD, MWPATH_SRC and MWPATH_SHARED set)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ["MWPATH_BUILD"]
SRC = os.environ["MWPATH_SRC"]
SHARED = os.environ["MWPATH_SHARED"]
CAPTURES = os.path.join(SHARED, "captures")
MWPATH = os.path.join(BUILD, "app", "mwpath")
INSPECT = os.path.join(BUILD, "app", "mwpath-inspect")

sys.path.insert(0, os.path.join(SRC, "test", "gen"))
sys.path.insert(0, os.path.join(SRC, "test", "pcap"))

# the mwpath summary parser the pcap runner uses
from run import summary_counts  # noqa: E402,F401


def hung_state(pid):
    """A hung process's threads and, when it holds a device of the
    libibverbs interposer, that device's counters: for a failure message
    (gdb where it is installed; the builds have debug info)."""
    if not shutil.which("gdb"):
        return "(no gdb here for the hung process's stacks)"
    r = subprocess.run(["timeout", "60", "gdb", "-p", str(pid), "-batch", "-nx",
                        "-ex", "thread apply all bt",
                        "-ex", "print devs[0].lc.q[0].stats",
                        "-ex", "print devs[0].lc.eng->st"],
                       capture_output=True, text=True)
    return "\n".join(l for l in r.stdout.splitlines()
                     if l.startswith(("#", "Thread", "$")))


# How mwpath writes a number that names something -- in objects.json,
# completions.json, telemetry and mwpath-inspect alike: a key "0x00000100",
# a QPN "0x11", a PSN "0x000006", an address "0x10000".  Each parser takes
# only its own form, so that a test reading a value also checks it.
HEX_FORMS = {"key": r"0x[0-9a-f]{8}", "qpn": r"0x[0-9a-f]{1,6}",
             "psn": r"0x[0-9a-f]{6}", "addr": r"0x[0-9a-f]{1,16}"}


def hexval(form, v):
    """The integer of a hex string of the given form (HEX_FORMS)."""
    if not isinstance(v, str) or not re.fullmatch(HEX_FORMS[form], v):
        raise AssertionError("%r is not a %s as mwpath writes it (%s)"
                             % (v, form, HEX_FORMS[form]))
    return int(v, 16)


def key(v):
    return hexval("key", v)


def qpn(v):
    return hexval("qpn", v)


def psn(v):
    return hexval("psn", v)


def addr(v):
    return hexval("addr", v)


# completions.json's fields in hex, and their forms
CQE_HEX = {"qp_num": "qpn", "imm_data": "key", "invalidated_rkey": "key"}


def cqe(e):
    """A completion of completions.json with its hex fields as integers."""
    return {k: hexval(CQE_HEX[k], v) if k in CQE_HEX else v for k, v in e.items()}


def load_dump(dump, name):
    with open(os.path.join(dump, name)) as f:
        return json.load(f)


def port_counts(dump, port=0):
    """Port port's counters from a --dump-dir's objects.json ("ports"),
    plus "drop": the drop reasons that have frames (those the printed
    summary lists)."""
    ports = load_dump(dump, "objects.json")["ports"]
    p = [p for p in ports if p["port"] == port]
    if len(p) != 1:
        raise AssertionError("objects.json: no port %d in %r" % (port, ports))
    c = dict(p[0]["counters"])
    c["drop"] = {r: n for r, n in c["drops"].items() if n}
    return c


def inspect(pcap):
    out = subprocess.run([INSPECT, pcap], check=True, capture_output=True,
                         text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


TSHARK_FIELDS = [
    "frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp",
    "infiniband.bth.psn", "infiniband.bth.a", "infiniband.reth.va",
    "infiniband.reth.r_key", "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome", "infiniband.aeth.msn", "udp.checksum",
    "udp.checksum.status", "_ws.malformed",
    "_ws.expert.severity",
]


# The form of each field of mwpath-inspect that names something (a key, a
# QPN, a PSN, an address, a syndrome, a P_Key, an atomic's 64-bit operand):
# a hex string; lengths, counts, flags and the opcode are integers.
INSPECT_HEX = {"qpn": "0x%x", "sqpn": "0x%x", "psn": "0x%06x", "pkey": "0x%04x",
               "rkey": "0x%08x", "qkey": "0x%08x", "immdt": "0x%08x",
               "syndrome": "0x%02x", "va": "0x%x", "swap_add": "0x%x",
               "compare": "0x%x", "orig": "0x%x"}


def inspect_form(fields):
    """fields (integers, nested as mwpath-inspect nests them) as
    mwpath-inspect writes them."""
    out = {}
    for k, v in fields.items():
        if isinstance(v, dict):
            v = inspect_form(v)
        elif k in INSPECT_HEX and isinstance(v, int) and not isinstance(v, bool):
            v = INSPECT_HEX[k] % v
        out[k] = v
    return out


def tshark(pcap):
    """tshark's RoCEv2 decode of every frame: {frame: {field: value}}."""
    cmd = ["tshark", "-r", pcap, "-n", "-o", "udp.check_checksum:TRUE",
           "-d", "udp.port==4791,infiniband",
           "--disable-protocol", "tftp", "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=f"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=dict(os.environ, HOME="/tmp")).stdout
    rows = {}
    for line in out.splitlines():
        vals = line.split("\t")
        rows[int(vals[0])] = dict(zip(TSHARK_FIELDS[1:], vals[1:]))
    return rows


def num(s):
    return int(s, 0) if s else None


class TmpDirCase(unittest.TestCase):
    """A test case with a temporary directory, self.d, removed after each
    test, and write() to put a file in it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.d, name)
        with open(path, "w") as f:
            f.write(text)
        return path
