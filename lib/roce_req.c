/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester, as far as mwpath needs one today.  SEND, SEND_WITH_IMM,
 * SEND_WITH_INV, RDMA_WRITE and RDMA_WRITE_WITH_IMM leave a QP's send ring
 * as packets segmented by the path MTU (IBA 9.2), placed on the port's
 * requester ring; the lcore that owns the port's first queue sends them.
 * UC WQEs complete once their packets are on that ring; RC WQEs complete
 * when an ACK covers their last PSN, or with an error when a NAK names a
 * PSN inside them (IBA 9.7.5.2).
 *
 * Not here yet: READ and ATOMIC requests (they complete with
 * IBV_WC_LOC_QP_OP_ERR), retransmission (a PSN sequence NAK or an RNR NAK
 * completes the WQE with RETRY_EXC_ERR / RNR_RETRY_EXC_ERR instead of
 * sending it again), and the local ACK timeout.
 */
#include <string.h>

#include <rte_ring.h>

#include "mwp_port.h"
#include "mwp_priv.h"
#include "roce_build.h"
#include "roce_req.h"

#define PSN_MASK	0xffffffu
#define REQ_MAX_PKTS	64	/* packets one WQE may take (64 x path MTU) */

static inline uint32_t
mtu_bytes(const struct mwp_qp *qp)
{
	return 128u << qp->path_mtu;	/* IBV_MTU_256 == 1 */
}

/* Where our requests go: the configured peer. */
static int
req_flow(const struct mwp_qp *qp, struct mwp_flow *f)
{
	const struct mwp_port_conf *pc = &qp->port->conf;

	if (!qp->has_peer_mac)
		return -1;
	memset(f, 0, sizeof(*f));
	rte_ether_addr_copy(&pc->mac, &f->smac);
	rte_ether_addr_copy(&qp->peer_mac, &f->dmac);
	f->ipv6 = !qp->peer_ipv4;
	if (f->ipv6) {
		if (!pc->has_ipv6)
			return -1;
		memcpy(f->sip6, pc->ipv6, 16);
		memcpy(f->dip6, qp->peer_gid, 16);
	} else {
		if (!pc->has_ipv4)
			return -1;
		f->sip4 = pc->ipv4;
		memcpy(&f->dip4, qp->peer_gid + 12, 4);
	}
	/* per-QP UDP source port, from the dynamic range (RoCEv2 A17.4.3) */
	f->sport = (uint16_t)(0xc000 | (qp->ibqp.qp_num & 0x3fff));
	return 0;
}

/* Copy len bytes starting at byte off of the WQE's gather list to dst;
 * host[i] is where SGE i starts in memory. */
static void
gather(const struct mwp_wqe *w, uint8_t *const *host, uint64_t off, uint8_t *dst,
       uint32_t len)
{
	for (uint32_t i = 0; i < w->num_sge && len != 0; i++) {
		uint64_t l = w->sge[i].length;

		if (off >= l) {
			off -= l;
			continue;
		}
		l = RTE_MIN(l - off, (uint64_t)len);
		memcpy(dst, host[i] + off, l);
		dst += l;
		len -= (uint32_t)l;
		off = 0;
	}
}

/* Every SGE lies inside a local region of the QP's PD; SGE addresses are
 * in the region's iova space, as verbs has it for ibv_reg_mr_iova. */
static bool
sges_valid(struct mwp_qp *qp, const struct mwp_wqe *w, uint8_t **host,
	   uint64_t *total)
{
	*total = 0;
	for (uint32_t i = 0; i < w->num_sge; i++) {
		const struct ibv_sge *s = &w->sge[i];
		struct mwp_mr *mr;

		host[i] = NULL;
		if (s->length == 0)
			continue;
		mr = mwp_mr_by_key(qp->dev, s->lkey);
		if (mr == NULL || mr->ibmr.pd != qp->ibqp.pd || s->addr < mr->iova ||
		    s->addr - mr->iova > mr->ibmr.length ||
		    s->length > mr->ibmr.length - (s->addr - mr->iova))
			return false;
		host[i] = (uint8_t *)mr->ibmr.addr + (s->addr - mr->iova);
		*total += s->length;
	}
	return true;
}

/* The opcode of packet i of n (IBA 9.4.1 sequences, RC and UC share them). */
static uint8_t
seg_opcode(const struct mwp_wqe *w, bool uc, uint32_t i, uint32_t n)
{
	const bool first = i == 0, last = i == n - 1;
	uint8_t base = uc ? ROCE_OP_UC_SEND_FIRST : ROCE_OP_RC_SEND_FIRST;

	switch (w->opcode) {
	case IBV_WR_SEND_WITH_INV:
		if (last)
			return first ? ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE :
				       ROCE_OP_RC_SEND_LAST_WITH_INVALIDATE;
		return first ? base : base + 1;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM: {
		bool imm = w->opcode == IBV_WR_SEND_WITH_IMM;

		if (first && last)
			return base + (imm ? 5 : 4);
		if (last)
			return base + (imm ? 3 : 2);
		return first ? base : base + 1;
	}
	default: {	/* RDMA_WRITE(_WITH_IMM) */
		bool imm = w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;

		base += 6;
		if (first && last)
			return base + (imm ? 5 : 4);
		if (last)
			return base + (imm ? 3 : 2);
		return first ? base : base + 1;
	}
	}
}

enum mwp_tx_result
mwp_req_tx(struct mwp_qp *qp, const struct mwp_wqe *w, void *arg)
{
	struct rte_mbuf *m[REQ_MAX_PKTS];
	uint8_t *host[MWP_MAX_SGE];
	uint8_t seg[4096];
	const bool uc = qp->ibqp.qp_type == IBV_QPT_UC;
	struct mwp_port *port = qp->port;
	struct mwp_flow f;
	uint64_t total;
	uint32_t mtu = mtu_bytes(qp), n;

	RTE_SET_USED(arg);
	switch (w->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		break;
	case IBV_WR_SEND_WITH_INV:
		if (!uc)
			break;
		return MWP_TX_UNSUPPORTED;	/* UC has no SEND with invalidate */
	default:
		return MWP_TX_UNSUPPORTED;
	}
	if (port == NULL || port->req_tx == NULL || req_flow(qp, &f) != 0)
		return MWP_TX_UNSUPPORTED;
	if (!sges_valid(qp, w, host, &total))
		return MWP_TX_LOC_PROT;
	n = total == 0 ? 1 : (uint32_t)((total + mtu - 1) / mtu);
	if (n > REQ_MAX_PKTS || total > UINT32_MAX)
		return MWP_TX_LOC_LEN;
	if (!uc && qp->req_count == MWP_REQ_OUT)
		return MWP_TX_BUSY;
	if (rte_ring_free_count(port->req_tx) < n ||
	    rte_pktmbuf_alloc_bulk(port->mp, m, n) != 0)
		return MWP_TX_BUSY;	/* tried again on the next pass */

	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = i * mtu;
		uint32_t len = (uint32_t)RTE_MIN((uint64_t)mtu, total - off);
		struct mwp_hdrs h = {
			.opcode = seg_opcode(w, uc, i, n),
			.dqpn = qp->dest_qpn,
			.psn = (qp->sq_psn + i) & PSN_MASK,
			.ackreq = !uc && i == n - 1,
			.se = i == n - 1 && (w->send_flags & IBV_SEND_SOLICITED),
		};

		h.reth.va = w->rdma.remote_addr;
		h.reth.rkey = w->rdma.rkey;
		h.reth.dmalen = (uint32_t)total;
		h.imm = w->imm_or_inv;
		h.ieth_rkey = w->imm_or_inv;
		gather(w, host, off, seg, len);
		if (mwp_build(m[i], &f, &h, seg, len, NULL) != 0) {
			rte_pktmbuf_free_bulk(m, n);
			return MWP_TX_LOC_LEN;
		}
	}
	/* free room was checked, and only this thread (holding the device
	 * lock) produces */
	rte_ring_enqueue_bulk(port->req_tx, (void **)m, n, NULL);
	qp->req_sent_pkts += n;
	qp->sq_psn = (qp->sq_psn + n) & PSN_MASK;
	if (uc)
		return MWP_TX_DONE;
	qp->req_out[(qp->req_head + qp->req_count) % MWP_REQ_OUT] =
		(qp->sq_psn - 1) & PSN_MASK;
	qp->req_count++;
	return MWP_TX_PENDING;
}

/* a is at or before b, in the 24-bit PSN space */
static inline bool
psn_le(uint32_t a, uint32_t b)
{
	return ((b - a) & PSN_MASK) < 0x800000;
}

static enum ibv_wc_status
nak_status(uint8_t syndrome)
{
	switch (syndrome) {
	case ROCE_AETH_NAK_PSN_SEQ:
		return IBV_WC_RETRY_EXC_ERR;	/* no retransmission yet */
	case ROCE_AETH_NAK_INV_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case ROCE_AETH_NAK_REM_ACC:
		return IBV_WC_REM_ACCESS_ERR;
	default:
		return IBV_WC_REM_OP_ERR;
	}
}

void
mwp_req_ack(struct mwp_qp *qp, uint32_t psn, uint8_t syndrome)
{
	const uint8_t type = syndrome & ROCE_AETH_TYPE_MASK;

	pthread_mutex_lock(&qp->dev->lock);
	/* an ACK or NAK at psn also acknowledges everything before it */
	while (qp->req_count != 0) {
		uint32_t last = qp->req_out[qp->req_head];
		bool covered = type == ROCE_AETH_ACK ? psn_le(last, psn) :
			       psn_le(last, (psn - 1) & PSN_MASK);

		if (!covered)
			break;
		mwp_qp_tx_complete_locked(qp, IBV_WC_SUCCESS);
		qp->req_head = (qp->req_head + 1) % MWP_REQ_OUT;
		qp->req_count--;
	}
	if (type != ROCE_AETH_ACK && qp->req_count != 0) {
		enum ibv_wc_status st = type == ROCE_AETH_RNR_NAK ?
					IBV_WC_RNR_RETRY_EXC_ERR : nak_status(syndrome);

		mwp_qp_tx_complete_locked(qp, st);
		qp->req_head = (qp->req_head + 1) % MWP_REQ_OUT;
		qp->req_count--;
	}
	pthread_mutex_unlock(&qp->dev->lock);
}
