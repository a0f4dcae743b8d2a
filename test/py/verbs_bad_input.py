# SPDX-License-Identifier: BSD-3-Clause
"""Verbs out of order and with bad attributes, through pyverbs (Debian's
python3-pyverbs, an unmodified libibverbs program): each case prints one
JSON line {"case": ..., "errno": "EINVAL" | 0}.  Run under mwpath-run by
test_verbs_device.py, which holds what each case must give.

Usage: verbs_bad_input.py DEVICE
"""
import errno
import json
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ, CQEX, CqInitAttrEx
from pyverbs.device import Context
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR


def case(name, fn):
    try:
        fn()
        res = 0
    except PyverbsRDMAError as ex:
        res = errno.errorcode.get(ex.error_code, ex.error_code)
    except PyverbsError as ex:
        res = "pyverbs: %s" % ex
    print(json.dumps({"case": name, "errno": res}), flush=True)


ctx = Context(name=sys.argv[1])
pd = PD(ctx)
cq = CQ(ctx, 16)
mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)


def new_qp(wr=8):
    cap = QPCap(max_send_wr=wr, max_recv_wr=wr, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))


def to(qp, state, mask=e.IBV_QP_STATE, **attrs):
    a = QPAttr(qp_state=state)
    for k, v in attrs.items():
        setattr(a, k, v)
    qp.modify(a, mask)


INIT_MASK = e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS
send = SendWR(opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)])
recv = RecvWR(num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)])

qp = new_qp()
case("modify RESET to RTR, skipping INIT", lambda: to(qp, e.IBV_QPS_RTR))
case("modify RESET to RTS", lambda: to(qp, e.IBV_QPS_RTS))
case("modify RESET to INIT without its attributes", lambda: to(qp, e.IBV_QPS_INIT))
case("modify RESET to INIT on port 2 of a one-port device",
     lambda: to(qp, e.IBV_QPS_INIT, INIT_MASK, port_num=2))
case("modify RESET to INIT with P_Key index 1 of a one-entry table",
     lambda: to(qp, e.IBV_QPS_INIT, INIT_MASK, port_num=1, pkey_index=1))
case("post_send on a QP in RESET", lambda: qp.post_send(send))
case("post_recv on a QP in RESET", lambda: qp.post_recv(recv))
case("modify RESET to INIT", lambda: to(qp, e.IBV_QPS_INIT, INIT_MASK, port_num=1))
case("post_send on a QP in INIT", lambda: qp.post_send(send))
case("modify INIT to RTR without the attributes RTR needs", lambda: to(qp, e.IBV_QPS_RTR))
case("modify INIT to RTS, skipping RTR", lambda: to(qp, e.IBV_QPS_RTS))
case("create a QP with more send WRs than the device has", lambda: new_qp(wr=1 << 24))
case("register an MR with remote write but not local write",
     lambda: MR(pd, 4096, e.IBV_ACCESS_REMOTE_WRITE))
case("register an MR with remote atomic but not local write",
     lambda: MR(pd, 4096, e.IBV_ACCESS_REMOTE_ATOMIC))
case("create a CQ with more entries than the device has", lambda: CQ(ctx, 1 << 30))
case("allocate a memory window of type 3", lambda: MW(pd, 3))

# shared receive queues, address handles and UD QPs (errnos as rxe gives;
# an SRQ a QP uses is EBUSY to destroy, which pyverbs does not show: its
# close() closes the QPs first -- test/unit/test_ud.c checks it)
case("create an SRQ of 0 receives",
     lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=0, max_sge=1))))
case("create an SRQ of more receives than the device has",
     lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=1 << 20, max_sge=1))))
case("create an SRQ of more SGEs than the device has",
     lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=4, max_sge=17))))
case("create an SRQ whose limit is above its size",
     lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=4, max_sge=1, srq_limit=5))))
srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=4, max_sge=1)))
for _ in range(4):
    srq.post_recv(RecvWR(num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)]))
case("post more receives to an SRQ than it holds",
     lambda: srq.post_recv(RecvWR(num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)])))
case("shrink an SRQ below the receives it holds",
     lambda: srq.modify(SrqAttr(max_wr=2), e.IBV_SRQ_MAX_WR))
case("arm an SRQ's limit above its size",
     lambda: srq.modify(SrqAttr(srq_limit=9), e.IBV_SRQ_LIMIT))
case("post a receive with more SGEs than the SRQ takes",
     lambda: srq.post_recv(RecvWR(num_sge=2, sg=[SGE(mr.buf, 8, mr.lkey)] * 2)))
srq_qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=srq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                                     max_recv_sge=1)))
to(srq_qp, e.IBV_QPS_INIT, INIT_MASK, port_num=1)
case("post_recv on a QP whose receives are its SRQ's", lambda: srq_qp.post_recv(recv))
case("create an address handle without a global route",
     lambda: AH(pd, attr=AHAttr(port_num=1, is_global=0)))
case("create an address handle to a multicast GID",
     lambda: AH(pd, attr=AHAttr(port_num=1, is_global=1,
                                gr=GlobalRoute(dgid=GID("ff02:0000:0000:0000:0000:0000:0000:0001"), sgid_index=0))))
ud = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                       cap=QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                                 max_recv_sge=1)))
case("modify a UD QP RESET to INIT without a Q_Key",
     lambda: to(ud, e.IBV_QPS_INIT, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT,
                port_num=1))

# the extended verbs (issue 38)
case("create an extended CQ asking for completion timestamps",
     lambda: CQEX(ctx, CqInitAttrEx(cqe=16, wc_flags=e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)))
case("create an extended CQ with more entries than the device has",
     lambda: CQEX(ctx, CqInitAttrEx(cqe=1 << 30, wc_flags=0)))
case("create an extended CQ on a completion vector the device has not",
     lambda: CQEX(ctx, CqInitAttrEx(cqe=16, wc_flags=0, comp_vector=ctx.num_comp_vectors + 1)))
case("create an extended CQ with a creation flag the device has not",
     lambda: CQEX(ctx, CqInitAttrEx(cqe=16, wc_flags=0, comp_mask=e.IBV_CQ_INIT_ATTR_MASK_FLAGS,
                                    flags=e.IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)))
cap1 = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
EX = e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS


def new_qpex(qpt, ops, comp_mask=EX, create_flags=0):
    return QPEx(ctx, QPInitAttrEx(qp_type=qpt, scq=cq, rcq=cq, cap=cap1, pd=pd,
                                  comp_mask=comp_mask, create_flags=create_flags,
                                  send_ops_flags=ops))


case("create an extended UD QP for RDMA WRITE",
     lambda: new_qpex(e.IBV_QPT_UD, e.IBV_QP_EX_WITH_RDMA_WRITE))
case("create an extended UC QP for RDMA READ",
     lambda: new_qpex(e.IBV_QPT_UC, e.IBV_QP_EX_WITH_RDMA_READ))
case("create an extended RC QP for TSO",
     lambda: new_qpex(e.IBV_QPT_RC, e.IBV_QP_EX_WITH_TSO))
case("create an extended QP with a creation flag",
     lambda: new_qpex(e.IBV_QPT_RC, e.IBV_QP_EX_WITH_SEND,
                      EX | e.IBV_QP_INIT_ATTR_CREATE_FLAGS, e.IBV_QP_CREATE_SCATTER_FCS))
qpx = new_qpex(e.IBV_QPT_RC, e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_RDMA_WRITE)


def batch(*steps):
    qpx.wr_start()
    try:
        for st in steps:
            st()
    except BaseException:
        qpx.wr_abort()
        raise
    qpx.wr_complete()


case("ibv_wr_complete on a QP in RESET",
     lambda: batch(qpx.wr_send, lambda: qpx.wr_set_sge(SGE(mr.buf, 8, mr.lkey))))
to(qpx, e.IBV_QPS_INIT, INIT_MASK, port_num=1)
case("ibv_wr_complete of a batch with an SGE list longer than the QP takes",
     lambda: batch(qpx.wr_send, lambda: qpx.wr_set_sge_list(2, [SGE(mr.buf, 8, mr.lkey)] * 2)))
case("ibv_wr_complete of a batch deeper than the send queue",
     lambda: batch(*[f for _ in range(5) for f in
                     (qpx.wr_send, lambda: qpx.wr_set_sge(SGE(mr.buf, 8, mr.lkey)))]))
case("ibv_wr_abort, then ibv_wr_start again", lambda: (qpx.wr_start(), qpx.wr_abort()))
mw_mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_MW_BIND)
case("rereg an MR with no flag", lambda: mw_mr.rereg(0, None, 0, 0, 0))
case("rereg an MR with an unknown flag", lambda: mw_mr.rereg(8, None, 0, 0, 0))
case("rereg an MR's access with remote write but not local write",
     lambda: mw_mr.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0, e.IBV_ACCESS_REMOTE_WRITE))
case("rereg an MR's access without the access flag",
     lambda: mw_mr.rereg(e.IBV_REREG_MR_CHANGE_PD, pd, 0, 0, e.IBV_ACCESS_LOCAL_WRITE))
case("rereg an MR's memory to none",
     lambda: mw_mr.rereg(e.IBV_REREG_MR_CHANGE_TRANSLATION, None, 0, 0, 0))
