# SPDX-License-Identifier: BSD-3-Clause
"""Frames built by the independent generator (test/gen/roce.py: scapy for
L2-L4, its own header packing and ICRC) for what no capture has -- atomics
and their ACKs, SEND with invalidate, NAKs and RNR NAKs, multi-packet READ
responses, WRITE with immediate, IPv6, FECN and ECN-CE, VLAN, UD, CNP --
parse in mwpath to exactly the fields the script put in, and their ICRCs
verify.  The generator's ICRC is itself checked on real IPv6 traffic."""
import os
import struct
import tempfile
import unittest

from common import CAPTURES, inspect, inspect_form
import roce

V6 = dict(ipv6=True, src="fd77:77::14", dst="fd77:77::12")


def cases():
    """(frame kwargs, expected inspector fields) pairs."""
    c = []

    def add(opcode, expect, **kw):
        c.append((dict(opcode=opcode, **kw), dict(expect, opcode=opcode)))

    for v in ({}, V6):
        ip = 6 if v else 4
        add(0x13, {"ip": ip, "atomiceth": {"va": 0x7f0000001000, "rkey": 0x1234,
                                           "swap_add": 0xfeedface, "compare": 7}},
            qpn=0x11, psn=1, eh={"atmeth": {"va": 0x7f0000001000, "rkey": 0x1234,
                                           "swap_add": 0xfeedface, "compare": 7}}, **v)
        add(0x14, {"atomiceth": {"va": 8, "rkey": 0xffffffff,
                                 "swap_add": 2**64 - 1, "compare": 0}},
            qpn=0x11, psn=2, eh={"atmeth": {"va": 8, "rkey": 0xffffffff,
                                           "swap_add": 2**64 - 1, "compare": 0}}, **v)
        add(0x12, {"aeth": {"syndrome": 0, "msn": 5}, "atomicacketh": {"orig": 2**63}},
            qpn=0x22, psn=3, eh={"aeth": {"syndrome": 0, "msn": 5},
                                 "atmack": {"orig": 2**63}}, **v)
        add(0x17, {"ieth": {"rkey": 0xabcdef01}, "payload_len": 13, "pad": 3},
            qpn=0x11, psn=4, payload=b"x" * 13, eh={"ieth": {"rkey": 0xabcdef01}}, **v)
        add(0x16, {"ieth": {"rkey": 0x100}, "payload_len": 0},
            qpn=0x11, psn=5, eh={"ieth": {"rkey": 0x100}}, **v)
        for syn in (0x60, 0x61, 0x62, 0x63, 0x20 | 0x12, 0x1f):
            add(0x11, {"aeth": {"syndrome": syn, "msn": 0xfffffe}},
                qpn=0x22, psn=0xffffff, eh={"aeth": {"syndrome": syn, "msn": 0xfffffe}}, **v)
        for op, n in ((0x0d, 1024), (0x0e, 1024), (0x0f, 952), (0x10, 1)):
            e = {"payload_len": n, "pad": (-n) % 4}
            kw = {}
            if op != 0x0e:
                e["aeth"] = {"syndrome": 0x1f, "msn": 9}
                kw["eh"] = {"aeth": {"syndrome": 0x1f, "msn": 9}}
            add(op, e, qpn=0x22, psn=10 + op, payload=(bytes(range(256)) * 4)[:n],
                **kw, **v)
        add(0x0b, {"reth": {"va": 2**64 - 8, "rkey": 0x101, "dmalen": 8},
                   "immdt": 0xdeadbeef, "payload_len": 8},
            qpn=0x11, psn=20, payload=bytes(8),
            eh={"reth": {"va": 2**64 - 8, "rkey": 0x101, "dmalen": 8},
                "immdt": {"imm": 0xdeadbeef}}, **v)
        add(0x09, {"immdt": 1, "payload_len": 3, "pad": 1},
            qpn=0x11, psn=21, payload=b"abc", eh={"immdt": {"imm": 1}}, **v)
        add(0x2b, {"reth": {"va": 0, "rkey": 0, "dmalen": 0}, "immdt": 2},
            qpn=0x11, psn=22, eh={"reth": {"va": 0, "rkey": 0, "dmalen": 0},
                                  "immdt": {"imm": 2}}, **v)
        add(0x65, {"deth": {"qkey": 0x11111111, "sqpn": 0x1}, "immdt": 3},
            qpn=1, psn=23, payload=b"ud", eh={"deth": {"qkey": 0x11111111, "sqpn": 1},
                                              "immdt": {"imm": 3}}, **v)
        add(0x0a, {"fecn": True, "becn": True, "ackreq": True, "se": True},
            qpn=0x11, psn=24, payload=b"ecn", fecn=True, becn=True, ackreq=True,
            se=True, eh={"reth": {"va": 1, "rkey": 2, "dmalen": 3}}, **v)
        add(0x0a, {"ecn": 3}, qpn=0x11, psn=25, payload=b"ce!!",
            eh={"reth": {"va": 1, "rkey": 2, "dmalen": 4}},
            **(dict(v, tclass=0x03, flow=0xabcde) if v else dict(tos=0x03)))
        add(0x81, {"becn": True, "payload_len": 0}, qpn=0x11, psn=0, becn=True, **v)
    add(0x04, {"vlan": 42, "payload_len": 4}, qpn=0x11, psn=30, payload=b"vlan",
        vlan=42)
    return c


class ScapyFrames(unittest.TestCase):
    def test_generator_icrc_matches_real_ipv4_and_ipv6_traffic(self):
        from scapy.utils import RawPcapReader
        for name in ("perf-atomic_fa-ipv6.pcap", "perf-read.pcap"):
            n = 0
            rd = RawPcapReader(os.path.join(CAPTURES, "rxe", name))
            frames = [data for data, _ in rd]
            rd.close()
            for data in frames:
                et = struct.unpack("!H", data[12:14])[0]
                if et not in (0x0800, 0x86dd) or len(data) < 60:
                    continue
                v6 = et == 0x86dd
                proto = data[14 + 6] if v6 else data[14 + 9]
                l4 = 14 + (40 if v6 else 20)
                if proto != 17 or struct.unpack("!H", data[l4 + 2:l4 + 4])[0] != 4791:
                    continue
                ulen = struct.unpack("!H", data[l4 + 4:l4 + 6])[0]
                end = l4 + ulen
                want = struct.unpack("<I", data[end - 4:end])[0]
                self.assertEqual(roce.icrc(data[14:end - 4], v6), want)
                n += 1
            self.assertGreater(n, 100, name)

    def test_generated_frames_parse_to_the_fields_put_in(self):
        cs = cases()
        self.assertEqual(len(cs), 45)
        frames = [roce.frame(**kw) for kw, _ in cs]
        frames.append(roce.frame(0x14, 0x11, 99, icrc_ok=False,
                                 eh={"atmeth": {"va": 8, "rkey": 1, "swap_add": 1,
                                                "compare": 0}}, **V6))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "gen.pcap")
            roce.write_pcap(path, frames)
            got = inspect(path)
        self.assertEqual(len(got), len(frames))
        for (kw, want), g in zip(cs, got):
            where = f"frame {g['frame']} {roce.OPCODES[kw['opcode']][0]}"
            self.assertTrue(g["roce"], where)
            self.assertNotIn("error", g, where)
            self.assertEqual(g["icrc"], "ok", where)
            # keys, QPNs, PSNs, addresses, syndromes in hex strings
            self.assertEqual(g["qpn"], "%#x" % kw["qpn"], where)
            self.assertEqual(g["psn"], "0x%06x" % kw["psn"], where)
            self.assertEqual(g["opcode_name"], roce.OPCODES[kw["opcode"]][0], where)
            for k, v in inspect_form(want).items():
                self.assertEqual(g.get(k), v, f"{where}: {k}")
        self.assertEqual(got[-1]["icrc"], "bad")


if __name__ == "__main__":
    unittest.main(verbosity=2)
