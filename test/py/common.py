# SPDX-License-Identifier: BSD-3-Clause
"""Paths and helpers shared by the Python-level tests (run by meson test
with MWPATH_BUILD, MWPATH_SRC and MWPATH_SHARED set)."""
import json
import os
import shutil
import subprocess
import sys

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
