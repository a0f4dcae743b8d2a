/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_RESP_ANSWER_H
#define ROCE_RESP_ANSWER_H

/*
 * The responder's answers (private to resp/): built from the QP's header
 * template into the burst's tx batch and queued in PSN order -- inline
 * here, since every stage answers; the rest (where answers go, the queue
 * of answers owed behind READ responses, refusals made NAKs) in
 * roce_resp_answer.c.
 */

#include "roce_resp_priv.h"

/* Build an answer to the QP's peer into m (from mwp_tx_slot) and queue
 * it; its ICRC waits for mwp_tx_finish. */
static inline void
resp_emit(struct mwp_resp_ctx *c, struct rte_mbuf *m, const struct mwp_resp *r,
	  const struct mwp_answer *a, const void *data, uint32_t len)
{
	int ret;

	if (likely(r->tmpl.usable)) {
		ret = mwp_build_answer(m, &r->tmpl, a, data, len, mwp_tx_next_pkt(&c->tx));
	} else {
		struct mwp_hdrs h;

		mwp_answer_hdrs(&h, a);
		ret = mwp_build_deferred(m, &r->flow, &h, data, len, mwp_tx_next_pkt(&c->tx));
	}

	if (unlikely(ret < 0)) {
		rte_pktmbuf_free(m);
		c->tx.st->drop[MWP_DROP_NO_MBUF]++;
		return;
	}
	mwp_tx_queue(&c->tx, m, ret == 1);
}

/* An ACKNOWLEDGE (ACK or NAK by syn), an ATOMIC ACKNOWLEDGE or an
 * ATOMIC WRITE's zero-length READ RESPONSE ONLY, now. */
static inline void
resp_send_answer(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint8_t opcode, uint8_t syn,
		 uint32_t psn, uint32_t msn, uint64_t orig)
{
	struct rte_mbuf *m = mwp_tx_slot(&c->tx);
	const struct mwp_answer a = {
		.opcode = opcode, .syndrome = syn, .dqpn = qp->dest_qpn,
		.psn = psn, .msn = msn, .orig = orig,
	};

	if (m == NULL)
		return;
	resp_emit(c, m, &qp->resp, &a, NULL, 0);
	/* an ATOMIC ACKNOWLEDGE, or an ATOMIC WRITE's READ RESPONSE: not
	 * counted as ACKs (the QP counts its atomics) */
	if (opcode != ROCE_OP_RC_ACKNOWLEDGE)
		return;
	if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK) {
		qp->resp.st.acks++;
		c->tx.st->acks++;
	} else if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK) {
		qp->resp.st.rnr_naks++;
		c->tx.st->rnr_naks++;
	} else {
		qp->resp.st.naks[syn & 3]++;
		c->tx.st->naks[syn & 3]++;
	}
}

/* The ACK owed for what has been accepted so far (coalesced: one ACK
 * covers every earlier PSN).  Answers leave in PSN order: while READ
 * responses wait for room, the ACK (for requests after those READs)
 * waits behind them; mwp_resp_read_pump sends it once they are out. */
static inline void
resp_flush_ack(struct mwp_resp_ctx *c, struct mwp_qp *qp)
{
	if (!qp->resp.ack_pending || mwp_resp_waiting(&qp->resp))
		return;
	qp->resp.ack_pending = 0;
	/* the MSN of when the ACK was owed, not of what came since */
	resp_send_answer(c, qp, ROCE_OP_RC_ACKNOWLEDGE, ACK_SYNDROME, qp->resp.ack_psn,
			 qp->resp.ack_msn, 0);
}

bool mwp_resp_answer_queue(struct mwp_qp *qp, uint8_t opcode, uint8_t syn, uint32_t psn,
			   uint64_t orig);
void mwp_resp_fatal_effects(struct mwp_qp *qp, uint8_t syn);
void mwp_resp_nak_fatal(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint32_t psn,
			uint8_t syn);
/* A refusal (DENY, INVALID or RNR) made an RC NAK or a UC discard; b: the
 * key's descriptor a denial counts against, or NULL; m and p: the frame
 * refused, whose source a denial counts against (the guessing defence),
 * or NULL (a READ response refused later, no frame in hand). */
void mwp_resp_refuse(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint32_t psn,
		     struct mwp_verdict v, const struct mwp_binding *b,
		     const struct rte_mbuf *m, const struct mwp_pkt *p);

/* An answer other than a coalesced ACK or READ responses: sent now, or,
 * while READ responses wait for room, queued behind them, so that answers
 * leave in PSN order (IBA 9.5: responses are returned in the order the
 * requests were received).  True if queued. */
static inline bool
mwp_resp_answer(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint8_t opcode, uint8_t syn,
		uint32_t psn, uint64_t orig)
{
	if (unlikely(mwp_resp_waiting(&qp->resp)) &&
	    mwp_resp_answer_queue(qp, opcode, syn, psn, orig))
		return true;
	resp_flush_ack(c, qp);
	resp_send_answer(c, qp, opcode, syn, psn, qp->resp.msn, orig);
	return false;
}

static inline void
atomic_answer(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint32_t psn, uint64_t orig)
{
	mwp_resp_answer(c, qp, ROCE_OP_RC_ATOMIC_ACKNOWLEDGE, ACK_SYNDROME, psn, orig);
}

/* The answer to an ATOMIC WRITE (IBA 1.5), as Linux rxe gives it: an RDMA
 * READ RESPONSE ONLY with no payload and an ACK AETH -- no AtomicAckETH,
 * there is no original value -- in PSN order like an atomic's. */
static inline void
atomic_write_answer(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint32_t psn)
{
	mwp_resp_answer(c, qp, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, ACK_SYNDROME, psn, 0);
}

#endif /* ROCE_RESP_ANSWER_H */
