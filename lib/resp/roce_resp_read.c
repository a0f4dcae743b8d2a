/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * READ responses (roce_resp_priv.h): a READ is queued with what its own
 * check found, sent while the burst has room and the rest from the
 * queue's tx on every pass of the lcore (mwp_resp_read_owed); every response after the
 * burst of the request looks its key up again (memory-windows.md
 * section 3 step 8).  Answers owed after a READ wait behind it in the
 * same queue.
 */
#include "roce_resp_answer.h"

void
mwp_resp_read_pump(struct mwp_resp_ctx *c, struct mwp_qp *qp)
{
	const uint32_t mtu = mwp_qp_mtu_bytes(qp);
	struct mwp_resp *r = &qp->resp;

	while (r->rd_count > 0 && mwp_tx_room(&c->tx) && (!r->err || r->err_queued)) {
		struct mwp_rd *rd = &r->rd[r->rd_head];
		uint32_t seg = RTE_MIN(rd->left, mtu);

		if (rd->pre_ack) {
			/* what came between the entry before and this one */
			rd->pre_ack = 0;
			resp_send_answer(c, qp, ROCE_OP_RC_ACKNOWLEDGE, ACK_SYNDROME,
					 rd->pre_ack_psn, rd->pre_ack_msn, 0);
			continue;
		}
		if (rd->kind == MWP_RD_ANSWER) {
			r->rd_head = (r->rd_head + 1) % MWP_MAX_RD;
			r->rd_count--;
			resp_send_answer(c, qp, rd->opcode, rd->syn, rd->psn, rd->msn, rd->va);
			if (r->err_queued && r->rd_count == 0) {
				/* the fatal NAK, last (nothing is accepted after it) */
				r->err_queued = 0;
				mwp_resp_fatal_effects(qp, rd->syn);
			}
			continue;
		}
		bool last = rd->left <= mtu;
		uint8_t op = rd->first ? (last ? ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
					  ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST) :
				(last ? ROCE_OP_RC_RDMA_READ_RESPONSE_LAST :
				 ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
		uint8_t *src = NULL;
		struct rte_mbuf *m;

		if (seg != 0 && rd->first && rd->checked_gen == c->gen && c->gen != 0 &&
		    c->nb_revoked == 0) {
			/* the request's own check, in this very burst, with no
			 * key revoked since */
			src = (uint8_t *)(uintptr_t)rd->checked_src;
		} else if (seg != 0) {
			struct mwp_access_req q = {
				.rkey = rd->rkey, .access = IBV_ACCESS_REMOTE_READ,
				.va = rd->va, .len = seg, .pd = qp->resp.own_pd,
				.qpn = qp->resp.own_qpn,
			};
			const struct mwp_binding *b = mwp_keys_lookup(c->port->keys, rd->rkey);
			enum mwp_deny d = mwp_access_decide(b, &q, &src);

			if (d != MWP_DENY_NONE) {
				/* invalidated mid-READ: the rest is refused */
				r->rd_head = (r->rd_head + 1) % MWP_MAX_RD;
				r->rd_count--;
				if (rd->nak_on_fail) {
					/* what waits behind it, and the ACK owed
					 * for it, answer later PSNs: the NAK of
					 * this one ends them */
					r->rd_count = 0;
					r->err_queued = 0;
					r->ack_pending = 0;
					mwp_resp_refuse(c, qp, rd->psn,
							mwp_verdict(MWP_V_DENY, d), b,
							NULL, NULL);
				}
				continue;
			}
		}
		/* a QP a CNP has slowed sends its READ responses at DCQCN's
		 * rate, as its requests: the rest waits for the queue's tx */
		if (unlikely(qp->dcqcn.limited) &&
		    !mwp_dcqcn_may_send(&qp->dcqcn, &c->port->dcqcn, mwp_resp_now(c)))
			break;
		m = mwp_tx_slot(&c->tx);
		if (m == NULL)
			return;
		resp_emit(c, m, r, &(const struct mwp_answer){
			.opcode = op, .syndrome = ACK_SYNDROME, .dqpn = qp->dest_qpn,
			.psn = rd->psn, .msn = r->msn }, src, seg);
		if (unlikely(qp->dcqcn.limited))
			mwp_dcqcn_sent(&qp->dcqcn, &c->port->dcqcn, seg + MWP_IP_OVERHEAD,
				       mwp_resp_now(c));
		r->st.read_resps++;
		rd->va += seg;
		rd->left -= seg;
		rd->psn = (rd->psn + 1) & ROCE_PSN_MASK;
		rd->first = 0;
		if (last) {
			r->rd_head = (r->rd_head + 1) % MWP_MAX_RD;
			r->rd_count--;
		}
	}
	/* every READ answered: the ACK owed for what came after them */
	if (r->rd_count == 0 && r->ack_pending)
		resp_flush_ack(c, qp);
	/* the rest waits for mwp_queue_tx: tell the queue where to look */
	if (mwp_resp_waiting(r) && !r->rd_listed) {
		struct mwp_resp_queue *q = c->rq;

		if (q->nb_rd_pending < MWP_RESP_RD_PENDING) {
			q->rd_pending[q->nb_rd_pending].qpn = qp->ibqp.qp_num;
			q->rd_pending[q->nb_rd_pending++].qp = qp;
			r->rd_listed = 1;
		} else {
			q->rd_pending_overflow = true;
		}
	}
}

bool
mwp_resp_queue_read(struct mwp_qp *qp, uint64_t va, uint32_t rkey, uint32_t len,
		    uint32_t psn, bool nak_on_fail, const uint8_t *src, uint64_t gen)
{
	struct mwp_rd *rd = rd_push(&qp->resp, MWP_RD_READ, psn, va, len);

	if (rd == NULL)
		return false;
	rd->rkey = rkey;
	rd->first = 1;
	rd->nak_on_fail = nak_on_fail;
	rd->checked_src = src;
	rd->checked_gen = gen;
	return true;
}

void
mwp_resp_read_owed(struct mwp_resp_ctx *c)
{
	struct mwp_resp_queue *q = c->rq;
	struct mwp_port *port = q->port;
	uint16_t i = 0;

	while (i < q->nb_rd_pending) {
		uint32_t qpn = q->rd_pending[i].qpn;
		struct mwp_qp *qp = q->rd_pending[i].qp;

		/* a QP destroyed since is no longer in the table: compare
		 * pointers before touching it */
		if (mwp_port_qp(port, qpn) == qp && mwp_tx_room(&c->tx)) {
			mwp_resp_read_pump(c, qp);
			if (mwp_resp_waiting(&qp->resp)) {
				i++;
				continue;
			}
			qp->resp.rd_listed = 0;
		} else if (mwp_port_qp(port, qpn) == qp) {
			break;		/* no room left this time */
		}
		q->rd_pending[i] = q->rd_pending[--q->nb_rd_pending];
	}
	if (unlikely(q->rd_pending_overflow)) {
		bool left = false;

		for (unsigned int s = 0; s < MWP_PORT_QP_SLOTS && mwp_tx_room(&c->tx); s++) {
			struct mwp_qp *qp = port->qp[s].qp;

			if (qp != NULL && (qp->owner == q->self || qp->owner == NULL) &&
			    mwp_resp_waiting(&qp->resp)) {
				mwp_resp_read_pump(c, qp);
				left |= qp->resp.rd_count != 0;
			}
		}
		q->rd_pending_overflow = left || !mwp_tx_room(&c->tx);
	}
}

void
mwp_resp_forget(struct mwp_resp_queue *q, struct mwp_qp *qp)
{
	for (uint16_t i = 0; i < q->nb_rd_pending;)
		if (q->rd_pending[i].qp == qp)
			q->rd_pending[i] = q->rd_pending[--q->nb_rd_pending];
		else
			i++;
	qp->resp.rd_listed = 0;
}
