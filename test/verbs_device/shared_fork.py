# SPDX-License-Identifier: BSD-3-Clause
"""What a device with share = on does for processes forked from the one
that opened it (docs/verbs-device.md, "A device shared by
processes"), through pyverbs' RDMA CM.  Run under mwpath-run on such a
device at ADDRESS; prints one "ok: ..." line per check that holds and
"FAIL: ..." for one that does not.

    shared_fork.py ADDRESS

1. A child listens on a port; another child listening on the same port
   is refused (EADDRINUSE): the processes' table of listeners.
2. A child connects to a port nobody listens on and is REJECTED: the
   parent's CM answers for nobody (the lowest part alive), the listening
   child's leaves it alone.
3. Two children connect to the first child's listener, one after the
   other, and exchange a SEND each way: frames between parts.
4. A child forked after the parent made a QP gets no device.
"""
import errno
import os
import sys
import time

import pyverbs.cm_enums as ce
from pyverbs.cmid import CMID, AddrInfo, ConnParam, CMEventChannel, CMEvent
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPCap, QPInitAttr
import pyverbs.enums as e

ADDR = sys.argv[1]
PORT = "7471"


def say(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what), flush=True)


def child(fn, *args):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if fn(*args) else 1
        except Exception as ex:  # noqa: BLE001 - the child's verdict
            print("FAIL: %s: %s" % (fn.__name__, ex), flush=True)
        sys.stdout.flush()
        os._exit(code)
    return pid


def wait(pid):
    return os.waitpid(pid, 0)[1] == 0


def qp_attr():
    return QPInitAttr(qp_type=e.IBV_QPT_RC, cap=QPCap(max_send_wr=4, max_recv_wr=4))


def server(rounds, rfd):
    info = AddrInfo(src=ADDR, src_service=PORT, port_space=ce.RDMA_PS_TCP,
                    flags=ce.RAI_PASSIVE)
    lid = CMID(creator=info, qp_init_attr=qp_attr())
    lid.listen()
    os.write(rfd, b"L")
    for _ in range(rounds):
        conn = lid.get_request()
        mr = conn.reg_msgs(64)
        conn.post_recv(mr)
        conn.accept()
        conn.get_recv_comp()
        conn.post_send(mr)
        conn.get_send_comp()
        conn.disconnect()
        conn.close()
    return True


def second_listener():
    info = AddrInfo(src=ADDR, src_service=PORT, port_space=ce.RDMA_PS_TCP,
                    flags=ce.RAI_PASSIVE)
    lid = CMID(creator=info, qp_init_attr=qp_attr())
    try:
        lid.listen()
    except PyverbsError as ex:
        ok = "Errno: %d" % errno.EADDRINUSE in str(ex)
        say(ok, "a second process listening on the same port is refused EADDRINUSE"
            + ("" if ok else " (%s)" % ex))
        return ok
    say(False, "a second process listened on the same port")
    return False


def client(n):
    info = AddrInfo(src=ADDR, dst=ADDR, dst_service=PORT, port_space=ce.RDMA_PS_TCP)
    cid = CMID(creator=info, qp_init_attr=qp_attr())
    mr = cid.reg_msgs(64)
    cid.post_recv(mr)
    cid.connect()
    cid.post_send(mr)
    cid.get_send_comp()
    cid.get_recv_comp()
    say(True, "client %d connected and exchanged a SEND each way" % n)
    cid.disconnect()
    return True


def refused():
    ch = CMEventChannel()
    cid = CMID(creator=ch, port_space=ce.RDMA_PS_TCP)
    cid.resolve_addr(AddrInfo(src=ADDR, dst=ADDR, dst_service="7999",
                              port_space=ce.RDMA_PS_TCP))
    CMEvent(ch).ack_cm_event()
    cid.resolve_route()
    CMEvent(ch).ack_cm_event()
    pd = PD(cid.context)
    cq = CQ(cid.context, 4)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=1, max_recv_wr=1)))
    cid.connect(ConnParam(qp_num=qp.qp_num))
    ev = CMEvent(ch)
    ok = ev.event_type == ce.RDMA_CM_EVENT_REJECTED
    say(ok, "a connect to a port nobody listens on is REJECTED"
        + ("" if ok else " (event %d)" % ev.event_type))
    ev.ack_cm_event()
    return ok


def orphan():
    try:
        Context(name="mwpath0")
    except PyverbsError:
        say(True, "a child forked after its parent made a QP gets no device")
        return True
    say(False, "a child forked after its parent made a QP opened the device")
    return False


def main():
    ctx = Context(name="mwpath0")
    rfd, wfd = os.pipe()
    srv = child(server, 2, wfd)
    if os.read(rfd, 1) != b"L":
        say(False, "the server listens")
        return 1
    results = [wait(child(second_listener)), wait(child(refused))]
    for n in (1, 2):
        results.append(wait(child(client, n)))
    results.append(wait(srv))
    say(all(results), "every child ended well")
    # the parent makes a QP: a child forked now may not drive the device
    pd = PD(ctx)
    cq = CQ(ctx, 4)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=1, max_recv_wr=1)))
    results.append(wait(child(orphan)))
    del qp
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
