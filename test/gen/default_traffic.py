# SPDX-License-Identifier: BSD-3-Clause
"""Make conf/default-traffic.pcap, the traffic of mwpath's default run, and
conf/default-traffic.expect.json, what the spec says a port configured as
conf/default.ini must do with it: per-reason counts and the number of
answers.  build() also returns the answers themselves, which the CLI test
compares byte for byte with what mwpath writes.

The requests to QP 0x11 arrive in one burst (fewer than 32 frames), so
their ACKs are coalesced as memory-windows.md and the responder docs say.
Usage: /usr/bin/python3 test/gen/default_traffic.py OUT.pcap OUT.json
"""
import json
import struct
import sys

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

import roce
import resp_vectors as rv

PORT_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
PORT_V4, PEER_V4 = "192.0.2.1", "192.0.2.2"
PORT_V6, PEER_V6 = "2001:db8::1", "2001:db8::2"
QPN = 0x11


def build():
    frames, expect, answers = [], {}, []

    def add(f, reason):
        frames.append(f)
        expect[reason] = expect.get(reason, 0) + 1

    mem = rv.pattern()
    # to QP 0x11, in PSN order: accepted
    w1 = bytes(range(64))
    add(rv.write(0x0a, 0, rv.MR_IOVA + 0x40, rv.MR_RKEY, w1), "accepted")
    w2 = b"written through the window"
    add(rv.write(0x0a, 1, rv.MW_VA, rv.MW_RKEY, w2, ackreq=True), "accepted")
    add(rv.req(0x0c, 2, eh={"reth": {"va": rv.MR_IOVA + 0x40, "rkey": rv.MR_RKEY,
                                     "dmalen": 64}}), "accepted")
    add(rv.atomic(0x14, 3, rv.MW_VA + 0x100, rv.MW_RKEY, 10), "accepted")
    add(rv.req(0x04, 4, payload=b"hello, receiver"), "accepted")
    add(rv.req(0x17, 5, payload=b"bye", eh={"ieth": {"rkey": rv.MW_RKEY}}), "accepted")
    add(rv.write(0x0a, 6, rv.MW_VA, rv.MW_RKEY, b"too late"), "accepted")
    mem[0x40:0x80] = w1
    mem[0x100:0x100 + len(w2)] = w2
    orig = struct.unpack_from("<Q", mem, 0x200)[0]
    answers = [rv.ack(1, 2),                        # the two WRITEs, coalesced
               rv.read_resp(0x10, 2, 3, mem[0x40:0x80]),
               rv.atomic_ack(3, 4, orig),
               rv.ack(5, 6),                        # SEND and SEND_WITH_INV
               rv.ack(6, 6, syn=0x62)]              # the dead key

    # not for QP 0x11
    add(roce.frame(0x0a, 0x12, 0, payload=bytes(16), ipv6=True, src=PEER_V6,
                   dst=PORT_V6, eh={"reth": {"va": 0, "rkey": 1, "dmalen": 16}}),
        "unknown_qp")
    add(roce.frame(0x0a, QPN, 7, payload=bytes(16), icrc_ok=False,
                   eh={"reth": {"va": 0, "rkey": 1, "dmalen": 16}}), "bad_icrc")
    add(roce.frame(0x0a, QPN, 7, payload=bytes(16), dst="192.0.2.99",
                   eh={"reth": {"va": 0, "rkey": 1, "dmalen": 16}}), "not_for_us")
    # a CNP for QP 0x11: its congestion control's (counted, and DCQCN
    # slows what the QP sends; it sends nothing here)
    add(roce.frame(0x81, QPN, 0, becn=True, eh={"cnp": {}}), "accepted")
    # an ARP request for the port's address: answered (RFC 826), after the
    # RoCE answers the frames before it made
    add(bytes(Ether(src=PEER_MAC, dst="ff:ff:ff:ff:ff:ff") /
              ARP(psrc=PEER_V4, pdst=PORT_V4, hwsrc=PEER_MAC)), "control")
    answers.append(bytes(Ether(src=PORT_MAC, dst=PEER_MAC) /
                         ARP(op=2, hwsrc=PORT_MAC, psrc=PORT_V4, hwdst=PEER_MAC,
                             pdst=PEER_V4)))
    add(bytes(Ether(src=PEER_MAC, dst=PORT_MAC) /
              IP(src=PEER_V4, dst=PORT_V4) / UDP(sport=5353, dport=53) /
              bytes(12)), "not_roce_port")
    add(bytes(Ether(src=PEER_MAC, dst=PORT_MAC) /
              IP(src=PEER_V4, dst=PORT_V4, options=b"\x01\x01\x01\x00") /
              UDP(sport=49152, dport=4791) / bytes(16)), "ipv4_options")
    full = roce.frame(0x0a, QPN, 7, payload=bytes(64),
                      eh={"reth": {"va": 0, "rkey": 1, "dmalen": 64}})
    add(full[:50], "ip_bad_len")        # truncated in flight
    accepted = expect.pop("accepted")
    control = expect.pop("control")
    return frames, {"frames": len(frames), "accepted": accepted, "control": control,
                    "drop": expect, "answers": len(answers)}, answers


if __name__ == "__main__":
    frames, expect, _ = build()
    roce.write_pcap(sys.argv[1], frames)
    with open(sys.argv[2], "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")
