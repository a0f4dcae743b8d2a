# SPDX-License-Identifier: BSD-3-Clause
"""Two mwpath endpoints that talk to each other: their configurations, and
what must hold once both are done -- every completion, every byte of every
region, which keys live -- computed here from the operations themselves
(an independent model), never from running mwpath.

Side A and side B each have one port (A: 02:00:00:00:00:0a, 10.0.0.1,
fd00::1; B: ...0b, 10.0.0.2, fd00::2) and four QPs, one per kind: RC over
IPv4, RC over IPv6, UC over IPv4, UC over IPv6 (A's QPNs 0x11-0x14, B's
0x21-0x24, paired in that order).  Each QP has a 24 KiB region of its own,
filled from its own seed, laid out as

    0x0000-0x0fff  what the peer reads, and what we write and send from
    0x1000-0x1fff  what the peer writes into (and its atomics, at 0x1f00)
    0x2000-0x29c3  where our READ lands
    0x2a00-0x2a17  our atomics' results
    0x3000-0x5fff  our receives' buffers (2 KiB each, one per message)

and, on RC, two Type 2 windows the peer uses: window 0 over 0x1000-0x1fff
(remote write, read, atomic; the peer invalidates it at the end with a
SEND WITH INVALIDATE) and window 1, zero-based, over 0x0000-0x0fff
(remote read).  Each side does, towards its peer, on every QP:

    RC and UC: WRITE 3000 B, WRITE WITH IMMEDIATE 100 B, SEND 1500 B,
               SEND WITH IMMEDIATE 64 B (inline)
    RC only:   READ 2500 B through the zero-based window, FETCH_ADD +1 and
               +0x100 through window 0, CMP_SWAP, a fenced SEND 8 B,
               SEND WITH INVALIDATE of window 0

Usage (prints the two configurations): pair.py DIR
"""
import os
import struct
import sys

QPS = [("rc", 4), ("rc", 6), ("uc", 4), ("uc", 6)]
SIDES = {
    "a": dict(mac="02:00:00:00:00:0a", ip4="10.0.0.1", ip6="fd00::1", qpn0=0x11,
              seed=0x1000, iova0=0x100000),
    "b": dict(mac="02:00:00:00:00:0b", ip4="10.0.0.2", ip6="fd00::2", qpn0=0x21,
              seed=0x2000, iova0=0x200000),
}
MR_LEN = 0x6000
W0_KEY, W1_KEY = 0x42, 0x77            # key bytes of the two windows
# verbs' completion opcodes and statuses, as the dump names them
RECV, RECV_IMM = "recv", "recv_rdma_with_imm"


def peer_of(side):
    return "b" if side == "a" else "a"


def fill(seed, n):
    """app_fill's random:SEED (app/config.h)."""
    out, x = bytearray(n), seed
    for i in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out[i] = x >> 56
    return out


def mr_seed(side, i):
    return SIDES[side]["seed"] + i


def iova(side, i):
    return SIDES[side]["iova0"] + i * 0x10000


def rkey(i):
    """The rkey of [mr i]: mwpath makes them in order, 0x100, 0x200..."""
    return (i + 1) << 8


def window_key(i, w, key):
    """A Type 2 window's key: index 0x800000 + its number, and the byte.
    RC QP i has windows 2i and 2i + 1 (only RC QPs have windows)."""
    return ((0x800000 + 2 * i + w) << 8) | key


def ops(side, i):
    """The work requests side's QP i posts, in order:
    (name, opcode, extra-config, what it does to the model)."""
    kind, ver = QPS[i]
    pi = iova(peer_of(side), i)
    out = [
        ("write", dict(opcode="write", sge=(0x0000, 3000), remote_addr=pi + 0x1000,
                       remote_rkey=rkey(i))),
        ("write_imm", dict(opcode="write_with_imm", sge=(0x0100, 100),
                           remote_addr=pi + 0x1c00, remote_rkey=rkey(i), imm=0x1000 + i)),
        ("send", dict(opcode="send", sge=(0x0200, 1500))),
        ("send_imm", dict(opcode="send_with_imm", sge=(0x0300, 64), imm=0x2000 + i,
                          inline="yes")),
    ]
    if kind == "rc":
        w0 = window_key(i, 0, W0_KEY)
        w1 = window_key(i, 1, W1_KEY)
        out += [
            # zero-based: the address is an offset into the window
            ("read", dict(opcode="read", sge=(0x2000, 2500), remote_addr=0x0400,
                          remote_rkey=w1)),
            ("fadd1", dict(opcode="fetch_add", sge=(0x2a00, 8), remote_addr=pi + 0x1f00,
                           remote_rkey=w0, add=1)),
            ("fadd2", dict(opcode="fetch_add", sge=(0x2a08, 8), remote_addr=pi + 0x1f00,
                           remote_rkey=w0, add=0x100)),
            ("cas", dict(opcode="cmp_swap", sge=(0x2a10, 8), remote_addr=pi + 0x1f08,
                         remote_rkey=w0, compare="PEER_WORD", swap=0xabcd)),
            ("fenced", dict(opcode="send", sge=(0x0400, 8), fence="yes")),
            ("inv", dict(opcode="send_with_inv", sge=(0x0500, 16), rkey=w0)),
        ]
    return out


def u64(b, off):
    return struct.unpack_from("<Q", b, off)[0]


def configs(timeout=14, retry_cnt=7):
    """{side: ini text}."""
    out = {}
    for side, s in SIDES.items():
        peer = SIDES[peer_of(side)]
        # each side's work requests name the peer's keys: in sequence
        t = ["; made by test/live/pair.py", "[security]", "keys = sequential", "",
             "[port 0]", "mac = " + s["mac"],
             "ipv4 = " + s["ip4"], "ipv6 = " + s["ip6"], "mtu = 1024", "", "[pd 0]",
             "[cq 0]", "depth = 4096", ""]
        for i in range(len(QPS)):
            t += ["[mr %d]" % i, "pd = 0", "length = %d" % MR_LEN, "iova = %#x" % iova(side, i),
                  "fill = random:%d" % mr_seed(side, i),
                  "access = local_write,remote_write,remote_read,remote_atomic,mw_bind", ""]
        for i, (kind, _) in enumerate(QPS):
            if kind == "rc":
                t += ["[mw %d]" % (2 * i), "pd = 0", "type = 2", "",
                      "[mw %d]" % (2 * i + 1), "pd = 0", "type = 2", ""]
        for i, (kind, ver) in enumerate(QPS):
            t += ["[qp %#x]" % (s["qpn0"] + i), "pd = 0", "cq = 0", "type = " + kind,
                  "access = " + ("remote_write,remote_read,remote_atomic" if kind == "rc"
                                 else "remote_write"),
                  "remote_qpn = %#x" % (peer["qpn0"] + i),
                  ("remote_ipv4 = " + peer["ip4"]) if ver == 4 else ("remote_ipv6 = " + peer["ip6"])]
            if kind == "rc":
                t += ["timeout = %d" % timeout, "retry_cnt = %d" % retry_cnt, "rnr_retry = 7",
                      "max_rd_atomic = 4", "max_dest_rd_atomic = 16"]
            t.append("")
        # receives: one per SEND, SEND_WITH_IMM, WRITE_WITH_IMM and
        # SEND_WITH_INV the peer posts, in its order
        n = 0
        for i, (kind, _) in enumerate(QPS):
            for k in range(5 if kind == "rc" else 3):
                t += ["[recv %d]" % n, "qp = %#x" % (s["qpn0"] + i), "wr_id = %d" % n,
                      "sge = %d:%#x:2048" % (i, iova(side, i) + 0x3000 + 0x800 * k),
                      ""]
                n += 1
        # the windows our peer uses, bound before any traffic
        w = 0
        for i, (kind, _) in enumerate(QPS):
            if kind != "rc":
                continue
            t += ["[wr %d]" % w, "qp = %#x" % (s["qpn0"] + i), "opcode = bind_mw",
                  "mw = %d" % (2 * i), "mr = %d" % i, "addr = %#x" % (iova(side, i) + 0x1000),
                  "length = 4096", "access = remote_write,remote_read,remote_atomic",
                  "key = %#x" % W0_KEY, ""]
            t += ["[wr %d]" % (w + 1), "qp = %#x" % (s["qpn0"] + i), "opcode = bind_mw",
                  "mw = %d" % (2 * i + 1), "mr = %d" % i, "addr = %#x" % iova(side, i),
                  "length = 4096", "access = remote_read,zero_based", "key = %#x" % W1_KEY, ""]
            w += 2
        # our work requests
        for i in range(len(QPS)):
            for name, o in ops(side, i):
                t += ["[wr %d]" % w, "qp = %#x" % (s["qpn0"] + i)]
                for k, v in o.items():
                    if k == "sge":
                        t.append("sge = %d:%#x:%d" % (i, iova(side, i) + v[0], v[1]))
                    elif v == "PEER_WORD":
                        peer_mem = fill(mr_seed(peer_of(side), i), MR_LEN)
                        t.append("%s = %#x" % (k, u64(peer_mem, 0x1f08)))
                    elif isinstance(v, int):
                        t.append("%s = %#x" % (k, v))
                    else:
                        t.append("%s = %s" % (k, v))
                t.append("")
                w += 1
        out[side] = "\n".join(t) + "\n"
    return out


def model():
    """What both sides hold at the end when nothing is lost: for each side,
    {"mem": [bytes per region], "send": [completions], "recv":
    [completions], "dead": [keys], "live": [keys]}."""
    mem = {s: [fill(mr_seed(s, i), MR_LEN) for i in range(len(QPS))] for s in SIDES}
    init = {s: [bytes(m) for m in mem[s]] for s in SIDES}
    res = {s: {"send": [], "recv": [], "dead": [], "live": []} for s in SIDES}
    for side in SIDES:
        peer = peer_of(side)
        wr = 0
        for i, (kind, _) in enumerate(QPS):
            if kind == "rc":
                for w in (0, 1):
                    res[side]["send"].append(dict(wr_id=wr, status="success",
                                                  opcode="bind_mw", qp=i, byte_len=0))
                    wr += 1
        recv_no = {}
        for i in range(len(QPS)):
            recv_no[i] = sum(5 if QPS[j][0] == "rc" else 3 for j in range(i))
        for i, (kind, _) in enumerate(QPS):
            mine, theirs = mem[side][i], mem[peer][i]
            nrecv = 0

            def recv(opcode, byte_len, **kw):
                nonlocal nrecv
                res[peer]["recv"].append(dict(wr_id=recv_no[i] + nrecv, status="success",
                                              opcode=opcode, qp=i, byte_len=byte_len, **kw))
                nrecv += 1
            for name, o in ops(side, i):
                at, n = o["sge"]
                wc = dict(wr_id=wr, status="success", qp=i, byte_len=0)
                if o["opcode"] == "write":
                    theirs[0x1000:0x1000 + n] = mine[at:at + n]
                    wc["opcode"] = "rdma_write"
                elif o["opcode"] == "write_with_imm":
                    theirs[0x1c00:0x1c00 + n] = mine[at:at + n]
                    wc["opcode"] = "rdma_write"
                    recv(RECV_IMM, n, imm_data=o["imm"])
                elif o["opcode"] in ("send", "send_with_imm", "send_with_inv"):
                    buf = 0x3000 + 0x800 * nrecv
                    theirs[buf:buf + n] = mine[at:at + n]
                    wc["opcode"] = "send"
                    kw = {}
                    if o["opcode"] == "send_with_imm":
                        kw["imm_data"] = o["imm"]
                    if o["opcode"] == "send_with_inv":
                        kw["invalidated_rkey"] = o["rkey"]
                        res[peer]["dead"].append(o["rkey"])
                    recv(RECV, n, **kw)
                elif o["opcode"] == "read":
                    # window 1 is zero-based over the peer's 0x0000-0x0fff
                    src = o["remote_addr"]
                    mine[at:at + n] = init[peer][i][src:src + n]
                    wc["opcode"], wc["byte_len"] = "rdma_read", n
                elif o["opcode"] == "fetch_add":
                    off = o["remote_addr"] - iova(peer, i)
                    old = u64(theirs, off)
                    struct.pack_into("<Q", theirs, off, (old + o["add"]) % (1 << 64))
                    struct.pack_into("<Q", mine, at, old)
                    wc["opcode"], wc["byte_len"] = "fetch_add", 8
                elif o["opcode"] == "cmp_swap":
                    off = o["remote_addr"] - iova(peer, i)
                    old = u64(theirs, off)
                    if old == u64(init[peer][i], 0x1f08):
                        struct.pack_into("<Q", theirs, off, o["swap"])
                    struct.pack_into("<Q", mine, at, old)
                    wc["opcode"], wc["byte_len"] = "comp_swap", 8
                res[side]["send"].append(wc)
                wr += 1
            if kind == "rc":
                res[peer]["live"].append(window_key(i, 1, W1_KEY))
    for s in SIDES:
        res[s]["mem"] = [bytes(m) for m in mem[s]]
        res[s]["init"] = init[s]
        # receives posted that no message used are flushed at exit
    return res


if __name__ == "__main__":
    d = sys.argv[1]
    for side, text in configs().items():
        with open(os.path.join(d, side + ".ini"), "w") as f:
            f.write(text)
