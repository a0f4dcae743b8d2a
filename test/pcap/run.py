# SPDX-License-Identifier: BSD-3-Clause
"""Replay every case of test/pcap/ through the real mwpath binary and a
net_pcap port, and compare with what the case expects (gen_cases.py made
it from the spec): the frames sent, field by field; the final bytes of
each region; the completions of each queue, in order; QP states; live and
dead keys; port counters.  A mismatch names the case, the frame number,
the field, and the expected and received values.

Usage: /usr/bin/python3 test/pcap/run.py MWPATH [CASE...]
Environment: MWPATH_SHARED (default: ../shared beside the source root)
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gen"))

import roce  # noqa: E402

CAPTURES = (os.path.join(os.environ["MWPATH_SHARED"], "captures")
            if "MWPATH_SHARED" in os.environ else
            os.path.join(HERE, "..", "..", "..", "shared", "captures"))
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
            errs.append("frame %d: %s: expected %s, got %s" % (i + 1, k, v, g))


def read_pcap(path):
    from scapy.utils import RawPcapReader
    if not os.path.exists(path):
        return []
    rd = RawPcapReader(path)
    frames = [bytes(d) for d, _ in rd]
    rd.close()
    return frames


def summary_counts(text):
    """{'packets in': n, ..., 'drop': {reason: n}} from mwpath's summary."""
    c, drop = {}, {}
    for line in text.splitlines():
        m = re.match(r"^  (packets in|packets out|accepted|control|dropped)\s+(\d+)", line)
        if m:
            c[m.group(1)] = int(m.group(2))
        m = re.match(r"^    ([a-z_0-9]+)\s+(\d+)\s", line)
        if m:
            drop[m.group(1)] = int(m.group(2))
    c["drop"] = drop
    return c


def by_queue(cqes):
    q = {}
    for e in cqes:
        kind = "recv" if e["opcode"].startswith("recv") else "send"
        q.setdefault((e["qp_num"], kind), []).append(e)
    return q


def run_case(mwpath, name):
    d = os.path.join(HERE, name)
    with open(os.path.join(d, "expect.json")) as f:
        exp = json.load(f)
    inp = exp["input"]
    inp = (os.path.join(CAPTURES, inp[len("captures/"):]) if inp.startswith("captures/")
           else os.path.join(d, inp))
    errs = []
    with tempfile.TemporaryDirectory() as t:
        out, dump = os.path.join(t, "out.pcap"), os.path.join(t, "dump")
        cpus = "0-1" if os.cpu_count() > 1 else "0"
        cmd = [mwpath, "-l", cpus, "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
               "--no-telemetry", "--log-level=lib.eal:warning",
               "--log-level=pmd.net.pcap:warning",
               "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out), "--",
               "--config", os.path.join(d, "config.ini"), "--idle-exit", "100",
               "--dump-dir", dump]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return ["mwpath exited %d: %s" % (r.returncode, r.stderr.strip()[-500:])]
        compare_frames(read_pcap(os.path.join(d, "expect-out.pcap")), read_pcap(out), errs)
        with open(os.path.join(dump, "objects.json")) as f:
            objs = json.load(f)
        with open(os.path.join(dump, "completions.json")) as f:
            comps = json.load(f)
        for idx, m in exp.get("memory", {}).items():
            want = bytearray(i & 0xff for i in range(m["length"])) \
                if m["fill"] == "pattern" else bytearray(m["length"])
            for off, hexbytes in m["changed"]:
                b = bytes.fromhex(hexbytes)
                want[off:off + len(b)] = b
            with open(os.path.join(dump, "mr-%s.bin" % idx), "rb") as f:
                got = f.read()
            diff = [i for i in range(max(len(want), len(got)))
                    if i >= len(want) or i >= len(got) or want[i] != got[i]]
            if diff:
                errs.append("mr %s: %d bytes differ, first at offset %#x: expected %s, got %s"
                            % (idx, len(diff), diff[0], want[diff[0]:diff[0] + 8].hex(),
                               got[diff[0]:diff[0] + 8].hex()))
        qps = {"%#x" % q["qpn"]: q for q in objs["qps"]}
        for qpn, want in exp.get("qps", {}).items():
            got = qps.get(qpn, {}).get("state")
            if got != want["state"]:
                errs.append("qp %s: state: expected %s, got %s" % (qpn, want["state"], got))
        if "keys" in exp:
            live = set(objs["live_keys"])
            if live != set(exp["keys"]["live"]):
                errs.append("live keys: expected %s, got %s" % (
                    sorted(hex(k) for k in exp["keys"]["live"]), sorted(hex(k) for k in live)))
            for k in exp["keys"]["dead"]:
                if k in live:
                    errs.append("key %#x: expected dead, is live" % k)
        if "completions" in exp:
            got = by_queue([e for cq in comps["cqs"] for e in cq["completions"]])
            want = by_queue(exp["completions"]["send"] + exp["completions"]["recv"])
            for q in sorted(set(got) | set(want)):
                if got.get(q, []) != want.get(q, []):
                    errs.append("completions of qp %#x %s queue: expected %s, got %s" % (
                        q[0], q[1], want.get(q, []), got.get(q, [])))
        if "port" in exp:
            c = summary_counts(r.stdout)
            for k, v in exp["port"].items():
                if c.get(k) != v:
                    errs.append("port counter %s: expected %s, got %s" % (k, v, c.get(k)))
    return errs


def main(argv):
    mwpath = argv[1]
    names = argv[2:] or sorted(n for n in os.listdir(HERE)
                               if os.path.exists(os.path.join(HERE, n, "expect.json")))
    failed = 0
    for n in names:
        errs = run_case(mwpath, n)
        print("%-55s %s" % (n, "ok" if not errs else "FAIL"))
        for e in errs:
            print("    " + e)
        failed += bool(errs)
    print("%d cases, %d failed" % (len(names), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
