# SPDX-License-Identifier: BSD-3-Clause
"""Real traffic: every RoCEv2 frame of valid-icrc/ and rxe/ parses and its
ICRC verifies; every RoCE frame of bad-icrc/ is reported bad; per-file
counts and opcode histograms are those of ../shared/captures/README.md;
opcode, QPN and PSN agree with tshark's decode of the same frames."""
import collections
import os
import unittest

from common import CAPTURES, addr, inspect, key, num, psn, qpn, tshark

# From ../shared/captures/README.md: RoCEv2 frames and opcode histograms.
VALID = {
    "nvme__document__nvme-discover.pcap":
        (61, {4: 22, 6: 2, 7: 2, 8: 2, 10: 1, 12: 1, 16: 1, 17: 25, 100: 5}),
    "nvme__document__nvme-discover2.pcap":
        (31, {4: 12, 12: 1, 16: 1, 17: 12, 100: 5}),
    "nvme__document__nvme-rdma-25echoTo27.pcap":
        (45, {0: 2, 1: 3, 2: 2, 4: 18, 17: 20}),
    "nvme__document__nvme-rdma-idle.pcap": (4, {4: 2, 17: 2}),
    "soft-roce__02-2-write__ibdump__write.pcap":
        (17, {4: 4, 10: 2, 17: 6, 100: 5}),
    "soft-roce__rdma-write-read__ibdump__read2.pcap":
        (13, {4: 2, 10: 1, 12: 1, 16: 1, 17: 3, 100: 5}),
    "soft-roce__send_recv-ibdump__send.pcap": (9, {4: 2, 17: 2, 100: 5}),
    "soft-roce__mellanox__doc__ib_send_bw_over_roce.pcap": (10, {4: 5, 17: 5}),
    "soft-roce__mellanox__doc__rocev2_test.pcap":
        (708, {0: 120, 1: 265, 2: 148, 17: 175}),
    "soft-roce__mellanox__doc__rocev2-2_test.pcap":
        (641, {0: 129, 1: 236, 2: 117, 17: 159}),
    # 624 RoCE frames, of which 323 are RoCEv1 (EtherType 0x8915)
    "soft-roce__mellanox__doc__rocev1_test.pcap": (301, None),
}
RXE = {
    "perf-read.pcap": (200, {12: 50, 13: 50, 14: 50, 15: 50}),
    "perf-read-ipv6.pcap": (200, {12: 50, 13: 50, 14: 50, 15: 50}),
    "perf-atomic_fa.pcap": (400, {20: 200, 18: 200}),
    "perf-atomic_fa-ipv6.pcap": (400, {20: 200, 18: 200}),
    "perf-atomic_cs.pcap": (400, {19: 200, 18: 200}),
    "perf-atomic_cs-ipv6.pcap": (400, {19: 200, 18: 200}),
    "perf-send.pcap": (3250, None),
    "perf-send-ipv6.pcap": (3250, None),
}
BAD = {
    "dc__dc-small.pcap": 19,
    "dc__dc-small2.pcap": 29,
    "dc__rc-small.pcap": 21,
    "uc__uc_sg_send__uc-sg.pcap": 17,
    "uccl__uccl-mini__p2p-test2__rdma-nccl2.pcap": 509,
}


def roce(frames):
    return [f for f in frames if f["roce"]]


class Captures(unittest.TestCase):
    def check_against_tshark(self, path, frames):
        ts = tshark(path)
        for f in roce(frames):
            t = ts[f["frame"]]
            where = f"{os.path.basename(path)} frame {f['frame']}"
            self.assertEqual(num(t["infiniband.bth.opcode"]), f["opcode"], where)
            self.assertEqual(num(t["infiniband.bth.destqp"]), qpn(f["qpn"]), where)
            self.assertEqual(num(t["infiniband.bth.psn"]), psn(f["psn"]), where)
            if "reth" in f and t["infiniband.reth.r_key"]:
                self.assertEqual(num(t["infiniband.reth.va"]), addr(f["reth"]["va"]), where)
                self.assertEqual(num(t["infiniband.reth.r_key"]), key(f["reth"]["rkey"]), where)
                self.assertEqual(num(t["infiniband.reth.dmalen"]), f["reth"]["dmalen"], where)
            if "aeth" in f and t["infiniband.aeth.msn"]:
                self.assertEqual(num(t["infiniband.aeth.msn"]), f["aeth"]["msn"], where)

    def check_good(self, folder, table):
        for name, (count, hist) in table.items():
            with self.subTest(file=name):
                path = os.path.join(CAPTURES, folder, name)
                frames = inspect(path)
                r = roce(frames)
                self.assertEqual(len(r), count)
                bad = [f["frame"] for f in r if f["icrc"] != "ok" or "error" in f]
                self.assertEqual(bad, [], "frames failing parse or ICRC")
                if hist is not None:
                    self.assertEqual(dict(collections.Counter(f["opcode"] for f in r)), hist)
                self.check_against_tshark(path, frames)

    def test_valid_icrc_captures_parse_and_verify(self):
        self.check_good("valid-icrc", VALID)

    def test_rxe_captures_parse_and_verify_ipv4_and_ipv6(self):
        self.check_good("rxe", RXE)
        v6 = roce(inspect(os.path.join(CAPTURES, "rxe", "perf-read-ipv6.pcap")))
        self.assertTrue(all(f["ip"] == 6 for f in v6))

    def test_multi_packet_read_responses_carry_the_mtu(self):
        frames = roce(inspect(os.path.join(CAPTURES, "rxe", "perf-read.pcap")))
        first = [f for f in frames if f["opcode"] == 13]
        last = [f for f in frames if f["opcode"] == 15]
        self.assertTrue(all(f["payload_len"] == 1024 for f in first))
        self.assertTrue(all(f["payload_len"] == 3000 - 2048 for f in last))

    def test_bad_icrc_captures_are_all_reported_bad(self):
        for name, count in BAD.items():
            with self.subTest(file=name):
                path = os.path.join(CAPTURES, "bad-icrc", name)
                frames = inspect(path)
                r = roce(frames)
                self.assertEqual(len(r), count)
                self.assertEqual([f["frame"] for f in r if f["icrc"] != "bad"], [])
                self.check_against_tshark(path, frames)

    def test_frames_with_pad_parse(self):
        frames = roce(inspect(os.path.join(
            CAPTURES, "valid-icrc", "soft-roce__rdma-write-read__ibdump__read2.pcap")))
        self.assertEqual(len([f for f in frames if f.get("pad", 0) > 0]), 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
