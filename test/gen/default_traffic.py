# SPDX-License-Identifier: BSD-3-Clause
"""Make conf/default-traffic.pcap, the traffic of mwpath's default run, and
conf/default-traffic.expect.json, what the spec says a port configured as
conf/default.ini must do with it (no QP is configured there yet, so every
well-formed request addressed to the port is refused as unknown QP).

Usage: /usr/bin/python3 test/gen/default_traffic.py OUT.pcap OUT.json
"""
import json
import sys

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

import roce

PORT_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
PORT_V4, PEER_V4 = "192.0.2.1", "192.0.2.2"
PORT_V6, PEER_V6 = "2001:db8::1", "2001:db8::2"
QPN = 0x11


def build():
    frames, expect = [], {}

    def add(f, reason):
        frames.append(f)
        expect[reason] = expect.get(reason, 0) + 1

    reth = {"va": 0x10000, "rkey": 0x00000101, "dmalen": 64}
    add(roce.frame(0x0a, QPN, 0, payload=bytes(range(64)), eh={"reth": reth},
                   ackreq=True), "unknown_qp")
    add(roce.frame(0x0c, QPN, 1, eh={"reth": dict(reth, dmalen=8)},
                   ackreq=True), "unknown_qp")
    add(roce.frame(0x14, QPN, 2, eh={"atmeth": {
        "va": 0x10008, "rkey": 0x101, "swap_add": 1, "compare": 0}}),
        "unknown_qp")
    add(roce.frame(0x17, QPN, 3, payload=b"hello", ipv6=True, src=PEER_V6,
                   dst=PORT_V6, eh={"ieth": {"rkey": 0x101}}), "unknown_qp")
    add(roce.frame(0x0a, QPN, 4, payload=bytes(32), vlan=5,
                   eh={"reth": dict(reth, dmalen=32)}), "unknown_qp")
    add(roce.frame(0x0a, QPN, 5, payload=bytes(16), icrc_ok=False,
                   eh={"reth": dict(reth, dmalen=16)}), "bad_icrc")
    add(roce.frame(0x0a, QPN, 6, payload=bytes(16), dst="192.0.2.99",
                   eh={"reth": dict(reth, dmalen=16)}), "not_for_us")
    add(roce.frame(0x81, QPN, 0, becn=True), "cnp")
    add(bytes(Ether(src=PEER_MAC, dst="ff:ff:ff:ff:ff:ff") /
              ARP(psrc=PEER_V4, pdst=PORT_V4)), "not_ip")
    add(bytes(Ether(src=PEER_MAC, dst=PORT_MAC) /
              IP(src=PEER_V4, dst=PORT_V4) / UDP(sport=5353, dport=53) /
              bytes(12)), "not_roce_port")
    add(bytes(Ether(src=PEER_MAC, dst=PORT_MAC) /
              IP(src=PEER_V4, dst=PORT_V4, options=b"\x01\x01\x01\x00") /
              UDP(sport=49152, dport=4791) / bytes(16)), "ipv4_options")
    full = roce.frame(0x0a, QPN, 7, payload=bytes(64), eh={"reth": reth})
    add(full[:50], "ip_bad_len")        # truncated in flight
    return frames, {"frames": len(frames), "accepted": 0, "drop": expect}


if __name__ == "__main__":
    frames, expect = build()
    roce.write_pcap(sys.argv[1], frames)
    with open(sys.argv[2], "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")
