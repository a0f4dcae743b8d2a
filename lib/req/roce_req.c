/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester's sending half: the send queue's data WQEs (roce_req.h)
 * as packets on the wire, new and sent again.
 *
 * Every data WQE keeps its place in the QP's window until it is complete,
 * so any of its packets can be built again from it: there is no copy of a
 * sent frame.  PSNs are given when a WQE is first sent (a READ takes one
 * PSN per response it expects, IBA 9.7.4.1.4).  The state is three PSNs:
 * the next new one (psn), the oldest not acknowledged (una) and the next
 * to send (tx_psn, with tx_pos the window position holding it); the
 * completer (roce_comp.c) moves them back for a go-back-N.  A WQE leaves
 * once the window (MWP_REQ_WINDOW) and IBA 9.5's limit on outstanding
 * READs and ATOMICs allow, and once the peer's MAC is known (configured,
 * the port's own, or resolved by the neighbour table, whose probes go out
 * from here).
 *
 * UC: no acknowledgements, no retransmission; a WQE completes once its
 * last packet is on its way.
 */
#include <string.h>

#include "mwp_ctrl_priv.h"
#include "mwp_neigh_priv.h"
#include "mwp_port.h"
#include "mwp_wqe.h"
#include "roce_build.h"
#include "roce_comp.h"

/* How often a requester without the peer's MAC looks again (the
 * neighbour table paces its own probes). */
#define MAC_RETRY_US	1000
/* How long a MAC from the neighbour table is used before asking again. */
#define MAC_RECHECK_US	1000000

/* ---- building requests ---- */

/* The opcode of packet i of n (IBA 9.4.1's sequences; RC and UC share
 * them, UC 0x20 above; UD sends one packet). */
static uint8_t
seg_opcode(const struct mwp_wqe *w, uint8_t transport, uint32_t i, uint32_t n)
{
	const bool first = i == 0, last = i == n - 1;
	const uint8_t base = transport == ROCE_TRANSPORT_UC ? ROCE_OP_UC_SEND_FIRST :
			     ROCE_OP_RC_SEND_FIRST;

	if (transport == ROCE_TRANSPORT_UD)
		return w->opcode == IBV_WR_SEND_WITH_IMM ?
		       ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE : ROCE_OP_UD_SEND_ONLY;
	switch (w->opcode) {
	case IBV_WR_RDMA_READ:
		return ROCE_OP_RC_RDMA_READ_REQUEST;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return ROCE_OP_RC_COMPARE_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return ROCE_OP_RC_FETCH_ADD;
	case IBV_WR_ATOMIC_WRITE:
		/* one packet: the RETH (DMA length 8) and the value, built
		 * below as a WRITE ONLY's */
		return ROCE_OP_RC_ATOMIC_WRITE;
	case IBV_WR_SEND_WITH_INV:
		if (last)
			return first ? ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE :
				       ROCE_OP_RC_SEND_LAST_WITH_INVALIDATE;
		return first ? base : base + 1;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM: {
		const bool imm = w->opcode == IBV_WR_SEND_WITH_IMM;

		if (first && last)
			return base + (imm ? 5 : 4);
		if (last)
			return base + (imm ? 3 : 2);
		return first ? base : base + 1;
	}
	default: {	/* RDMA_WRITE(_WITH_IMM) */
		const bool imm = w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		const uint8_t wb = base + 6;

		if (first && last)
			return wb + (imm ? 5 : 4);
		if (last)
			return wb + (imm ? 3 : 2);
		return first ? wb : wb + 1;
	}
	}
}

/* The GID WQE e goes to: a UD send's own, else the QP's peer's. */
static inline const uint8_t *
dest_gid(const struct mwp_qp *qp, const struct mwp_swqe *e)
{
	return qp->transport == ROCE_TRANSPORT_UD ? e->w.ud.dest.gid : qp->peer_gid;
}

/* The headers towards gid (its MAC known). */
static void
make_flow(struct mwp_qp *qp, const uint8_t *gid)
{
	const struct mwp_port_conf *pc = &qp->port->conf;
	struct mwp_flow *f = &qp->req.flow;

	memset(f, 0, sizeof(*f));
	rte_ether_addr_copy(&pc->mac, &f->smac);
	rte_ether_addr_copy(&qp->req.mac, &f->dmac);
	f->ipv6 = !mwp_ip_is_v4mapped(gid);
	if (f->ipv6) {
		memcpy(f->sip6, pc->ipv6, 16);
		memcpy(f->dip6, gid, 16);
	} else {
		f->sip4 = pc->ipv4;
		memcpy(&f->dip4, gid + 12, 4);
	}
	/* the AV's DSCP, and the port's ECN codepoint */
	f->tos = (uint8_t)((qp->tclass & ~ROCE_ECN_MASK) | qp->port->ecn);
	/* one UDP source port per QP, from the dynamic range (RoCEv2
	 * A17.4.3): a peer's RSS keeps the QP on one queue */
	f->sport = (uint16_t)(0xc000 | (qp->ibqp.qp_num & 0x3fff));
	/* the headers every request copies (a UD QP's change with each
	 * destination: it lays them out each time) */
	mwp_flow_tmpl_make(&qp->req.tmpl, f);
}

/* Packet tx_psn of WQE e into m.  Returns the PSN after it, or -1 if a
 * local buffer is gone. */
static int64_t
build_request(struct mwp_qp *qp, struct mwp_swqe *e,
	      struct rte_mbuf *m, struct mwp_pkt *p, int *icrc)
{
	const struct mwp_wqe *w = &e->w;
	const uint32_t mtu = mwp_qp_mtu_bytes(qp);
	const uint32_t psn = qp->req.tx_psn;
	const uint32_t i = (psn - e->first_psn) & ROCE_PSN_MASK;
	const bool uc = !is_rc(qp);
	struct mwp_hdrs h = {
		.opcode = seg_opcode(w, qp->transport, i, e->npsn),
		.dqpn = qp->dest_qpn,
		.psn = psn,
	};
	uint8_t buf[4096];
	const uint8_t *data = NULL;
	uint32_t len = 0, span;
	uint32_t next = (psn + 1) & ROCE_PSN_MASK;
	int ret;

	switch (w->opcode) {
	case IBV_WR_RDMA_READ:
		/* from the first response not received: the rest */
		h.reth.va = w->rdma.remote_addr + (uint64_t)i * mtu;
		h.reth.rkey = w->rdma.rkey;
		h.reth.dmalen = e->total - RTE_MIN(e->total, i * mtu);
		h.ackreq = true;
		e->rd_req_psn = psn;
		next = (e->last_psn + 1) & ROCE_PSN_MASK;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		h.atmeth.va = w->rdma.remote_addr;
		h.atmeth.rkey = w->rdma.rkey;
		h.atmeth.swap_add = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
				    w->rdma.swap : w->rdma.compare_add;
		h.atmeth.compare = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
				   w->rdma.compare_add : 0;
		h.ackreq = true;
		break;
	default: {
		const uint64_t off = (uint64_t)i * mtu;
		const bool last = i == e->npsn - 1;

		len = (uint32_t)RTE_MIN((uint64_t)mtu, e->total - off);
		h.reth.va = w->rdma.remote_addr;
		h.reth.rkey = w->rdma.rkey;
		h.reth.dmalen = e->total;
		h.imm = w->imm_or_inv;
		h.ieth_rkey = w->imm_or_inv;
		h.ackreq = !uc && last;
		h.se = last && (w->send_flags & IBV_SEND_SOLICITED);
		if (len != 0) {
			/* straight from one buffer, or gathered */
			data = mwp_wqe_span(qp, e, off, len, false, &span);
			if (data == NULL)
				return -1;
			if (span < len) {
				if (!mwp_wqe_copy(qp, e, off, buf, len, false))
					return -1;
				data = buf;
			}
		}
		break;
	}
	}
	if (qp->transport == ROCE_TRANSPORT_UD) {
		/* to the QP the work request names, with its Q_Key -- the
		 * QP's own if its high bit is set (IBA 10.2.4.3) -- and the
		 * address handle's IP header fields */
		struct mwp_flow *f = &qp->req.flow;

		h.dqpn = w->ud.remote_qpn;
		h.deth.qkey = (w->ud.remote_qkey & UINT32_C(0x80000000)) ? qp->qkey :
			      w->ud.remote_qkey;
		h.deth.sqpn = qp->ibqp.qp_num;
		f->tos = (uint8_t)((w->ud.dest.tclass & ~ROCE_ECN_MASK) | qp->port->ecn);
		f->ttl = w->ud.dest.hop_limit;
		f->flow_label = w->ud.dest.flow_label;
	}
	/* the flow's headers copied, not laid out: 57 instructions fewer a
	 * 64 B WRITE from post to completion (callgrind, loop_verbs_bench) */
	if (qp->transport != ROCE_TRANSPORT_UD && likely(qp->req.tmpl.usable))
		ret = mwp_build_tmpl(m, &qp->req.tmpl, &h, data, len, p);
	else
		ret = mwp_build_deferred(m, &qp->req.flow, &h, data, len, p);
	if (ret < 0)
		return -1;
	*icrc = ret;
	if (len != 0)
		qp->req.st.bytes += len;
	return next;
}

/* ---- sending ---- */

/* What peer_mac found. */
enum mac_res {
	MAC_WAIT,	/* not yet: the timer looks again (or the QP failed) */
	MAC_OK,
	MAC_LOST,	/* UD: nobody answers for the address */
};

/* Is the MAC of gid, where the next packet goes, known?  The configured
 * one, or what the port's neighbour table found for it (looked up again
 * every second, and whenever a UD QP sends somewhere new; probes go out
 * through tx).  Not yet: the timer looks again.  Never -- the table gave
 * up -- the oldest WQE of an RC or UC QP fails; a UD datagram is lost,
 * as on a wire (MAC_LOST). */
static enum mac_res
peer_mac(struct mwp_tx *tx, struct mwp_ctrl_ctx *ctrl, struct mwp_qp *qp, const uint8_t *gid)
{
	struct mwp_req *r = &qp->req;
	const uint64_t now = mwp_sched_now(qp);
	struct rte_ether_addr mac;
	enum mwp_neigh_res res;
	bool probe, unicast;

	if (qp->transport == ROCE_TRANSPORT_UD && memcmp(r->gid, gid, 16) != 0) {
		/* another destination: its MAC, and headers towards it */
		memcpy(r->gid, gid, 16);
		r->have_mac = 0;
	}
	if (__atomic_load_n(&qp->has_peer_mac, __ATOMIC_ACQUIRE)) {
		if (!r->have_mac || !rte_is_same_ether_addr(&r->mac, &qp->peer_mac)) {
			r->mac = qp->peer_mac;
			r->have_mac = 1;
			make_flow(qp, gid);
		}
		return MAC_OK;
	}
	if (r->have_mac && now - r->mac_tsc < mwp_sched_ns(qp, MAC_RECHECK_US * UINT64_C(1000)))
		return MAC_OK;
	if (mwp_port_is_own_ip(qp->port, gid) &&
	    !rte_is_zero_ether_addr(&qp->port->conf.mac)) {
		/* a QP of this port: to our own MAC, which the poll loop
		 * turns back in */
		if (!r->have_mac || !rte_is_same_ether_addr(&r->mac, &qp->port->conf.mac)) {
			r->mac = qp->port->conf.mac;
			make_flow(qp, gid);
		}
		r->have_mac = 1;
		r->mac_tsc = now;
		return MAC_OK;
	}
	if (qp->port->neigh == NULL)
		res = MWP_NEIGH_UNREACH;
	else
		res = mwp_neigh_resolve(qp->port->neigh, gid, now, &mac, &probe, &unicast);
	if (res != MWP_NEIGH_UNREACH && probe && qp->port->conf.kernel_neigh) {
		/* the kernel resolves: its thread asks it */
		mwp_port_neigh_queue(qp->port, gid, unicast ? &mac : NULL);
	} else if (res != MWP_NEIGH_UNREACH && probe && mwp_tx_room(tx)) {
		struct rte_mbuf *m;

		ctrl->mp = qp->port->mp;
		m = mwp_ctrl_probe(ctrl, gid, unicast ? &mac : NULL);
		if (m != NULL)
			mwp_tx_queue(tx, m, false);
	}
	switch (res) {
	case MWP_NEIGH_OK:
		if (!r->have_mac || !rte_is_same_ether_addr(&r->mac, &mac)) {
			r->mac = mac;
			make_flow(qp, gid);
		}
		r->have_mac = 1;
		r->mac_tsc = now;
		return MAC_OK;
	case MWP_NEIGH_WAIT:
		/* a MAC known before stays in use while it is asked again */
		if (r->have_mac)
			return MAC_OK;
		r->st.unresolved++;
		if (!mwp_timer_armed(&r->tmr))
			mwp_timer_arm(mwp_sched_wheel(qp), &r->tmr,
				      now + mwp_sched_ns(qp, MAC_RETRY_US * UINT64_C(1000)));
		return MAC_WAIT;
	default:
		/* nobody answers for that address */
		r->have_mac = 0;
		r->st.unresolved++;
		if (qp->transport == ROCE_TRANSPORT_UD)
			return MAC_LOST;
		mwp_comp_fail(qp, mwp_comp_oldest(qp), IBV_WC_RETRY_EXC_ERR);
		return MAC_WAIT;
	}
}

/* e's last packet is sent (or, UD, lost): the WQEs behind it may run;
 * UC and UD complete it now, RC once it is acknowledged. */
static void
wqe_sent(struct mwp_qp *qp, struct mwp_swqe *e, bool rc)
{
	struct mwp_req *r = &qp->req;

	r->tx_pos++;
	if (!e->sent) {
		/* binds and invalidations behind it may run */
		e->sent = 1;
		if (--r->nb_unsent == 0 && rte_ring_count(qp->sq) != 0)
			mwp_sched_kick_sq(qp);
	}
	if (!rc) {
		mwp_comp_complete(qp, e);
		mwp_sq_deliver(qp);
	}
}

/* Send what this QP has to send while c has room.  true: more left. */
static bool
req_send(struct mwp_tx *tx, struct mwp_ctrl_ctx *ctrl, struct mwp_qp *qp)
{
	struct mwp_req *r = &qp->req;
	const bool rc = is_rc(qp);

	if (__atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE) != IBV_QPS_RTS ||
	    r->rnr_wait)
		return false;
	/* delivered entries leave the window: never point before it */
	if ((int32_t)(r->tx_pos - qp->sq_head) < 0)
		r->tx_pos = qp->sq_head;
	while (mwp_tx_room(tx)) {
		enum mac_res mac;
		struct mwp_swqe *e;
		struct rte_mbuf *m;
		struct mwp_pkt *p;
		int64_t next;
		int icrc = 0;
		bool again;

		while (r->tx_pos != qp->sq_tail &&
		       mwp_swqe_at(qp, r->tx_pos)->state != MWP_SWQE_REQ)
			r->tx_pos++;
		if (r->tx_pos == qp->sq_tail)
			return false;
		e = mwp_swqe_at(qp, r->tx_pos);
		if (e->started && (psn_diff(r->tx_psn, e->first_psn) < 0 ||
				   psn_diff(r->tx_psn, e->last_psn) > 0)) {
			/* tx_pos passed WQEs that completed after a go-back
			 * pointed at them: send this one from its first PSN
			 * not acknowledged */
			r->tx_psn = psn_diff(r->una, e->first_psn) > 0 &&
				    psn_diff(r->una, e->last_psn) <= 0 ? r->una : e->first_psn;
		}
		mac = peer_mac(tx, ctrl, qp, dest_gid(qp, e));
		if (unlikely(mac != MAC_OK)) {
			if (mac == MAC_WAIT)
				return false;
			/* UD promises no delivery: the work request
			 * completes, its datagram never left */
			r->st.ud_lost++;
			r->psn = (r->psn + 1) & ROCE_PSN_MASK;
			wqe_sent(qp, e, false);
			continue;
		}
		if (!e->started) {
			/* the window, and IBA 9.5's limit on outstanding
			 * READs and ATOMICs: later WQEs wait in order */
			if (rc && (uint32_t)psn_diff(r->psn, r->una) + e->npsn > MWP_REQ_WINDOW)
				return false;
			if (e->rd_atomic && r->rd_out >= RTE_MAX((uint32_t)qp->max_rd_atomic, 1u))
				return false;
			e->first_psn = r->psn;
			e->last_psn = (r->psn + e->npsn - 1) & ROCE_PSN_MASK;
			e->resp_psn = e->first_psn;
			e->rd_req_psn = e->first_psn;
			e->started = 1;
			r->psn = (r->psn + e->npsn) & ROCE_PSN_MASK;
			r->tx_psn = e->first_psn;
			if (e->rd_atomic)
				r->rd_out++;
		}
		/* DCQCN's pacer, for a QP a CNP has slowed: it stays on the
		 * senders' list and is looked at again on the next pass */
		if (unlikely(qp->dcqcn.limited) &&
		    !mwp_dcqcn_may_send(&qp->dcqcn, &qp->port->dcqcn, mwp_sched_now(qp)))
			return true;
		m = mwp_tx_slot(tx);
		if (m == NULL) {
			r->st.no_mbuf++;
			return true;
		}
		p = mwp_tx_next_pkt(tx);
		next = build_request(qp, e, m, p, &icrc);
		if (next < 0) {
			rte_pktmbuf_free(m);
			mwp_comp_fail(qp, e, IBV_WC_LOC_PROT_ERR);
			return false;
		}
		again = psn_diff(r->tx_psn, r->sent_psn) < 0;
		/* the ACK timer runs while anything is unacknowledged, from
		 * the first packet sent with nothing outstanding (the timer
		 * may be armed already: the wait for the peer's MAC uses it,
		 * and its clock must not be older than this packet) */
		if (rc && (r->una == r->sent_psn || !mwp_timer_armed(&r->tmr))) {
			r->ack_clock = mwp_sched_now(qp);
			if (!mwp_timer_armed(&r->tmr))
				mwp_comp_arm_ack_timer(qp);
		}
		if (unlikely(qp->dcqcn.limited))
			mwp_dcqcn_sent(&qp->dcqcn, &qp->port->dcqcn, rte_pktmbuf_pkt_len(m),
				       mwp_sched_now(qp));
		mwp_tx_queue(tx, m, icrc == 1);
		if (again) {
			r->st.retrans++;
			tx->st->retrans++;
		} else {
			r->st.pkts++;
			r->sent_psn = (uint32_t)next;
		}
		r->tx_psn = (uint32_t)next;
		if (psn_diff(r->tx_psn, e->last_psn) > 0)
			wqe_sent(qp, e, rc);
	}
	return true;
}

void
mwp_req_send_all(struct mwp_owner *o, struct mwp_tx *tx, struct mwp_ctrl_ctx *ctrl)
{
	struct mwp_qp *qp, *nx;

	for (qp = TAILQ_FIRST(&o->tx_list); qp != NULL && mwp_tx_room(tx); qp = nx) {
		nx = TAILQ_NEXT(qp, tx_link);
		if (!req_send(tx, ctrl, qp))
			mwp_sched_untx(qp);
	}
}
