# SPDX-License-Identifier: BSD-3-Clause
"""Frames made by libmwpath's builders (every opcode of the table, IPv4 and
IPv6, with and without VLAN, and the responder's ACK/NAK/RNR NAK, READ
responses and ATOMIC ACK) decode in tshark with no malformed field and the
fields asked for; their IPv4 checksums and lengths are right; their ICRCs
verify in scapy (IPv4) and in the independent generator (IPv6)."""
import json
import os
import struct
import subprocess
import tempfile
import unittest

from common import BUILD, num, tshark
import roce

from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader


class Builders(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.pcap = os.path.join(cls.tmp.name, "built.pcap")
        out = subprocess.run([os.path.join(BUILD, "test", "tools", "build_frames"),
                              cls.pcap], check=True, capture_output=True,
                             text=True).stdout
        cls.asked = [json.loads(line) for line in out.splitlines()]
        rd = RawPcapReader(cls.pcap)
        cls.frames = [data for data, _ in rd]
        rd.close()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_opcode_and_helper_was_built(self):
        self.assertEqual(len(self.frames), len(self.asked))
        self.assertEqual({a["opcode"] for a in self.asked}, set(roce.OPCODES))

    def test_tshark_decodes_every_frame_without_malformed_fields(self):
        ts = tshark(self.pcap)
        for a in self.asked:
            t = ts[a["frame"]]
            where = f"frame {a['frame']} opcode {a['opcode']:#x} ip{a['ip']}"
            self.assertEqual(t["_ws.malformed"], "", where)
            if a["ip"] == 6 and not a["udp6_csum"]:
                # RoCEv2's zero UDP checksum, which tshark calls illegal
                # over IPv6 (RFC 8200); Linux rxe sends the same.
                self.assertEqual(num(t["udp.checksum"]), 0, where)
            else:
                self.assertNotEqual(t["_ws.expert.severity"], "8388608", where)  # error
            if a["udp6_csum"]:
                self.assertEqual(t["udp.checksum.status"], "1", where)   # good
            if a["opcode"] == 0x81:
                continue    # tshark does not know CNP
            self.assertEqual(num(t["infiniband.bth.opcode"]), a["opcode"], where)
            self.assertEqual(num(t["infiniband.bth.destqp"]), a["qpn"], where)
            self.assertEqual(num(t["infiniband.bth.psn"]), a["psn"], where)
            self.assertEqual(t["infiniband.bth.a"] in ("1", "True"), a["ackreq"], where)
            if a["opcode"] == 0x1d:
                # tshark 4.0 knows the BTH of RDMA ATOMIC WRITE (IBA 1.5)
                # but not the opcode ("Unknown (29)"): the RETH and the
                # value are one "Unknown/Vendor Specific Data" field
                continue
            hdrs = roce.OPCODES[a["opcode"]][1]
            if "reth" in hdrs:
                self.assertEqual([num(t["infiniband.reth.va"]), num(t["infiniband.reth.r_key"]),
                                  num(t["infiniband.reth.dmalen"])], a["reth"], where)
            if "aeth" in hdrs:
                self.assertEqual([num(t["infiniband.aeth.syndrome"]),
                                  num(t["infiniband.aeth.msn"])], a["aeth"], where)

    def test_headers_lengths_and_checksums(self):
        for a, f in zip(self.asked, self.frames):
            where = f"frame {a['frame']}"
            pkt = Ether(f)
            hdrs = roce.OPCODES[a["opcode"]][1]
            hlen = 12 + sum({"reth": 16, "aeth": 4, "atmeth": 28, "atmack": 8,
                             "immdt": 4, "ieth": 4, "deth": 8, "cnp": 16}[h] for h in hdrs)
            pad = (-a["payload_len"]) % 4
            udp_len = 8 + hlen + a["payload_len"] + pad + 4
            if a["ip"] == 4:
                ip = pkt[IP]
                want = IP(bytes(ip)[:20])
                del want.chksum
                self.assertEqual(ip.chksum, IP(bytes(want)).chksum, where)
                self.assertEqual(ip.len, 20 + udp_len, where)
            else:
                self.assertEqual(pkt[IPv6].plen, udp_len, where)
            self.assertEqual(pkt[UDP].len, udp_len, where)
            self.assertEqual(pkt[UDP].dport, 4791, where)
            body = bytes(pkt[UDP].payload)
            self.assertEqual(len(body), udp_len - 8, where)
            self.assertEqual((body[1] >> 4) & 3, pad, where)

    def test_icrc_verifies_in_scapy_ipv4_and_generator_ipv6(self):
        n4 = n6 = 0
        for a, f in zip(self.asked, self.frames):
            where = f"frame {a['frame']}"
            pkt = Ether(f)
            if a["ip"] == 4:
                ip = pkt[IP]
                body = bytes(ip[UDP].payload)
                b = BTH(body[:12]) / body[12:-4]
                p = IP(bytes(ip)[:20] + bytes(ip[UDP])[:8] + bytes(b) + b"\0\0\0\0")
                self.assertEqual(p[BTH].compute_icrc(None), f[-4:], where)
                n4 += 1
            else:
                l3 = 18 if a["vlan"] else 14
                self.assertEqual(roce.icrc(f[l3:-4], True),
                                 struct.unpack("<I", f[-4:])[0], where)
                n6 += 1
        self.assertGreater(n4, 80)
        self.assertGreater(n6, 80)


if __name__ == "__main__":
    unittest.main(verbosity=2)
