/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's UD home: a SEND or SEND with immediate to a UD QP
 * (opcodes 0x64, 0x65, each a whole message in one packet, with a DETH).
 * UD has no PSN, no answer and no RNR: what cannot be received is
 * dropped and counted, as IBA (9.6.1.4, 10.7.2) and a NIC do --
 *
 *   QP not in RTR/RTS, not UD, or an opcode of another transport
 *   a Q_Key other than the QP's (a refusal, which the guessing defence
 *     counts against its source)
 *   longer than the port's MTU
 *   no receive posted (the QP's own or its SRQ's)
 *   longer than the receive, with its 40-byte GRH area: the receive is
 *     kept for the next message (rxe's class D; nothing is written)
 *
 * What is received fills the receive as rxe and mlx5 fill it: its first
 * 40 bytes the GRH area -- the IPv6 header, or for IPv4 twenty zero
 * bytes and then the IPv4 header -- and the payload after it; the
 * completion carries IBV_WC_GRH, the sender's QP, the immediate, and in
 * sl the frame's network type as ConnectX reports it.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "mwp_guard_priv.h"
#include "mwp_place.h"
#include "roce_resp_priv.h"

/* The GRH area a UD receive starts with (IBA 11.4.1.2). */
#define UD_GRH_LEN	40

/* A RoCE UD completion's sl: what ConnectX reports there (its PRM: bit 3,
 * a UDP header; bits 0-2, the L3 header: 1 IPv6, 2 IPv4), and what UCX's
 * UD reads to find the destination address in the GRH area. */
#define UD_SL_ROCE_V2_IPV6	0x9
#define UD_SL_ROCE_V2_IPV4	0xa

/* The GRH area of a frame: its IPv6 header, or its IPv4 header after
 * twenty zero bytes (RoCEv2 over IPv4, as rxe and mlx5 place it). */
static void
grh_area(uint8_t grh[UD_GRH_LEN], const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, p->l3_off);

	if (p->flags & MWP_PKT_IPV6) {
		memcpy(grh, l3, UD_GRH_LEN);
	} else {
		memset(grh, 0, UD_GRH_LEN - 20);
		memcpy(grh + UD_GRH_LEN - 20, l3, 20);
	}
}

/* Bytes [off, off + n) of the message as the receive holds it -- the GRH
 * area, then the payload -- to dst. */
static void
put(uint8_t *dst, const uint8_t grh[UD_GRH_LEN], const struct rte_mbuf *m,
    const struct mwp_pkt *p, uint32_t off, uint32_t n)
{
	if (off < UD_GRH_LEN) {
		const uint32_t k = RTE_MIN(n, UD_GRH_LEN - off);

		mwp_place(dst, grh + off, k);
		dst += k;
		off += k;
		n -= k;
	}
	if (n != 0) {
		const uint32_t at = p->payload_off + off - UD_GRH_LEN;
		const void *s = rte_pktmbuf_read(m, at, n, dst);

		/* (a payload in several segments is gathered into dst by
		 * rte_pktmbuf_read itself) */
		if (s != dst)
			mwp_place(dst, s, n);
	}
}

/* The message (len bytes with the GRH area) scattered over the
 * receive's SGEs, each checked against its region (the QP's PD, local
 * write, inside it): true, or false at the first SGE refused. */
static bool
place(struct mwp_resp_ctx *c, const struct mwp_qp *qp, const struct mwp_rwqe *rw,
      const struct rte_mbuf *m, const struct mwp_pkt *p, uint32_t len)
{
	uint8_t grh[UD_GRH_LEN];
	uint32_t done = 0;

	grh_area(grh, m, p);
	for (uint32_t i = 0; i < rw->num_sge && done < len; i++) {
		const struct ibv_sge *sg = &rw->sge[i];
		const uint32_t n = RTE_MIN(sg->length, len - done);
		uint8_t *host;

		if (n == 0)
			continue;
		host = mwp_local_addr(mwp_keys_lookup(c->port->keys, sg->lkey),
				      qp->ibqp.pd->handle, sg->addr, n, true);
		if (host == NULL)
			return false;
		put(host, grh, m, p, done, n);
		done += n;
	}
	return true;
}

/* The room of a receive. */
static uint64_t
room(const struct mwp_rwqe *rw)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < rw->num_sge; i++)
		n += rw->sge[i].length;
	return n;
}

/* Why a UD SEND for qp cannot be received before a receive is looked at;
 * MWP_DROP_NONE: it can. */
static enum mwp_drop
ud_check(struct mwp_resp_ctx *c, const struct mwp_qp *qp, const struct rte_mbuf *m,
	 const struct mwp_pkt *p)
{
	const enum ibv_qp_state st = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE);
	const struct roce_deth *deth = mwp_pkt_eh(m, p, ROCE_EH_DETH);
	uint8_t ip[16];

	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS)
		return MWP_DROP_QP_STATE;
	if (qp->transport != ROCE_TRANSPORT_UD ||
	    roce_opcode_transport(p->opcode) != ROCE_TRANSPORT_UD)
		return MWP_DROP_WRONG_TRANSPORT;
	if (deth_qkey(deth) != qp->qkey) {
		mwp_guard_refused(c->guard, mwp_pkt_src_ip(m, p, ip), mwp_resp_now(c));
		return MWP_DROP_UD_QKEY;
	}
	if (p->payload_len > mwp_qp_mtu_bytes(qp))
		return MWP_DROP_UD_TOO_LONG;
	return MWP_DROP_NONE;
}

bool
mwp_resp_ud(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	    const struct mwp_pkt *p)
{
	const uint32_t len = UD_GRH_LEN + p->payload_len;
	struct rte_ring *ring = mwp_rq_ring(qp);
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	const struct roce_immdt *imm;
	struct mwp_rwqe rw;
	enum mwp_drop e;

	if (unlikely(c->guard->nb_blocked != 0) &&
	    mwp_guard_blocked_frame(c->guard, m, p, mwp_resp_now(c))) {
		drop(c, MWP_DROP_GUESSING);
		return false;
	}
	qp->resp.st.rx_pkts++;
	qp->resp.st.rx_bytes += rte_pktmbuf_pkt_len(m);
	e = ud_check(c, qp, m, p);
	if (e != MWP_DROP_NONE) {
		drop(c, e);
		return false;
	}
	/* the next receive, looked at before it is taken: one too short
	 * stays for the next message */
	if (rte_ring_dequeue_bulk_elem_start(ring, &rw, sizeof(rw), 1, NULL) != 1) {
		drop(c, MWP_DROP_UD_NO_RECV);
		return false;
	}
	MWP_TSAN_ACQUIRE(ring);
	if (room(&rw) < len) {
		rte_ring_dequeue_elem_finish(ring, 0);
		drop(c, MWP_DROP_UD_RECV_SHORT);
		return false;
	}
	rte_ring_dequeue_elem_finish(ring, 1);
	if (qp->srq != NULL)
		mwp_srq_taken(qp->srq);
	/* an SGE its region refuses: the program's own error, completed
	 * so (the QP then goes to ERR, as for any failed receive); the
	 * frame was acted on */
	if (!place(c, qp, &rw, m, p, len))
		status = IBV_WC_LOC_PROT_ERR;
	imm = (p->mask & ROCE_M_IMM) ? mwp_pkt_eh(m, p, ROCE_EH_IMMDT) : NULL;
	mwp_rq_done_ud(qp, &rw, status == IBV_WC_SUCCESS ? len : 0, status, imm != NULL,
		       imm != NULL ? imm->imm : 0,
		       deth_sqpn(mwp_pkt_eh(m, p, ROCE_EH_DETH)),
		       (p->flags & MWP_PKT_IPV6) ? UD_SL_ROCE_V2_IPV6 : UD_SL_ROCE_V2_IPV4);
	return true;
}
