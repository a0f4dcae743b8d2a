# SPDX-License-Identifier: BSD-3-Clause
"""Responder test vectors, from the rules in ../shared/spec (not from
mwpath): for each case, the requests (<case>.req.pcap, fed as one burst),
the answers a conforming responder sends (<case>.resp.pcap, compared byte
for byte), the region's final bytes (<case>.mem) and the QP's final state
(<case>.state); where they matter, the receives to post first
(<case>.recv: "wr_id addr len [addr len]..."), the receive completions
expected (<case>.cqe: "wr_id status opcode byte_len wc_flags imm_or_inv",
verbs' numbers) and keys that must be live or dead at the end
(<case>.keys: "live|dead rkey").

The set-up both sides share (test/unit/test_responder.c builds it):
  port  02:00:00:00:00:01, 192.0.2.1, 2001:db8::1, path MTU 1024
  peer  02:00:00:00:00:02, 192.0.2.2, 2001:db8::2, UDP source port 49152
  QP    0x11 (RC, or UC for uc_* cases), peer QP 0x99, rq_psn 0,
        RC access remote read/write/atomic (UC: remote write)
  MR    iova 0x10000, 4096 bytes, byte i = i & 0xff, rkey 0x00000100
  MW    Type 2 on QP 0x11, [0x10100, 0x10100 + 3072), read/write/atomic,
        rkey 0x80000042
  and, made in this order after those:
  MR2   in a second PD, iova 0x20000, 4096 bytes, rkey 0x00000200
  QP2   0x12 (RC), with a Type 2 window [0x10000, +256), read/write,
        rkey 0x80000177
  MW_RO Type 2 on QP 0x11, [0x10000, +256), read only, rkey 0x80000255
  MW1   Type 1, [0x10000, +4096), read/write, rkey 0x80000301
A case may have <case>.opts: "access N" (QP access flags), "txroom N"
(answers that fit the first burst), "split K RKEY" (after K requests,
LOCAL_INV RKEY on QP 0x11 runs to completion, then the rest follow),
"modify_err 1" (after the requests, ibv_modify_qp moves QP 0x11 to ERR).

Answers mirror the request: addresses swapped, the request's UDP source
port, TTL 64, DF, IP id 0, UDP checksum 0, AETH syndrome 0x1f for ACKs.
Usage: resp_vectors.py OUTDIR
"""
import os
import struct
import sys

import roce

QPN, PEER_QPN = 0x11, 0x99
MR_IOVA, MR_LEN, MR_RKEY = 0x10000, 4096, 0x00000100
MW_VA, MW_LEN, MW_RKEY = 0x10100, 3072, 0x80000042
MR2_RKEY, OTHER_QP_RKEY, RO_RKEY, MW1_RKEY = 0x200, 0x80000177, 0x80000255, 0x80000301
MTU = 1024
ACK_SYN = 0x1f
V6 = dict(ipv6=True, src="2001:db8::2", dst="2001:db8::1")
# verbs' numbers (infiniband/verbs.h)
WC_SUCCESS, WC_LOC_LEN_ERR, WC_LOC_PROT_ERR = 0, 1, 4
WC_WR_FLUSH_ERR, WC_REM_INV_REQ_ERR = 5, 9
WC_RECV, WC_RECV_RDMA_WITH_IMM = 128, 129
WC_WITH_IMM, WC_WITH_INV = 2, 8
RNR_TIMER = 1          # min_rnr_timer the harness sets
# What mwpath sends carries ECT(0) (RFC 3168 0b10) by default, as a
# ConnectX does: the ECN bits of every answer and request of ours.
ECT0 = 2
ANSWER = dict(src="192.0.2.1", dst="192.0.2.2", smac="02:00:00:00:00:01",
              dmac="02:00:00:00:00:02", tos=ECT0)
ANSWER6 = dict(ipv6=True, src="2001:db8::1", dst="2001:db8::2",
               smac="02:00:00:00:00:01", dmac="02:00:00:00:00:02", hlim=64, tclass=ECT0)


def pattern():
    return bytearray(i & 0xff for i in range(MR_LEN))


def req(op, psn, **kw):
    return roce.frame(op, kw.pop("qpn", QPN), psn, **kw)


def write(op, psn, va, rkey, data, dmalen=None, **kw):
    eh = {}
    if roce.OPCODES[op][1] and "reth" in roce.OPCODES[op][1]:
        eh["reth"] = {"va": va, "rkey": rkey,
                      "dmalen": len(data) if dmalen is None else dmalen}
    return req(op, psn, payload=data, eh=eh, **kw)


def ack(psn, msn, syn=ACK_SYN, v6=False):
    return roce.frame(0x11, PEER_QPN, psn, eh={"aeth": {"syndrome": syn, "msn": msn}},
                      **(ANSWER6 if v6 else ANSWER))


def read_resp(op, psn, msn, data):
    eh = {} if op == 0x0e else {"aeth": {"syndrome": ACK_SYN, "msn": msn}}
    return roce.frame(op, PEER_QPN, psn, payload=bytes(data), eh=eh, **ANSWER)


def atomic_ack(psn, msn, orig):
    return roce.frame(0x12, PEER_QPN, psn, eh={"aeth": {"syndrome": ACK_SYN, "msn": msn},
                                               "atmack": {"orig": orig}}, **ANSWER)


def atomic(op, psn, va, rkey, swap_add, compare=0):
    return req(op, psn, eh={"atmeth": {"va": va, "rkey": rkey,
                                       "swap_add": swap_add, "compare": compare}})


def u64(mem, off):
    return struct.unpack_from("<Q", mem, off)[0]


def atomic_write(psn, va, rkey, value, dmalen=8, **kw):
    """RDMA ATOMIC WRITE (IBA 1.5, opcode 0x1d): a RETH and the 8-byte
    value, stored as its bytes come."""
    return req(0x1d, psn, payload=bytes(value),
               eh={"reth": {"va": va, "rkey": rkey, "dmalen": dmalen}}, ackreq=True, **kw)


def atomic_write_done(psn, msn):
    """Its answer, as Linux rxe gives it: a READ RESPONSE ONLY with no
    payload and an ACK AETH (no AtomicAckETH: there is no original)."""
    return read_resp(0x10, psn, msn, b"")


def cases():
    c = {}

    # WRITE ONLY to the region: placed, one ACK (PSN 0, MSN 1)
    mem = pattern()
    data = bytes((i * 7) & 0xff for i in range(64))
    mem[0x10:0x10 + 64] = data
    c["rc_write_only"] = ([write(0x0a, 0, MR_IOVA + 0x10, MR_RKEY, data, ackreq=True)],
                          [ack(0, 1)], mem, "RTS")

    # the same over IPv6: the answer goes back over IPv6
    c["rc_write_only_ipv6"] = ([write(0x0a, 0, MR_IOVA + 0x10, MR_RKEY, data,
                                      ackreq=True, **V6)],
                               [ack(0, 1, v6=True)], mem, "RTS")

    # the same through the window on VLAN 5 (the generic parser's path:
    # IP at 18, the RETH after a BTH at 46); the answer keeps the tag
    mem = pattern()
    mem[MW_VA - MR_IOVA + 0x20:MW_VA - MR_IOVA + 0x20 + 64] = data
    c["rc_write_only_vlan"] = (
        [write(0x0a, 0, MW_VA + 0x20, MW_RKEY, data, ackreq=True, vlan=5)],
        [roce.frame(0x11, PEER_QPN, 0, eh={"aeth": {"syndrome": ACK_SYN, "msn": 1}},
                    vlan=5, **ANSWER)], mem, "RTS")

    # FIRST/MIDDLE/LAST through the window: one coalesced ACK for PSN 2
    mem = pattern()
    parts = [bytes([0xa1]) * MTU, bytes([0xb2]) * MTU, bytes([0xc3]) * 500]
    total = sum(len(x) for x in parts)
    off = MW_VA - MR_IOVA
    mem[off:off + total] = b"".join(parts)
    c["rc_write_multi_window"] = (
        [write(0x06, 0, MW_VA, MW_RKEY, parts[0], dmalen=total),
         write(0x07, 1, 0, 0, parts[1]),
         write(0x08, 2, 0, 0, parts[2], ackreq=True)],
        [ack(2, 1)], mem, "RTS")

    # READ of 3000 bytes: FIRST, MIDDLE, LAST by the path MTU
    mem = pattern()
    rd = {"va": MR_IOVA, "rkey": MR_RKEY, "dmalen": 3000}
    c["rc_read_multi"] = ([req(0x0c, 0, eh={"reth": rd}, ackreq=True)],
                          [read_resp(0x0d, 0, 1, mem[0:1024]),
                           read_resp(0x0e, 1, 1, mem[1024:2048]),
                           read_resp(0x0f, 2, 1, mem[2048:3000])], mem, "RTS")

    # FETCH_ADD and COMPARE_SWAP (a match, then a mismatch)
    mem = pattern()
    o = u64(mem, 8)
    struct.pack_into("<Q", mem, 8, (o + 5) % 2**64)
    c["rc_fetch_add"] = ([atomic(0x14, 0, MR_IOVA + 8, MR_RKEY, 5)],
                         [atomic_ack(0, 1, o)], mem, "RTS")
    mem = pattern()
    o = u64(mem, 16)
    struct.pack_into("<Q", mem, 16, 0xdeadbeef)
    c["rc_compare_swap"] = ([atomic(0x13, 0, MR_IOVA + 16, MR_RKEY, 0xdeadbeef, o),
                             atomic(0x13, 1, MR_IOVA + 16, MR_RKEY, 7, o)],
                            [atomic_ack(0, 1, o), atomic_ack(1, 2, 0xdeadbeef)],
                            mem, "RTS")

    # a duplicate ATOMIC is answered from the cache, never re-executed
    mem = pattern()
    o = u64(mem, 24)
    struct.pack_into("<Q", mem, 24, o + 1)
    fa = atomic(0x14, 0, MR_IOVA + 24, MR_RKEY, 1)
    c["rc_duplicate_atomic"] = ([fa, fa], [atomic_ack(0, 1, o), atomic_ack(0, 1, o)],
                                mem, "RTS")

    # an ACK owed for a WRITE and flushed by a READ carries the MSN of the
    # WRITE, not the READ's
    mem = pattern()
    mem[0x300:0x308] = b"msn-test"
    c["rc_write_then_read_ack_msn"] = (
        [write(0x0a, 0, MR_IOVA + 0x300, MR_RKEY, b"msn-test"),
         req(0x0c, 1, eh={"reth": {"va": MR_IOVA + 0x300, "rkey": MR_RKEY, "dmalen": 8}})],
        [ack(0, 1), read_resp(0x10, 1, 2, mem[0x300:0x308])], mem, "RTS")

    # a duplicate WRITE is acknowledged, not executed
    mem = pattern()
    a, b, z = bytes([1]) * 8, bytes([2]) * 8, bytes([9]) * 8
    mem[0x100:0x108] = a
    mem[0x108:0x110] = b
    c["rc_duplicate_write"] = ([write(0x0a, 0, MR_IOVA + 0x100, MR_RKEY, a),
                                write(0x0a, 1, MR_IOVA + 0x108, MR_RKEY, b),
                                write(0x0a, 0, MR_IOVA + 0x100, MR_RKEY, z)],
                               [ack(1, 2)], mem, "RTS")

    # a PSN ahead draws one sequence-error NAK until the gap closes
    mem = pattern()
    mem[0x200:0x204] = b"good"
    c["rc_psn_ahead"] = ([write(0x0a, 3, MR_IOVA + 0x200, MR_RKEY, b"bad1"),
                          write(0x0a, 4, MR_IOVA + 0x200, MR_RKEY, b"bad2"),
                          write(0x0a, 0, MR_IOVA + 0x200, MR_RKEY, b"good", ackreq=True)],
                         [ack(0, 0, syn=0x60), ack(0, 1)], mem, "RTS")

    # section 3 step 4: a wrong key byte is NAK 0x62, the QP stops
    mem = pattern()
    c["rc_wrong_key_byte"] = ([write(0x0a, 0, MW_VA, MW_RKEY ^ 1, b"xxxx"),
                               write(0x0a, 1, MW_VA, MW_RKEY, b"yyyy")],
                              [ack(0, 0, syn=0x62)], mem, "ERR")

    # step 5: one byte past the window's end (inside the region) is 0x62
    c["rc_outside_window"] = ([write(0x0a, 0, MW_VA + MW_LEN - 8, MW_RKEY, bytes(9))],
                              [ack(0, 0, syn=0x62)], pattern(), "ERR")

    # step 2 (C9-88): a zero-length READ with a bogus key succeeds
    c["rc_zero_length_read_bogus_key"] = (
        [req(0x0c, 0, eh={"reth": {"va": 0, "rkey": 0xdeadbeef, "dmalen": 0}})],
        [read_resp(0x10, 0, 1, b"")], pattern(), "RTS")

    # step 3 (C9-94): a DMA length above 2^31 is 0x61
    c["rc_dma_too_long"] = (
        [req(0x0c, 0, eh={"reth": {"va": MR_IOVA, "rkey": MR_RKEY,
                                   "dmalen": 2**31 + 1}})],
        [ack(0, 0, syn=0x61)], pattern(), "ERR")

    # step 7: an unaligned ATOMIC is 0x61 (after the key check)
    c["rc_unaligned_atomic"] = ([atomic(0x14, 0, MR_IOVA + 4, MR_RKEY, 1)],
                                [ack(0, 0, syn=0x61)], pattern(), "ERR")

    # opcode sequence: a MIDDLE outside a message is 0x61
    c["rc_middle_without_first"] = ([write(0x07, 0, 0, 0, bytes(MTU))],
                                    [ack(0, 0, syn=0x61)], pattern(), "ERR")

    # UC: no ACKs; a bad key is dropped silently and the QP carries on
    mem = pattern()
    mem[0x300:0x304] = b"uc!!"
    c["uc_write_then_bad_key"] = ([write(0x2a, 0, MR_IOVA + 0x300, MR_RKEY, b"uc!!"),
                                   write(0x2a, 1, MW_VA, MW_RKEY ^ 1, b"nope"),
                                   write(0x2a, 2, MR_IOVA + 0x304, 0x12345678, b"nope")],
                                  [], mem, "RTS")
    return c


def send_cases():
    """SEND and receives: (reqs, resps, mem, state, recvs, cqes, keys)."""
    c = {}
    mem = pattern()
    data = bytes((i * 3 + 1) & 0xff for i in range(100))
    mem[0x800:0x800 + 100] = data
    c["rc_send_only"] = ([req(0x04, 0, payload=data, ackreq=True)], [ack(0, 1)], mem,
                         "RTS", [(7, [(MR_IOVA + 0x800, 256)])],
                         [(7, WC_SUCCESS, WC_RECV, 100, 0, 0)], [])

    # FIRST/MIDDLE/LAST scattered over two SGEs, [0x100, +1000) and
    # [0x600, +2000), both inside the region
    mem = pattern()
    parts = [bytes([0x11]) * MTU, bytes([0x22]) * MTU, bytes([0x33]) * 10]
    whole = b"".join(parts)
    mem[0x100:0x100 + 1000] = whole[:1000]
    mem[0x600:0x600 + len(whole) - 1000] = whole[1000:]
    c["rc_send_multi_two_sges"] = (
        [req(0x00, 0, payload=parts[0]), req(0x01, 1, payload=parts[1]),
         req(0x02, 2, payload=parts[2], ackreq=True)],
        [ack(2, 1)], mem, "RTS",
        [(8, [(MR_IOVA + 0x100, 1000), (MR_IOVA + 0x600, 2000)])],
        [(8, WC_SUCCESS, WC_RECV, len(whole), 0, 0)], [])

    # no receive posted: RNR NAK, nothing consumed
    c["rc_send_rnr"] = ([req(0x04, 0, payload=b"hello")],
                        [ack(0, 0, syn=0x20 | RNR_TIMER)], pattern(), "RTS", [], [], [])

    # SEND with immediate
    mem = pattern()
    mem[0x800:0x808] = b"immdata!"
    c["rc_send_with_imm"] = (
        [req(0x05, 0, payload=b"immdata!", eh={"immdt": {"imm": 0x12345678}})],
        [ack(0, 1)], mem, "RTS", [(9, [(MR_IOVA + 0x800, 64)])],
        [(9, WC_SUCCESS, WC_RECV, 8, WC_WITH_IMM, 0x12345678)], [])

    # WRITE with immediate consumes a receive (with no SGE)
    mem = pattern()
    mem[0x40:0x60] = bytes([0x5a]) * 32
    c["rc_write_with_imm"] = (
        [req(0x0b, 0, payload=bytes([0x5a]) * 32,
             eh={"reth": {"va": MR_IOVA + 0x40, "rkey": MR_RKEY, "dmalen": 32},
                 "immdt": {"imm": 0xcafe}})],
        [ack(0, 1)], mem, "RTS", [(10, [])],
        [(10, WC_SUCCESS, WC_RECV_RDMA_WITH_IMM, 32, WC_WITH_IMM, 0xcafe)], [])
    c["rc_write_with_imm_rnr"] = (
        [req(0x0b, 0, payload=bytes(32),
             eh={"reth": {"va": MR_IOVA + 0x40, "rkey": MR_RKEY, "dmalen": 32},
                 "immdt": {"imm": 1}})],
        [ack(0, 0, syn=0x20 | RNR_TIMER)], pattern(), "RTS", [], [], [])

    # a two-packet WRITE ending WITH_IMMEDIATE: the completion's byte_len
    # is the whole message's, from the FIRST packet's RETH
    mem = pattern()
    parts = [bytes([0x7e]) * MTU, bytes([0x7f]) * 32]
    mem[0x40:0x40 + MTU + 32] = b"".join(parts)
    c["rc_write_multi_with_imm"] = (
        [write(0x06, 0, MR_IOVA + 0x40, MR_RKEY, parts[0], dmalen=MTU + 32),
         req(0x09, 1, payload=parts[1], eh={"immdt": {"imm": 0xbeef}})],
        [ack(1, 1)], mem, "RTS", [(30, [])],
        [(30, WC_SUCCESS, WC_RECV_RDMA_WITH_IMM, MTU + 32, WC_WITH_IMM, 0xbeef)], [])

    # section 4: SEND_WITH_INV of the window bound to this QP; the key
    # stops working at once (the next packet of the burst is refused)
    mem = pattern()
    mem[0x800:0x808] = b"inv-data"
    c["rc_send_with_inv"] = (
        [req(0x17, 0, payload=b"inv-data", eh={"ieth": {"rkey": MW_RKEY}}),
         write(0x0a, 1, MW_VA, MW_RKEY, b"late")],
        [ack(0, 1), ack(1, 1, syn=0x62)], mem, "ERR",
        [(11, [(MR_IOVA + 0x800, 64)])],
        [(11, WC_SUCCESS, WC_RECV, 8, WC_WITH_INV, MW_RKEY)], [("dead", MW_RKEY)])

    # a bad key byte, or a region's key: REM_INV_REQ_ERR, NAK 0x61 (never
    # success: rxe ACKs it), nothing invalidated
    for name, key in (("rc_send_with_inv_wrong_key", MW_RKEY ^ 1),
                      ("rc_send_with_inv_region_key", MR_RKEY)):
        mem = pattern()
        mem[0x800:0x804] = b"data"
        c[name] = ([req(0x17, 0, payload=b"data", eh={"ieth": {"rkey": key}})],
                   [ack(0, 0, syn=0x61)], mem, "ERR", [(12, [(MR_IOVA + 0x800, 64)])],
                   [(12, WC_REM_INV_REQ_ERR, WC_RECV, 4, 0, 0)],
                   [("live", MW_RKEY), ("live", MR_RKEY)])

    # with no receive posted: RNR NAK and nothing is invalidated
    c["rc_send_with_inv_rnr"] = (
        [req(0x17, 0, payload=b"data", eh={"ieth": {"rkey": MW_RKEY}})],
        [ack(0, 0, syn=0x20 | RNR_TIMER)], pattern(), "RTS", [], [],
        [("live", MW_RKEY)])

    # longer than the receive: LOC_LEN_ERR, NAK 0x61, no byte placed
    c["rc_send_too_long"] = ([req(0x04, 0, payload=bytes(32))], [ack(0, 0, syn=0x61)],
                             pattern(), "ERR", [(13, [(MR_IOVA + 0x800, 16)])],
                             [(13, WC_LOC_LEN_ERR, WC_RECV, 0, 0, 0)], [])

    # an SGE reaching past its region: an L_Key violation, the
    # responder's own fault -- the receive completes with a local
    # protection error and the NAK is remote operational error (0x63),
    # as IBA and rxe answer it (a too-long message is 0x61)
    c["rc_send_sge_outside_region"] = (
        [req(0x04, 0, payload=bytes(64))], [ack(0, 0, syn=0x63)], pattern(), "ERR",
        [(15, [(MR_IOVA + 0xfe0, 64)])], [(15, WC_LOC_PROT_ERR, WC_RECV, 0, 0, 0)], [])

    # UC: a message broken by a lost packet leaves its receive for the
    # next message (IBA 9.7.5.1.2): SEND FIRST, (PSN 1 lost), SEND LAST
    # dropped, then SEND ONLY lands in the same receive; the second
    # receive stays posted
    mem = pattern()
    first = bytes([0x5c]) * MTU
    mem[0x800:0x800 + MTU] = first
    mem[0x800:0x805] = b"hello"
    c["uc_send_broken_message_reuses_its_receive"] = (
        [req(0x20, 0, payload=first), req(0x22, 2, payload=b"lost"),
         req(0x24, 3, payload=b"hello")], [], mem, "RTS",
        [(20, [(MR_IOVA + 0x800, 2 * MTU)]), (21, [(MR_IOVA + 0x100, 64)])],
        [(20, WC_SUCCESS, WC_RECV, 5, 0, 0)], [])

    # RC: a WRITE where the SEND's next packet must come is an invalid
    # request (NAK 0x61); the SEND's receive completes with that error
    mem = pattern()
    mem[0x800:0x800 + MTU] = first
    c["rc_send_interrupted_completes_its_receive_in_error"] = (
        [req(0x00, 0, payload=first), write(0x0a, 1, MR_IOVA, MR_RKEY, b"zz")],
        [ack(0, 0), ack(1, 0, syn=0x61)], mem, "ERR",
        [(22, [(MR_IOVA + 0x800, 2 * MTU)])],
        [(22, WC_REM_INV_REQ_ERR, WC_RECV, 0, 0, 0)], [])

    # UC SEND: placed and completed, no answer
    mem = pattern()
    mem[0x800:0x806] = b"uc-snd"
    c["uc_send_only"] = ([req(0x24, 0, payload=b"uc-snd")], [], mem, "RTS",
                         [(14, [(MR_IOVA + 0x800, 64)])],
                         [(14, WC_SUCCESS, WC_RECV, 6, 0, 0)], [])
    return c


def row_cases():
    """Section 3 and 4 rows and invalidations between packets:
    (reqs, resps, mem, state, recvs, cqes, keys, opts)."""
    c = {}

    def nak(psn, syn, msn=0):
        return ack(psn, msn, syn=syn)

    c["rc_qp_access_flags_first"] = ([atomic(0x14, 0, MR_IOVA, MR_RKEY, 1)],
                                     [nak(0, 0x61)], pattern(), "ERR", [], [], [],
                                     ["access 6"])      # remote read + write
    c["rc_unknown_key"] = ([write(0x0a, 0, MR_IOVA, 0x00123400, b"zz")],
                           [nak(0, 0x62)], pattern(), "ERR", [], [], [], [])
    c["rc_pd_mismatch"] = ([write(0x0a, 0, 0x20000, MR2_RKEY, b"zz")],
                           [nak(0, 0x62)], pattern(), "ERR", [], [], [], [])
    c["rc_window_of_another_qp"] = ([write(0x0a, 0, MR_IOVA, OTHER_QP_RKEY, b"zz")],
                                    [nak(0, 0x62)], pattern(), "ERR", [], [], [], [])
    c["rc_access_not_granted_by_window"] = (
        [write(0x0a, 0, MR_IOVA, RO_RKEY, b"zz")], [nak(0, 0x62)], pattern(), "ERR",
        [], [], [], [])
    mem = pattern()
    c["rc_read_through_read_only_window"] = (
        [req(0x0c, 0, eh={"reth": {"va": MR_IOVA + 16, "rkey": RO_RKEY, "dmalen": 16}})],
        [read_resp(0x10, 0, 1, mem[16:32])], mem, "RTS", [], [], [], [])
    mem = pattern()
    mem[0xf00:0xf04] = b"typ1"
    c["rc_write_through_type1_window"] = (
        [write(0x0a, 0, MR_IOVA + 0xf00, MW1_RKEY, b"typ1", ackreq=True)],
        [ack(0, 1)], mem, "RTS", [], [], [], [])
    c["rc_zero_length_write_bogus_key"] = (
        [write(0x0a, 0, 0xffffffffffffff00, 0xdeadbeef, b"", ackreq=True)],
        [ack(0, 1)], pattern(), "RTS", [], [], [], [])
    c["rc_write_length_disagrees"] = (
        [write(0x0a, 0, MR_IOVA, MR_RKEY, bytes(32), dmalen=64)],
        [nak(0, 0x61)], pattern(), "ERR", [], [], [], [])
    mem = pattern()
    edge = MW_VA + MW_LEN - 8
    o = u64(mem, edge - MR_IOVA)
    struct.pack_into("<Q", mem, edge - MR_IOVA, o + 3)
    c["rc_atomic_on_the_window_last_word"] = (
        [atomic(0x14, 0, edge, MW_RKEY, 3)], [atomic_ack(0, 1, o)], mem, "RTS",
        [], [], [], [])
    c["rc_atomic_just_past_the_window"] = (
        [atomic(0x13, 0, edge + 8, MW_RKEY, 1, 0)], [nak(0, 0x62)], pattern(), "ERR",
        [], [], [], [])
    # RDMA ATOMIC WRITE: it needs remote write from the key (rxe's
    # check_rkey, mlx5), 8 bytes inside the window and the region, an
    # 8-byte-aligned address, a DMA length and payload of 8; refusals are
    # the steps' NAKs and nothing is written
    value = bytes([0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5, 0x06, 0x17])
    mem = pattern()
    mem[edge - MR_IOVA:edge - MR_IOVA + 8] = value
    c["rc_atomic_write_on_the_window_last_word"] = (
        [atomic_write(0, edge, MW_RKEY, value)], [atomic_write_done(0, 1)], mem, "RTS",
        [], [], [], [])
    c["rc_atomic_write_just_past_the_window"] = (
        [atomic_write(0, edge + 8, MW_RKEY, value)], [nak(0, 0x62)], pattern(), "ERR",
        [], [], [], [])
    c["rc_atomic_write_straddling_the_windows_end"] = (
        [atomic_write(0, edge + 4, MW_RKEY, value)], [nak(0, 0x62)], pattern(), "ERR",
        [], [], [], [])
    c["rc_atomic_write_through_read_only_window"] = (
        [atomic_write(0, MR_IOVA + 16, RO_RKEY, value)], [nak(0, 0x62)], pattern(),
        "ERR", [], [], [], [])
    mem = pattern()
    mem[0xf08:0xf10] = value
    c["rc_atomic_write_through_type1_window"] = (
        [atomic_write(0, MR_IOVA + 0xf08, MW1_RKEY, value)], [atomic_write_done(0, 1)],
        mem, "RTS", [], [], [], [])
    c["rc_atomic_write_unaligned"] = (
        [atomic_write(0, MW_VA + 4, MW_RKEY, value)], [nak(0, 0x61)], pattern(), "ERR",
        [], [], [], [])
    c["rc_atomic_write_dma_length_not_8"] = (
        [atomic_write(0, MW_VA, MW_RKEY, value, dmalen=16)], [nak(0, 0x61)], pattern(),
        "ERR", [], [], [], [])
    c["rc_atomic_write_qp_without_remote_write"] = (
        [atomic_write(0, MW_VA, MW_RKEY, value)], [nak(0, 0x61)], pattern(), "ERR",
        [], [], [], ["access 12"])          # remote read + atomic
    # a duplicate is answered again from the atomics' cache, never stored
    # again (the second copy carries other bytes); then a WRITE follows
    mem = pattern()
    mem[0x400:0x408] = value
    mem[0x408:0x40c] = b"next"
    c["rc_atomic_write_duplicate"] = (
        [atomic_write(0, MR_IOVA + 0x400, MR_RKEY, value),
         atomic_write(0, MR_IOVA + 0x400, MR_RKEY, bytes(8)),
         write(0x0a, 1, MR_IOVA + 0x408, MR_RKEY, b"next", ackreq=True)],
        [atomic_write_done(0, 1), atomic_write_done(0, 1), ack(1, 2)], mem, "RTS",
        [], [], [], [])
    for name, key in (("rc_send_with_inv_window_of_another_qp", OTHER_QP_RKEY),
                      ("rc_send_with_inv_type1_window", MW1_RKEY)):
        mem = pattern()
        mem[0x800:0x804] = b"data"
        c[name] = ([req(0x17, 0, payload=b"data", eh={"ieth": {"rkey": key}})],
                   [nak(0, 0x61)], mem, "ERR", [(16, [(MR_IOVA + 0x800, 64)])],
                   [(16, WC_REM_INV_REQ_ERR, WC_RECV, 4, 0, 0)], [("live", key)], [])

    # a WRITE stream invalidated between its FIRST and its MIDDLE: what
    # came before landed, the rest is refused
    mem = pattern()
    first = bytes([0xe1]) * MTU
    mem[MW_VA - MR_IOVA:MW_VA - MR_IOVA + MTU] = first
    c["rc_write_invalidated_between_packets"] = (
        [write(0x06, 0, MW_VA, MW_RKEY, first, dmalen=2 * MTU),
         write(0x08, 1, 0, 0, bytes([0xe2]) * MTU)],
        [ack(0, 0), nak(1, 0x62)], mem, "ERR", [], [], [("dead", MW_RKEY)],
        ["split 1 %d" % MW_RKEY])

    # a WRITE whose FIRST and LAST come in two bursts (a LOCAL_INV of an
    # unrelated window between them): the LAST continues under the
    # message's key, still live
    mem = pattern()
    first, last = bytes([0xc1]) * MTU, bytes([0xc2]) * 200
    off = MW_VA - MR_IOVA
    mem[off:off + MTU + 200] = first + last
    c["rc_write_continues_across_bursts"] = (
        [write(0x06, 0, MW_VA, MW_RKEY, first, dmalen=MTU + 200),
         write(0x08, 1, 0, 0, last, ackreq=True)],
        [ack(0, 0), ack(1, 1)], mem, "RTS", [], [],
        [("live", MW_RKEY), ("dead", RO_RKEY)], ["split 1 %d" % RO_RKEY])

    # between a WRITE's FIRST and LAST, a duplicate FIRST (an old PSN)
    # that names the read-only window: it is acknowledged, not executed,
    # and the LAST continues under its own message's key -- under the
    # duplicate's it would be refused
    mem = pattern()
    first, last = bytes([0xd1]) * MTU, bytes([0xd2]) * 100
    mem[off:off + MTU + 100] = first + last
    c["rc_write_continues_past_a_duplicate_first"] = (
        [write(0x06, 0, MW_VA, MW_RKEY, first, dmalen=MTU + 100),
         write(0x06, 0, MR_IOVA, RO_RKEY, bytes([0xee]) * MTU, dmalen=MTU + 100),
         write(0x08, 1, 0, 0, last, ackreq=True)],
        [ack(1, 1)], mem, "RTS", [], [], [("live", MW_RKEY)], [])

    # the QP moved to ERR (ibv_modify_qp) while a SEND is half placed:
    # the receive it holds is flushed
    mem = pattern()
    first = bytes([0x6d]) * MTU
    mem[0x800:0x800 + MTU] = first
    c["rc_send_half_done_then_qp_to_err_flushes_its_receive"] = (
        [req(0x00, 0, payload=first)], [ack(0, 0)], mem, "ERR",
        [(23, [(MR_IOVA + 0x800, 2 * MTU)])],
        [(23, WC_WR_FLUSH_ERR, WC_RECV, 0, 0, 0)], [], ["modify_err 1"])

    # a READ invalidated after its first response: each response
    # re-validates the key, so the rest is refused (section 3 step 8)
    mem = pattern()
    c["rc_read_invalidated_between_responses"] = (
        [req(0x0c, 0, eh={"reth": {"va": MW_VA, "rkey": MW_RKEY, "dmalen": 3000}})],
        [read_resp(0x0d, 0, 1, mem[MW_VA - MR_IOVA:MW_VA - MR_IOVA + MTU]),
         nak(1, 0x62, msn=1)], mem, "ERR", [], [], [("dead", MW_RKEY)],
        ["txroom 1", "split 1 %d" % MW_RKEY])
    return c


def write_extras(out, name, recvs, cqes, keys, opts=()):
    """The optional per-case files: receives, completions, keys, options."""
    with open(os.path.join(out, name + ".recv"), "w") as f:
        for wr_id, sges in recvs:
            f.write(" ".join([str(wr_id), str(len(sges))] +
                             ["%d %d" % s for s in sges]) + "\n")
    with open(os.path.join(out, name + ".cqe"), "w") as f:
        for e in cqes:
            f.write(" ".join(str(x) for x in e) + "\n")
    with open(os.path.join(out, name + ".keys"), "w") as f:
        for what, key in keys:
            f.write("%s %d\n" % (what, key))
    with open(os.path.join(out, name + ".opts"), "w") as f:
        f.write("".join(o + "\n" for o in opts))


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, (reqs, resps, mem, state, recvs, cqes, keys, opts) in row_cases().items():
        write_extras(out, name, recvs, cqes, keys, opts)
        write_case(out, name, reqs, resps, mem, state)
    for name, (reqs, resps, mem, state, recvs, cqes, keys) in send_cases().items():
        write_extras(out, name, recvs, cqes, keys)
        write_case(out, name, reqs, resps, mem, state)
    for name, (reqs, resps, mem, state) in cases().items():
        write_case(out, name, reqs, resps, mem, state)


def write_case(out, name, reqs, resps, mem, state):
    roce.write_pcap(os.path.join(out, name + ".req.pcap"), reqs)
    roce.write_pcap(os.path.join(out, name + ".resp.pcap"), resps)
    with open(os.path.join(out, name + ".mem"), "wb") as f:
        f.write(bytes(mem))
    with open(os.path.join(out, name + ".state"), "w") as f:
        f.write(state + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
