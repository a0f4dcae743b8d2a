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
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
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
