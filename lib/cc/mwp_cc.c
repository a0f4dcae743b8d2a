/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control's frames (mwp_cc.h): CNPs out for frames marked CE
 * (the notification point), CNPs in to DCQCN (the reaction point).
 *
 * A CNP (RoCEv2, IBA A17.9.3) goes to the QP that sent the marked frame:
 * an RC or UC QP's destination QP, a UD datagram's source QP (its DETH).
 * Its BTH has opcode 0x81, BECN set, PSN 0 and the default P_Key; 16
 * reserved bytes and the ICRC follow.  It goes back the way the frame
 * came (addresses swapped, the frame's UDP source port) with the port's
 * CNP DSCP and no ECN capability: a CNP is the last frame a switch should
 * have to drop or mark.
 */
#include "mwp_cc.h"
#include "roce_build.h"

/* The QP that sent p: the one a CNP for it goes to. */
static uint32_t
sender_qpn(const struct mwp_qp *qp, const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	if (p->mask & ROCE_M_DETH) {
		const struct roce_deth *d = rte_pktmbuf_mtod_offset(m, const struct roce_deth *,
			p->bth_off + sizeof(struct roce_bth));

		return deth_sqpn(d);
	}
	return qp->dest_qpn;
}

void
mwp_cc_ce(struct mwp_tx *tx, struct mwp_port *port, struct mwp_qp *qp,
	  const struct rte_mbuf *m, const struct mwp_pkt *p, uint64_t now,
	  struct mwp_stats *st)
{
	struct mwp_hdrs h = { .opcode = ROCE_OP_CNP, .becn = true };
	struct mwp_flow f;
	struct rte_mbuf *c;
	int ret;

	st->ce++;
	qp->cc_st.ce++;
	if (!port->conf.cc.notify)
		return;
	if (qp->cnp_tsc != 0 && now - qp->cnp_tsc < port->cnp_gap)
		return;
	c = mwp_tx_slot(tx);
	if (c == NULL)
		return;		/* counted: a later mark asks again */
	mwp_flow_mirror(&f, m, p, ROCE_ECN_NOT_ECT);
	f.tos = (uint8_t)(port->conf.cc.cnp_dscp << 2);
	h.dqpn = sender_qpn(qp, m, p);
	ret = mwp_build_deferred(c, &f, &h, NULL, 0, mwp_tx_next_pkt(tx));
	if (unlikely(ret < 0)) {
		rte_pktmbuf_free(c);
		return;
	}
	mwp_tx_queue(tx, c, ret == 1);
	qp->cnp_tsc = now != 0 ? now : 1;
	qp->cc_st.cnp_sent++;
	st->cnp_tx++;
}

void
mwp_cc_cnp(struct mwp_port *port, struct mwp_qp *qp, uint64_t now, struct mwp_stats *st)
{
	st->cnp_rx++;
	qp->cc_st.cnp_received++;
	if (port->conf.cc.react)
		mwp_dcqcn_cnp(&qp->dcqcn, &port->dcqcn, now);
}
