# SPDX-License-Identifier: BSD-3-Clause
"""Replay pcap regression cases through the real mwpath binary and a
net_pcap port, and compare with what each case expects: the frames sent,
field by field; the final bytes of each region; the completions of each
queue, in order; QP states; live and dead keys; port counters.  A mismatch
names the case, the frame number, the field, and the expected and
received values.

The suite's own cases (test/pcap/) come from the spec through
gen_cases.py.  --record makes a case from a capture and a configuration
by running mwpath once and writing down what it did, for the user to
review and commit (docs/regression-cases.md); such a case says so in its
expect.json ("recorded") and the runner prints "(recorded)" beside it.

Run "run.py --help" for the options.  Exit status: 0 all cases passed,
1 a case failed, 2 a usage error or a case that could not be run.
Environment: MWPATH_SHARED (default: ../shared beside the source root),
where captures/ named by a case's expect.json are found.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
# where --record writes when no --cases-dir is given; meson makes a test
# of each case found there too (test/meson.build)
RECORDED = os.path.join(SRC, "test", "pcap-recorded")
sys.path.insert(0, os.path.join(HERE, "..", "gen"))

import roce  # noqa: E402

CAPTURES = (os.path.join(os.environ["MWPATH_SHARED"], "captures")
            if "MWPATH_SHARED" in os.environ else
            os.path.join(HERE, "..", "..", "..", "shared", "captures"))
MWPATH_TIMEOUT = 120
EH_FIELDS = {
    "reth": ("!QII", ("va", "rkey", "dmalen")),
    "aeth": ("!I", ("syndrome_msn",)),
    "atmeth": ("!QIQQ", ("va", "rkey", "swap_add", "compare")),
    "atmack": ("!Q", ("orig",)),
    "immdt": ("!I", ("imm",)),
    "ieth": ("!I", ("rkey",)),
    "deth": ("!II", ("qkey", "sqpn")),
    "cnp": ("!16s", ("reserved",)),
}


class Error(Exception):
    """Something that stops a case from being run or recorded at all (not
    a mismatch): reported as one line, exit status 2."""


def num(v):
    """A number of mwpath's dump: an integer, or a string "0x..." (the
    dump is moving to hex strings for keys, QPNs, PSNs, addresses)."""
    if isinstance(v, bool):
        raise Error("dump: %r where a number was expected" % (v,))
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v, 16 if v[:2].lower() == "0x" else 10)
        except ValueError:
            pass
    raise Error("dump: %r where a number was expected" % (v,))


def fill_bytes(fill, length):
    """A region's bytes before any traffic, as [mr N] fill makes them
    (docs/configuration.md): zero, pattern or random:SEED."""
    if fill == "zero":
        return bytearray(length)
    if fill == "pattern":
        return bytearray(i & 0xff for i in range(length))
    if isinstance(fill, str) and fill.startswith("random:"):
        x, out = num(fill[len("random:"):]) & (2**64 - 1), bytearray(length)
        for i in range(length):
            x = (x * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
            out[i] = x >> 56
        return out
    raise Error("fill %r: not zero, pattern or random:SEED" % (fill,))


def fields(frame):
    """A frame as an ordered list of (field, value)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    out = []
    p = Ether(frame)
    out += [("eth.dst", p.dst), ("eth.src", p.src), ("eth.type", hex(p.type))]
    if Dot1Q in p:
        out += [("vlan.id", p[Dot1Q].vlan), ("vlan.prio", p[Dot1Q].prio)]
    if IP in p:
        ip = p[IP]
        out += [("ip.version", 4), ("ip.ihl", ip.ihl), ("ip.tos", hex(ip.tos)),
                ("ip.len", ip.len), ("ip.id", ip.id), ("ip.flags", str(ip.flags)),
                ("ip.frag", ip.frag), ("ip.ttl", ip.ttl), ("ip.proto", ip.proto),
                ("ip.chksum", hex(ip.chksum)), ("ip.src", ip.src), ("ip.dst", ip.dst)]
    elif IPv6 in p:
        ip = p[IPv6]
        out += [("ip.version", 6), ("ipv6.tc", hex(ip.tc)), ("ipv6.fl", ip.fl),
                ("ipv6.plen", ip.plen), ("ipv6.nh", ip.nh), ("ipv6.hlim", ip.hlim),
                ("ipv6.src", ip.src), ("ipv6.dst", ip.dst)]
    else:
        return out + [("raw", bytes(p.payload).hex())]
    if UDP not in p:
        return out + [("raw", bytes(p[IP if IP in p else IPv6].payload).hex())]
    u = p[UDP]
    out += [("udp.sport", u.sport), ("udp.dport", u.dport), ("udp.len", u.len),
            ("udp.chksum", hex(u.chksum))]
    r = bytes(u.payload)
    if len(r) < 16:
        return out + [("raw", r.hex())]
    op = r[0]
    name, kinds, _ = roce.OPCODES.get(op, ("0x%02x" % op, (), True))
    pad = (r[1] >> 4) & 3
    out += [("bth.opcode", name), ("bth.se", r[1] >> 7), ("bth.mig", (r[1] >> 6) & 1),
            ("bth.pad", pad), ("bth.tver", r[1] & 0xf),
            ("bth.pkey", hex(struct.unpack("!H", r[2:4])[0])),
            ("bth.fecn", r[4] >> 7), ("bth.becn", (r[4] >> 6) & 1),
            ("bth.dqpn", hex(int.from_bytes(r[5:8], "big"))),
            ("bth.ackreq", r[8] >> 7), ("bth.psn", int.from_bytes(r[9:12], "big"))]
    off = 12
    for k in kinds:
        fmt, names = EH_FIELDS[k]
        n = struct.calcsize(fmt)
        vals = struct.unpack(fmt, r[off:off + n])
        for fname, v in zip(names, vals):
            if fname == "syndrome_msn":
                out += [("aeth.syndrome", hex(v >> 24)), ("aeth.msn", v & 0xffffff)]
            elif isinstance(v, int):
                out.append(("%s.%s" % (k, fname), hex(v)))
        off += n
    body = r[off:len(r) - 4]
    out += [("payload.len", len(body) - pad), ("payload", body[:len(body) - pad].hex()),
            ("pad", body[len(body) - pad:].hex()), ("icrc", r[-4:].hex())]
    return out


def compare_frames(want, got, errs):
    for i in range(max(len(want), len(got))):
        if i >= len(got):
            errs.append("frame %d: expected, not sent (%s)" % (i + 1, dict(fields(want[i])).get("bth.opcode")))
            continue
        if i >= len(want):
            errs.append("frame %d: sent, not expected (%s)" % (i + 1, dict(fields(got[i])).get("bth.opcode")))
            continue
        if want[i] == got[i]:
            continue
        fw, fg = fields(want[i]), dict(fields(got[i]))
        bad = [(k, v, fg.get(k)) for k, v in fw if fg.get(k) != v]
        if not bad:
            bad = [("bytes", want[i].hex(), got[i].hex())]
        for k, v, g in bad[:6]:
            errs.append("frame %d: %s: %s" % (i + 1, k, mismatch(v, g)))


def mismatch(want, got):
    """'expected W, got G'; for long hex (a payload, a whole frame) the
    first byte that differs and 8 bytes either side, not the whole of
    both."""
    if not (isinstance(want, str) and isinstance(got, str) and
            max(len(want), len(got)) > 64):
        return "expected %s, got %s" % (want, got)
    n = min(len(want), len(got))
    at = next((j for j in range(0, n, 2) if want[j:j + 2] != got[j:j + 2]), n) // 2
    lo, hi = max(at - 8, 0) * 2, (at + 8) * 2
    return "%d bytes expected, %d sent, first difference at byte %d: expected ...%s..., " \
           "got ...%s..." % (len(want) // 2, len(got) // 2, at, want[lo:hi], got[lo:hi])


def read_pcap(path):
    """The frames of a pcap file, or [] when there is none."""
    from scapy.utils import RawPcapReader
    if not os.path.exists(path):
        return []
    try:
        rd = RawPcapReader(path)
        frames = [bytes(d) for d, _ in rd]
        rd.close()
    except Exception as e:  # scapy raises Scapy_Exception, EOFError, ...
        raise Error("%s: not a readable pcap file (%s)" % (path, e)) from None
    return frames


def summary_counts(text):
    """{'packets in': n, ..., 'drop': {reason: n}} from mwpath's summary."""
    c, drop = {}, {}
    for line in text.splitlines():
        m = re.match(r"^  (packets in|packets out|accepted|control|dropped)\s+(\d+)", line)
        if m:
            c[m.group(1)] = int(m.group(2))
        m = re.match(r"^  congestion: ce marked (\d+), cnps sent (\d+), cnps received (\d+)",
                     line)
        if m:
            c["ce marked"], c["cnps sent"], c["cnps received"] = map(int, m.groups())
        m = re.match(r"^    ([a-z_0-9]+)\s+(\d+)\s", line)
        if m:
            drop[m.group(1)] = int(m.group(2))
    c["drop"] = drop
    return c


# objects.json "ports" counters -> the names expect.json uses (the summary's)
PORT_COUNTERS = {"packets_in": "packets in", "packets_out": "packets out",
                 "accepted": "accepted", "control": "control", "dropped": "dropped",
                 "ce": "ce marked", "cnp_sent": "cnps sent",
                 "cnp_received": "cnps received"}


def read_dump(dump, stdout):
    """Everything the runner takes from a run, in one place: the dump
    directory (objects.json, completions.json, mr-N.bin) and, for port
    counters when objects.json has no "ports", the printed summary.  Every
    number goes through num(); the result:
    {"qps": {qpn: state}, "live": set, "cqes": [cqe], "port": {...},
     "mr": {index: bytes}}"""
    def load(name):
        p = os.path.join(dump, name)
        try:
            with open(p) as f:
                return json.load(f)
        except OSError as e:
            raise Error("dump: %s: %s" % (p, e.strerror)) from None
        except ValueError as e:
            raise Error("dump: %s: not JSON: %s" % (p, e)) from None

    objs, comps = load("objects.json"), load("completions.json")
    try:
        got = {"qps": {num(q["qpn"]): q["state"] for q in objs["qps"]},
               "live": {num(k) for k in objs["live_keys"]},
               "cqes": [norm_cqe(e) for cq in comps["cqs"] for e in cq["completions"]],
               "mr": {}}
        if "ports" in objs:
            port = {v: 0 for v in PORT_COUNTERS.values()}
            port["drop"] = {}
            for p in objs["ports"]:
                c = p["counters"]
                for k, v in PORT_COUNTERS.items():
                    port[v] += num(c.get(k, 0))
                for r, n in c.get("drops", {}).items():
                    if num(n):
                        port["drop"][r] = port["drop"].get(r, 0) + num(n)
        else:
            port = summary_counts(stdout)
            port["drop"] = {r: n for r, n in port["drop"].items() if n}
        got["port"] = port
    except (KeyError, TypeError, AttributeError) as e:
        raise Error("dump: %s: unexpected form (%s: %s)" % (dump, type(e).__name__, e)) from None
    for n in sorted(os.listdir(dump)):
        m = re.match(r"^mr-(\d+)\.bin$", n)
        if m:
            with open(os.path.join(dump, n), "rb") as f:
                got["mr"][m.group(1)] = f.read()
    return got


# completion fields that are strings, not numbers
CQE_NAMES = ("status", "opcode")


def norm_cqe(e):
    """A completion with its numbers as integers, from the dump or from
    expect.json alike."""
    return {k: (v if k in CQE_NAMES else num(v)) for k, v in e.items()}


def by_queue(cqes):
    q = {}
    for e in cqes:
        kind = "recv" if e["opcode"].startswith("recv") else "send"
        q.setdefault((e["qp_num"], kind), []).append(e)
    return q


def cqe_text(e):
    return "{%s}" % ", ".join(
        "%s: %s" % (k, hex(v) if k in ("qp_num", "invalidated_rkey", "imm_data") else v)
        for k, v in sorted(e.items()))


def case_names(cases_dir):
    """The cases of a directory: its subdirectories with an expect.json."""
    if not os.path.isdir(cases_dir):
        raise Error("--cases-dir %s: no such directory" % cases_dir)
    return sorted(n for n in os.listdir(cases_dir)
                  if os.path.isfile(os.path.join(cases_dir, n, "expect.json")))


def input_path(case_dir, inp):
    """expect.json's "input": a file of the case, or captures/... under
    MWPATH_SHARED."""
    if inp.startswith("captures/"):
        p = os.path.join(CAPTURES, inp[len("captures/"):])
        if not os.path.exists(p):
            raise Error("%s: the capture %s is not in %s (set MWPATH_SHARED to the "
                        "directory holding captures/)" % (case_dir, inp, CAPTURES))
        return p
    p = os.path.join(case_dir, inp)
    if not os.path.exists(p):
        raise Error("%s: no input %s" % (case_dir, inp))
    return p


def load_case(cases_dir, name):
    """(case directory, expect.json, input path, config path)."""
    d = os.path.join(cases_dir, name)
    if not os.path.isdir(d):
        near = [n for n in case_names(cases_dir) if name in n] \
            if os.path.isdir(cases_dir) else []
        raise Error("no case %s in %s%s" % (name, cases_dir,
                    " (did you mean %s?)" % ", ".join(near[:3]) if near else
                    " (run.py --list shows them)"))
    p = os.path.join(d, "expect.json")
    try:
        with open(p) as f:
            exp = json.load(f)
    except OSError as e:
        raise Error("%s: %s" % (p, e.strerror)) from None
    except ValueError as e:
        raise Error("%s: not JSON: %s" % (p, e)) from None
    if not isinstance(exp, dict) or not isinstance(exp.get("input"), str):
        raise Error("%s: no \"input\" naming the traffic" % p)
    cfg = os.path.join(d, "config.ini")
    if not os.path.isfile(cfg):
        raise Error("%s: no config.ini" % d)
    return d, exp, input_path(d, exp["input"]), cfg


def mwpath_command(mwpath, inp, cfg, out, dump):
    cpus = "0-1" if os.cpu_count() > 1 else "0"
    return [mwpath, "-l", cpus, "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
            "--no-telemetry", "--log-level=lib.eal:warning",
            "--log-level=pmd.net.pcap:warning",
            "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out), "--",
            "--config", cfg, "--idle-exit", "100", "--dump-dir", dump]


def run_mwpath(mwpath, inp, cfg, rundir):
    """mwpath once on inp with cfg, its files in rundir (out.pcap, dump/,
    stdout.txt, stderr.txt, command.txt): (command, stdout).  Raises Error
    when it cannot run or exits non-zero."""
    out, dump = os.path.join(rundir, "out.pcap"), os.path.join(rundir, "dump")
    cmd = mwpath_command(os.path.abspath(mwpath), os.path.abspath(inp),
                         os.path.abspath(cfg), out, dump)
    with open(os.path.join(rundir, "command.txt"), "w") as f:
        f.write(" ".join(shlex.quote(a) for a in cmd) + "\n")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=MWPATH_TIMEOUT,
                           errors="replace")
    except OSError as e:
        raise Error("%s: cannot run: %s" % (mwpath, e.strerror)) from None
    except subprocess.TimeoutExpired:
        raise Error("mwpath did not stop within %d s" % MWPATH_TIMEOUT) from None
    for name, text in (("stdout.txt", r.stdout), ("stderr.txt", r.stderr)):
        with open(os.path.join(rundir, name), "w") as f:
            f.write(text)
    if r.returncode != 0:
        lines = [l for l in (r.stderr or r.stdout).splitlines() if l.strip()]
        why = next((l for l in reversed(lines) if l.startswith("mwpath")),
                   lines[-1] if lines else "no output")
        raise Error("mwpath exited %d: %s" % (r.returncode, why.strip()))
    return cmd, r.stdout


def compare(case_dir, exp, out, got):
    """Every mismatch between a case and a run, as lines."""
    errs = []
    compare_frames(read_pcap(os.path.join(case_dir, "expect-out.pcap")), read_pcap(out), errs)
    for idx, m in sorted(exp.get("memory", {}).items()):
        want = fill_bytes(m["fill"], m["length"])
        for off, hexbytes in m["changed"]:
            b = bytes.fromhex(hexbytes)
            want[off:off + len(b)] = b
        g = got["mr"].get(idx)
        if g is None:
            errs.append("mr %s: not in the dump" % idx)
            continue
        diff = [i for i in range(max(len(want), len(g)))
                if i >= len(want) or i >= len(g) or want[i] != g[i]]
        if diff:
            errs.append("mr %s: %d bytes differ, first at offset %#x: expected %s, got %s"
                        % (idx, len(diff), diff[0], want[diff[0]:diff[0] + 8].hex(),
                           g[diff[0]:diff[0] + 8].hex()))
    for qpn, want in sorted(exp.get("qps", {}).items()):
        state = got["qps"].get(num(qpn))
        if state != want["state"]:
            errs.append("qp %s: state: expected %s, got %s" % (qpn, want["state"], state))
    if "keys" in exp:
        live = got["live"]
        if live != {num(k) for k in exp["keys"]["live"]}:
            errs.append("live keys: expected %s, got %s" % (
                sorted(hex(num(k)) for k in exp["keys"]["live"]), sorted(hex(k) for k in live)))
        for k in exp["keys"]["dead"]:
            if num(k) in live:
                errs.append("key %#x: expected dead, is live" % num(k))
    if "completions" in exp:
        g = by_queue(got["cqes"])
        want = by_queue([norm_cqe(e) for e in
                         exp["completions"]["send"] + exp["completions"]["recv"]])
        for q in sorted(set(g) | set(want)):
            if g.get(q, []) != want.get(q, []):
                errs.append("completions of qp %#x %s queue: expected [%s], got [%s]" % (
                    q[0], q[1], ", ".join(map(cqe_text, want.get(q, []))),
                    ", ".join(map(cqe_text, g.get(q, [])))))
    for k, v in sorted(exp.get("port", {}).items()):
        g = got["port"].get(k)
        if k == "drop":
            v = {r: n for r, n in v.items() if n}
        if g != v:
            errs.append("port counter %s: expected %s, got %s" % (k, v, g))
    return errs


class Keep:
    """Where the files of failed runs are kept (--keep): a directory per
    failed case under root, made fresh; the runs that pass leave nothing."""

    def __init__(self, root):
        self.made = not root
        self.root = tempfile.mkdtemp(prefix="mwpath-pcap-") if not root else root
        try:
            os.makedirs(self.root, exist_ok=True)
        except OSError as e:
            raise Error("--keep %s: %s" % (self.root, e.strerror)) from None

    def rundir(self, name):
        d, i = os.path.join(self.root, name), 1
        while os.path.exists(d):
            d, i = os.path.join(self.root, "%s.%d" % (name, i)), i + 1
        os.makedirs(d)
        return d

    def close(self):
        if self.made and not os.listdir(self.root):
            os.rmdir(self.root)


def replay(mwpath, case_dir, exp, inp, cfg, keep=None, name=None):
    """One case through mwpath: (mismatches, kept directory or None).
    Raises Error when mwpath cannot run or fails (the directory is kept
    then too, with keep)."""
    rundir = keep.rundir(name or os.path.basename(case_dir)) if keep else \
        tempfile.mkdtemp(prefix="mwpath-pcap-")
    ok = False
    try:
        try:
            _, stdout = run_mwpath(mwpath, inp, cfg, rundir)
            got = read_dump(os.path.join(rundir, "dump"), stdout)
            try:
                errs = compare(case_dir, exp, os.path.join(rundir, "out.pcap"), got)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                raise Error("%s/expect.json: unexpected form (%s: %s)"
                            % (case_dir, type(e).__name__, e)) from None
        except Error as e:
            if keep:
                e.kept = rundir
            raise
        ok = not errs
        return errs, (rundir if keep and errs else None)
    finally:
        if ok or not keep:
            shutil.rmtree(rundir, ignore_errors=True)


def run_case(mwpath, name, cases_dir=None, keep=None):
    """The mismatches of one case of cases_dir (default: this directory)."""
    d, exp, inp, cfg = load_case(cases_dir or HERE, name)
    return replay(mwpath, d, exp, inp, cfg, keep, name)[0]


def kept_text(rundir, what=""):
    with open(os.path.join(rundir, "command.txt")) as f:
        return ["kept%s: %s" % (what, rundir), "command: %s" % f.read().strip()]


# ---------------------------------------------------------------- record

def parse_ini(path):
    """{section: {key: value}} of an mwpath configuration, enough to read
    each region's fill."""
    secs, cur = {}, None
    with open(path) as f:
        for line in f:
            line = re.split(r"[;#]", line, 1)[0].strip()
            m = re.match(r"^\[\s*(.+?)\s*\]$", line)
            if m:
                cur = secs.setdefault(" ".join(m.group(1).split()), {})
            elif cur is not None and "=" in line:
                k, v = line.split("=", 1)
                cur[k.strip()] = v.strip()
    return secs


def region_fill(secs, idx):
    for name, sec in secs.items():
        parts = name.split()
        if len(parts) == 2 and parts[0] == "mr":
            try:
                if int(parts[1], 0) == int(idx):
                    return sec.get("fill", "zero")
            except ValueError:
                pass
    return "zero"


def memory_runs(fill, data):
    """A region as its fill plus the runs that differ from it (the form
    gen_cases.py writes)."""
    return {"fill": fill, "length": len(data),
            "changed": roce.changed_runs(fill_bytes(fill, len(data)), data)}


def named_keys(frames):
    """The R_Keys the traffic names (RETH, AtomicETH, IETH)."""
    keys = set()
    for fr in frames:
        try:
            f = dict(fields(fr))
        except Exception:  # a truncated or odd frame names no key
            continue
        for k in ("reth.rkey", "atmeth.rkey", "ieth.rkey"):
            if k in f:
                keys.add(int(f[k], 16))
    return keys


def mwpath_version(mwpath):
    try:
        v = subprocess.run([mwpath, "--version"], capture_output=True, text=True,
                           timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        v = "unknown"
    try:
        c = subprocess.run(["git", "-C", SRC, "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=10)
        if c.returncode == 0 and c.stdout.strip():
            v += ", source %s" % c.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return v


def same_dir(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def record_in(args, name, work, frames):
    """Record in work/: mwpath's run in run/, the case in case/NAME/, then
    its replay in replay/: (expect.json, frames sent)."""
    rundir, stage = os.path.join(work, "run"), os.path.join(work, "case", name)
    os.makedirs(rundir)
    os.makedirs(stage)
    _, stdout = run_mwpath(args.mwpath, args.input, args.config, rundir)
    got = read_dump(os.path.join(rundir, "dump"), stdout)
    secs = parse_ini(args.config)
    shutil.copyfile(args.config, os.path.join(stage, "config.ini"))
    cap = os.path.realpath(CAPTURES) + os.sep
    if os.path.realpath(args.input).startswith(cap):
        inp = "captures/" + os.path.realpath(args.input)[len(cap):]
    else:
        inp = "in.pcap"
        shutil.copyfile(args.input, os.path.join(stage, inp))
    out = read_pcap(os.path.join(rundir, "out.pcap"))
    roce.write_pcap(os.path.join(stage, "expect-out.pcap"), out)
    cqes = got["cqes"]
    exp = {
        "input": inp,
        "recorded": {
            "by": "mwpath record mode (test/pcap/run.py --record)",
            "mwpath": mwpath_version(args.mwpath),
            "date": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"),
            "from": {"input": os.path.basename(args.input),
                     "config": os.path.basename(args.config)},
            "note": "what mwpath did, not what the spec requires: review before "
                    "committing",
        },
        "memory": {i: memory_runs(region_fill(secs, i), b)
                   for i, b in sorted(got["mr"].items(), key=lambda x: int(x[0]))},
        "qps": {"%#x" % q: {"state": s} for q, s in sorted(got["qps"].items())},
        "keys": {"live": sorted(got["live"]),
                 "dead": sorted(named_keys(frames) - got["live"])},
        "completions": {"send": [e for e in cqes if not e["opcode"].startswith("recv")],
                        "recv": [e for e in cqes if e["opcode"].startswith("recv")]},
        "port": got["port"],
    }
    with open(os.path.join(stage, "expect.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write("\n")

    # the case must replay as it stands: a run that differs from run to
    # run (random keys or PSNs) makes no regression case
    d, e2, i2, c2 = load_case(os.path.dirname(stage), name)
    errs, kept = replay(args.mwpath, d, e2, i2, c2, Keep(work), "replay")
    if errs:
        print("%s: a second run differs from the first:" % name)
        for e in errs:
            print("    " + e)
        for line in kept_text(kept, " (the replay)") if args.keep is not None else []:
            print("    " + line)
        raise Error("not recorded: mwpath does not do the same twice with this "
                    "configuration (random keys or PSNs? [security] keys = "
                    "sequential, or pin rq_psn, sq_psn and the keys)")
    return exp, out


def record(args):
    """--record: run mwpath once on the capture and configuration, write
    down what it did as a case, check that the case replays, and say what
    was recorded."""
    name, cases_dir = args.record, args.cases_dir or RECORDED
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", name):
        raise Error("--record %s: a case name is letters, digits, '_', '.', '-'" % name)
    if same_dir(cases_dir, HERE) and not args.force:
        raise Error("refusing to record into %s: the suite's own cases are made by "
                    "gen_cases.py from the spec, not recorded (--cases-dir DIR, or "
                    "--force)" % HERE)
    if not same_dir(cases_dir, HERE) and os.path.isdir(os.path.join(HERE, name)):
        raise Error("--record %s: the suite has a case of that name; meson test "
                    "names must differ" % name)
    dest = os.path.join(cases_dir, name)
    if os.path.exists(dest) and not args.force:
        raise Error("%s exists (--force replaces it)" % dest)
    for opt, p in (("--input", args.input), ("--config", args.config)):
        if not p:
            raise Error("--record needs %s" % opt)
        if not os.path.isfile(p):
            raise Error("%s %s: no such file" % (opt, p))
    frames = read_pcap(args.input)
    if not frames:
        raise Error("--input %s: no frames" % args.input)
    check_mwpath(args.mwpath)

    # the first run's files and the case as made: under --keep's directory
    # (kept when recording fails) or a temporary one
    keep = Keep(args.keep) if args.keep is not None else None
    work = keep.rundir(name) if keep else tempfile.mkdtemp(prefix="mwpath-record-")
    done = False
    try:
        exp, out = record_in(args, name, work, frames)
        os.makedirs(cases_dir, exist_ok=True)
        if os.path.exists(dest):
            shutil.rmtree(dest)
        shutil.copytree(os.path.join(work, "case", name), dest)
        done = True
    except Error as e:
        if keep:
            e.kept = os.path.join(work, "run")
        raise
    finally:
        if done or not keep:
            shutil.rmtree(work, ignore_errors=True)
        if keep:
            keep.close()

    mem = ", ".join("mr %s: %s" % (i, "%d bytes changed in %d run%s" % (
        sum(len(h) // 2 for _, h in m["changed"]), len(m["changed"]),
        "s" if len(m["changed"]) > 1 else "")
        if m["changed"] else "unchanged") for i, m in exp["memory"].items()) or "no regions"
    port = exp["port"]
    drops = ", ".join("%s %d" % rn for rn in sorted(port["drop"].items()))
    print("recorded %s in %s (%s):" % (name, dest, exp["recorded"]["mwpath"]))
    print("  in:          %d frames (%s)" % (len(frames), exp["input"]))
    print("  out:         %d frames (expect-out.pcap)" % len(out))
    print("  memory:      %s" % mem)
    print("  qps:         %s" % (", ".join("%s %s" % (q, v["state"])
                                           for q, v in exp["qps"].items()) or "none"))
    print("  keys:        %d live, %d named by the traffic and dead" % (
        len(exp["keys"]["live"]), len(exp["keys"]["dead"])))
    print("  completions: %d send, %d recv" % (len(exp["completions"]["send"]),
                                               len(exp["completions"]["recv"])))
    print("  port:        %s%s" % (", ".join(
        "%s %d" % (k, port[k]) for k in PORT_COUNTERS.values() if k in port),
        " (%s)" % drops if drops else ""))
    print("It replays as recorded.  These are mwpath's own answers, not the spec's:")
    print("review %s/expect.json and expect-out.pcap (mwpath-inspect) before" % dest)
    if same_dir(cases_dir, RECORDED):
        print("committing (git add %s), then: meson setup --reconfigure BUILD &&"
              % os.path.relpath(dest, SRC))
        print("meson test -C BUILD %s" % name)
    else:
        print("committing, then: run.py --cases-dir %s MWPATH %s" % (cases_dir, name))
    return 0


# ---------------------------------------------------------------- main

def check_mwpath(mwpath):
    if not os.path.isfile(mwpath) or not os.access(mwpath, os.X_OK):
        raise Error("%s: no such executable (build it: ninja -C build)" % mwpath)


EPILOG = """\
examples:
  run.py build/app/mwpath                      every case of test/pcap/
  run.py build/app/mwpath vec_rc_write_only    one case
  run.py --keep build/app/mwpath               a failed case's files and
                                               mwpath command line kept
  run.py --keep=/tmp/k build/app/mwpath        ... under /tmp/k/CASE
  run.py --record my_write --input my.pcap --config my.ini build/app/mwpath
                                               a case from your own capture,
                                               in test/pcap-recorded/my_write
  run.py --cases-dir test/pcap-recorded build/app/mwpath my_write
  run.py --list                                the cases' names

exit status: 0 all passed, 1 a case failed, 2 a usage error or a case
that could not be run (no mwpath, no such case, bad expect.json, a missing
capture, mwpath failing).  MWPATH_SHARED: the directory holding captures/
(default: ../shared beside the source root).  The how-to:
docs/regression-cases.md."""


class Formatter(argparse.RawDescriptionHelpFormatter):
    def _format_action_invocation(self, action):
        if action.dest == "keep":
            return "--keep[=DIR]"
        return super()._format_action_invocation(action)


def parser():
    p = argparse.ArgumentParser(
        prog="run.py", allow_abbrev=False, epilog=EPILOG, formatter_class=Formatter,
        usage="%(prog)s [--cases-dir DIR] [--keep[=DIR]] [--list]\n"
              "              [--record CASE --input PCAP --config INI [--force]]\n"
              "              MWPATH [CASE...]",
        description="Replay pcap regression cases through mwpath and a net_pcap port "
                    "and report every mismatch by frame and field; or record a case "
                    "from a capture and a configuration.")
    p.add_argument("mwpath", metavar="MWPATH", nargs="?",
                   help="the mwpath binary (build/app/mwpath)")
    p.add_argument("cases", metavar="CASE", nargs="*",
                   help="cases to run (default: all of the cases directory)")
    p.add_argument("--cases-dir", metavar="DIR",
                   help="the cases' directory (default: test/pcap/; with --record: "
                        "test/pcap-recorded/)")
    p.add_argument("--keep", metavar="DIR", nargs="?", const="",
                   help="keep a failed run's directory (out.pcap, dump/, stdout.txt, "
                        "stderr.txt, command.txt) under DIR, or a new directory in "
                        "/tmp, and print it with the mwpath command")
    p.add_argument("--list", action="store_true", help="print the cases' names and exit")
    p.add_argument("--record", metavar="CASE",
                   help="run mwpath once on --input with --config and write what it "
                        "did as the case CASE (then check that it replays)")
    p.add_argument("--input", metavar="PCAP", help="with --record: the traffic")
    p.add_argument("--config", metavar="INI", help="with --record: the configuration")
    p.add_argument("--force", action="store_true",
                   help="with --record: replace an existing case, or record into "
                        "test/pcap/")
    return p


def parse_args(argv):
    # --keep takes its directory only as --keep=DIR (getopt_long's optional
    # argument), so that "--keep build/app/mwpath" keeps the binary a binary
    argv = ["--keep=" if a == "--keep" else a for a in argv]
    p = parser()
    args = p.parse_args(argv)
    if args.list:
        return args
    if not args.mwpath:
        p.error("MWPATH is required: the mwpath binary, e.g. build/app/mwpath")
    if args.record:
        if args.cases:
            p.error("--record makes one case; no CASE arguments")
        if not args.input or not args.config:
            p.error("--record needs --input PCAP and --config INI")
    elif args.input or args.config or args.force:
        p.error("--input, --config and --force go with --record")
    return args


def main(argv):
    args = parse_args(argv[1:])
    try:
        return run(args)
    except BrokenPipeError:
        # "run.py --list | head": the reader has gone, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("run.py: interrupted", file=sys.stderr)
        return 130


def run(args):
    try:
        if args.list:
            for n in case_names(args.cases_dir or HERE):
                print(n)
            return 0
        if args.record:
            return record(args)
        return replay_all(args)
    except Error as e:
        for line in kept_text(e.kept) if getattr(e, "kept", None) else []:
            print(line)
        sys.stdout.flush()
        print("run.py: error: %s" % e, file=sys.stderr)
        return 2


def replay_all(args):
    check_mwpath(args.mwpath)
    cases_dir = args.cases_dir or HERE
    names = args.cases or case_names(cases_dir)
    # a name that is no case stops the run before any case runs
    for n in names:
        if not os.path.isdir(os.path.join(cases_dir, n)):
            load_case(cases_dir, n)
    keep = Keep(args.keep) if args.keep is not None else None
    failed = errors = 0
    for n in names:
        tag = ""
        try:
            d, exp, inp, cfg = load_case(cases_dir, n)
            tag = " (recorded)" if "recorded" in exp else ""
            errs, kept = replay(args.mwpath, d, exp, inp, cfg, keep, n)
        except Error as e:
            print("%-55s %s" % (n, "ERROR" + tag))
            print("    " + str(e))
            for line in kept_text(e.kept) if getattr(e, "kept", None) else []:
                print("    " + line)
            errors += 1
            continue
        print("%-55s %s" % (n, ("FAIL" if errs else "ok") + tag))
        for e in errs:
            print("    " + e)
        for line in kept_text(kept) if kept else []:
            print("    " + line)
        failed += bool(errs)
    if keep:
        keep.close()
    print("%d cases, %d failed%s" % (len(names), failed,
                                      ", %d could not run" % errors if errors else ""))
    if (failed or errors) and not keep:
        print("(--keep keeps a failed run's files and its mwpath command line)")
    return 2 if errors else 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
