# SPDX-License-Identifier: BSD-3-Clause
"""Independent RoCEv2 frame generator for mwpath's tests.

Written from the IBA header layouts and ../shared/spec/rocev2-wire.md, not
from mwpath's C code: L2-L4 come from scapy, the BTH and extension headers
are packed here with struct, and the ICRC is computed here with zlib over
the masked headers, for IPv4 and IPv6 alike (scapy 2.5 only does IPv4; the
IPv4 result is cross-checked against scapy's BTH.compute_icrc in
selftest()).

Run with /usr/bin/python3 (Debian's python3-scapy).
"""
import struct
import zlib

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether

ROCE_PORT = 4791

# opcode -> (name, headers in wire order, carries payload)
RC, UC, UD = 0x00, 0x20, 0x60
_RC_UC = {
    0x00: ("SEND_FIRST", (), True),
    0x01: ("SEND_MIDDLE", (), True),
    0x02: ("SEND_LAST", (), True),
    0x03: ("SEND_LAST_WITH_IMMEDIATE", ("immdt",), True),
    0x04: ("SEND_ONLY", (), True),
    0x05: ("SEND_ONLY_WITH_IMMEDIATE", ("immdt",), True),
    0x06: ("RDMA_WRITE_FIRST", ("reth",), True),
    0x07: ("RDMA_WRITE_MIDDLE", (), True),
    0x08: ("RDMA_WRITE_LAST", (), True),
    0x09: ("RDMA_WRITE_LAST_WITH_IMMEDIATE", ("immdt",), True),
    0x0a: ("RDMA_WRITE_ONLY", ("reth",), True),
    0x0b: ("RDMA_WRITE_ONLY_WITH_IMMEDIATE", ("reth", "immdt"), True),
}
OPCODES = {}
for _code, (_n, _h, _p) in _RC_UC.items():
    OPCODES[RC | _code] = ("RC_" + _n, _h, _p)
    OPCODES[UC | _code] = ("UC_" + _n, _h, _p)
OPCODES.update({
    0x0c: ("RC_RDMA_READ_REQUEST", ("reth",), False),
    0x0d: ("RC_RDMA_READ_RESPONSE_FIRST", ("aeth",), True),
    0x0e: ("RC_RDMA_READ_RESPONSE_MIDDLE", (), True),
    0x0f: ("RC_RDMA_READ_RESPONSE_LAST", ("aeth",), True),
    0x10: ("RC_RDMA_READ_RESPONSE_ONLY", ("aeth",), True),
    0x11: ("RC_ACKNOWLEDGE", ("aeth",), False),
    0x12: ("RC_ATOMIC_ACKNOWLEDGE", ("aeth", "atmack"), False),
    0x13: ("RC_COMPARE_SWAP", ("atmeth",), False),
    0x14: ("RC_FETCH_ADD", ("atmeth",), False),
    0x16: ("RC_SEND_LAST_WITH_INVALIDATE", ("ieth",), True),
    0x17: ("RC_SEND_ONLY_WITH_INVALIDATE", ("ieth",), True),
    # IBA 1.5: RDMA ATOMIC WRITE, a RETH and an 8-byte payload
    0x1d: ("RC_ATOMIC_WRITE", ("reth",), True),
    0x64: ("UD_SEND_ONLY", ("deth",), True),
    0x65: ("UD_SEND_ONLY_WITH_IMMEDIATE", ("deth", "immdt"), True),
    0x81: ("CNP", ("cnp",), False),
})
BY_NAME = {v[0]: k for k, v in OPCODES.items()}


def _u24(v):
    return struct.pack("!I", v & 0xffffff)[1:]


def pack_eh(kind, v):
    """Pack one extension header from a dict of its fields."""
    if kind == "reth":
        return struct.pack("!QII", v["va"], v["rkey"], v["dmalen"])
    if kind == "aeth":
        return struct.pack("!B", v["syndrome"]) + _u24(v["msn"])
    if kind == "atmeth":
        return struct.pack("!QIQQ", v["va"], v["rkey"], v["swap_add"],
                           v["compare"])
    if kind == "atmack":
        return struct.pack("!Q", v["orig"])
    if kind == "immdt":
        return struct.pack("!I", v["imm"])
    if kind == "ieth":
        return struct.pack("!I", v["rkey"])
    if kind == "deth":
        return struct.pack("!IB", v["qkey"], 0) + _u24(v["sqpn"])
    if kind == "cnp":
        return bytes(16)
    raise ValueError(kind)


def pack_bth(opcode, qpn, psn, pad=0, se=False, mig=False, pkey=0xffff,
             fecn=False, becn=False, ackreq=False, tver=0):
    flags = (se << 7) | (mig << 6) | ((pad & 3) << 4) | (tver & 0xf)
    return (struct.pack("!BBH", opcode, flags, pkey) +
            bytes([(fecn << 7) | (becn << 6)]) + _u24(qpn) +
            bytes([ackreq << 7]) + _u24(psn))


def icrc(ip_udp_roce: bytes, ipv6: bool) -> int:
    """ICRC over IP header .. pad (the ICRC itself excluded), per
    rocev2-wire.md: 8 x 0xff, masked IP, UDP csum 0xffff, BTH byte 4 0xff."""
    b = bytearray(ip_udp_roce)
    if ipv6:
        b[0] |= 0x0f           # traffic class (high nibble)
        b[1:4] = b"\xff\xff\xff"  # traffic class low nibble + flow label
        b[7] = 0xff            # hop limit
        ip_len = 40
    else:
        b[1] = 0xff            # TOS
        b[8] = 0xff            # TTL
        b[10:12] = b"\xff\xff"  # checksum
        ip_len = (b[0] & 0xf) * 4
    b[ip_len + 6:ip_len + 8] = b"\xff\xff"  # UDP checksum
    b[ip_len + 8 + 4] = 0xff                # BTH FECN/BECN/resv
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xffffffff


def frame(opcode, qpn, psn, payload=b"", ipv6=False,
          src="192.0.2.2", dst="192.0.2.1", smac="02:00:00:00:00:02",
          dmac="02:00:00:00:00:01", sport=49152, vlan=None, tos=0, ttl=64,
          tclass=0, flow=0, hlim=64, pad=None, icrc_ok=True, eh=None,
          udp_len_delta=0, **bth):
    """Build one RoCEv2 frame as bytes.  eh maps header kind -> field dict;
    every header the opcode needs must be given."""
    eh = eh or {}
    if opcode in OPCODES:
        kinds = OPCODES[opcode][1]
    else:
        kinds = tuple(eh)
    if pad is None:
        pad = (-len(payload)) % 4
    roce = pack_bth(opcode, qpn, psn, pad=pad, **bth)
    for k in kinds:
        roce += pack_eh(k, eh.get(k, {}))
    roce += payload + bytes(pad)
    etype = 0x86dd if ipv6 else 0x0800
    if vlan is not None:
        l2 = Ether(src=smac, dst=dmac, type=0x8100) / Dot1Q(vlan=vlan,
                                                            type=etype)
    else:
        l2 = Ether(src=smac, dst=dmac, type=etype)
    udp = UDP(sport=sport, dport=ROCE_PORT, chksum=0)
    if ipv6:
        l3 = IPv6(src=src, dst=dst, tc=tclass, fl=flow, hlim=hlim)
    else:
        l3 = IP(src=src, dst=dst, tos=tos, ttl=ttl, flags="DF", id=0)
    placeholder = l3 / udp / (roce + b"\0\0\0\0")
    ip_bytes = bytearray(bytes(placeholder))
    if udp_len_delta:
        off = 40 if ipv6 else 20
        ulen = struct.unpack("!H", ip_bytes[off + 4:off + 6])[0]
        ip_bytes[off + 4:off + 6] = struct.pack("!H", ulen + udp_len_delta)
    c = icrc(bytes(ip_bytes[:-4]), ipv6)
    if not icrc_ok:
        c ^= 0x1
    ip_bytes[-4:] = struct.pack("<I", c)
    return bytes(l2) + bytes(ip_bytes)


def write_pcap(path, frames):
    from scapy.utils import RawPcapWriter
    w = RawPcapWriter(path, linktype=1, sync=True)
    w.write_header(None)
    for i, f in enumerate(frames):
        w.write_packet(f, sec=1700000000 + i // 1000, usec=(i % 1000) * 1000)
    w.close()


def changed_runs(base, data):
    """[[offset, hex], ...]: the runs of bytes where data differs from
    base (the "changed" list of a pcap case's expected memory)."""
    runs, i = [], 0
    while i < len(data):
        if data[i] == base[i]:
            i += 1
            continue
        j = i
        while j < len(data) and data[j] != base[j]:
            j += 1
        runs.append([i, data[i:j].hex()])
        i = j
    return runs


def selftest():
    """Our IPv4 ICRC must equal scapy's own BTH.compute_icrc."""
    from scapy.contrib.roce import BTH
    for n in (0, 1, 5, 64, 1000):
        f = frame(0x0a, 0x12, 7, payload=bytes(range(n % 256)) * (n // 256 + 1),
                  eh={"reth": {"va": 0x1000, "rkey": 0x1234, "dmalen": n}},
                  tos=0x6a)
        pkt = Ether(f)
        ip = pkt[IP]
        body = bytes(ip[UDP].payload)
        b = BTH(body[:12]) / body[12:-4]
        p = IP(bytes(ip)[:20] + bytes(ip[UDP])[:8] + bytes(b) + b"\0\0\0\0")
        want = p[BTH].compute_icrc(None)
        assert want == f[-4:], (n, want.hex(), f[-4:].hex())


if __name__ == "__main__":
    selftest()
    print("roce.py selftest ok")
