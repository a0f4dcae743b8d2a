/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's answers (roce_resp_priv.h): where they go (the request's
 * addresses mirrored), how they are built (from the QP's header template)
 * and queued (ICRCs all at once in mwp_tx_finish), ACKs coalesced per
 * QP per burst, and every other answer -- atomic ACK, RNR NAK, sequence
 * NAK, fatal NAK -- sent at once or, while READ responses wait, queued
 * behind them so that answers leave in PSN order.  mwp_resp_refuse is the
 * one place a refusal becomes an RC NAK or a UC discard.
 */
#include <string.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "roce_resp_answer.h"

/* mwp_resp_answer's rare half (roce_resp_priv.h): the answer queued
 * behind those waiting.  False if MWP_MAX_RD entries wait already: then
 * it goes first (the requester retries what it did not see answered). */
bool
mwp_resp_answer_queue(struct mwp_qp *qp, uint8_t opcode, uint8_t syn, uint32_t psn,
		      uint64_t orig)
{
	struct mwp_resp *r = &qp->resp;
	struct mwp_rd *rd = rd_push(r, MWP_RD_ANSWER, psn, orig, 0);

	if (rd == NULL)
		return false;
	rd->opcode = opcode;
	rd->syn = syn;
	rd->msn = r->msn;
	return true;
}

/* What a fatal NAK does once it is out: the RC responder stops. */
void
mwp_resp_fatal_effects(struct mwp_qp *qp, uint8_t syn)
{
	struct mwp_resp *r = &qp->resp;

	/* a SEND in progress: its receive completes with the error */
	if (r->recv_held) {
		r->recv_held = 0;
		r->in_msg = 0;
		mwp_rq_done(qp, &r->recv, IBV_WC_RECV, 0, 0, 0,
				 syn == ROCE_AETH_NAK_REM_ACC ? IBV_WC_REM_ACCESS_ERR :
				 syn == ROCE_AETH_NAK_REM_OP ? IBV_WC_REM_OP_ERR :
				 IBV_WC_REM_INV_REQ_ERR);
	}
	mwp_qp_to_err(qp);
	/* the errors verbs gives a responder's QP: invalid request, access
	 * violation, or a failed operation */
	mwp_dev_async(qp->dev, (struct ibv_async_event){
		.element.qp = &qp->ibqp,
		.event_type = syn == ROCE_AETH_NAK_REM_ACC ? IBV_EVENT_QP_ACCESS_ERR :
			      syn == ROCE_AETH_NAK_INV_REQ ? IBV_EVENT_QP_REQ_ERR :
			      IBV_EVENT_QP_FATAL });
}

/* A fatal NAK (0x61, 0x62, 0x63): the RC responder stops (IBA 9.9.3),
 * silent from now on; behind READ responses still waiting, it stops once
 * they and the NAK are out. */
void
mwp_resp_nak_fatal(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint32_t psn, uint8_t syn)
{
	struct mwp_resp *r = &qp->resp;

	r->err_queued = mwp_resp_answer(c, qp, ROCE_OP_RC_ACKNOWLEDGE, syn, psn, 0);
	r->err = 1;
	if (!r->err_queued)
		mwp_resp_fatal_effects(qp, syn);
}

/* The one place a refusal becomes an answer: on RC a denied access is
 * the NAK of its reason (0x61 or 0x62) and an invalid request NAK 0x61,
 * both fatal; no receive is an RNR NAK, which consumes nothing and leaves
 * the PSN expected.  On UC each is a silent discard, and the message is
 * lost.  A denial counts by reason, and against the key's descriptor. */
void
mwp_resp_refuse(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint32_t psn,
		struct mwp_verdict v, const struct mwp_binding *b,
		const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	if (v.kind == MWP_V_DENY) {
		uint8_t ip[16];

		qp->resp.st.denied[v.code]++;
		c->tx.st->denied[v.code]++;
		if (b != NULL)
			__atomic_fetch_add(&((struct mwp_binding *)(uintptr_t)b)->denied, 1,
					   __ATOMIC_RELAXED);
		/* against its source: the guessing defence */
		if (m != NULL)
			mwp_guard_refused(c->guard, mwp_pkt_src_ip(m, p, ip), mwp_resp_now(c));
	}
	if (qp->ibqp.qp_type != IBV_QPT_RC) {
		qp->resp.in_msg = 0;
		drop(c, MWP_DROP_UC_DISCARD);
	} else if (v.kind == MWP_V_RNR) {
		mwp_resp_answer(c, qp, ROCE_OP_RC_ACKNOWLEDGE,
				ROCE_AETH_RNR_NAK | qp->min_rnr_timer, psn, 0);
	} else {
		mwp_resp_nak_fatal(c, qp, psn, v.kind == MWP_V_DENY ?
				   mwp_deny_syndrome(v.code) :
				   v.kind == MWP_V_OPERR ? ROCE_AETH_NAK_REM_OP :
				   ROCE_AETH_NAK_INV_REQ);
	}
}

void
mwp_resp_flush(struct mwp_resp_ctx *c)
{
	for (uint16_t i = 0; i < c->nb_dirty; i++)
		resp_flush_ack(c, c->dirty[i]);
	allowed_flush(c);
}
