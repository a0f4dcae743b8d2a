/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester's completer: what the peer says about the requests
 * (ACKs, NAKs, READ responses, ATOMIC ACKs), what its silence says (the
 * timers), and the going back that both may call for.
 *
 * The peer's answers, in the order of IBA 9.7.5.2 (rxe_comp.c has the
 * same shape): a PSN before una is a duplicate, one not yet sent a ghost
 * -- both ignored.  An ACK at PSN q acknowledges every PSN up to q; if
 * that passes a READ or ATOMIC whose response has not come, the response
 * was lost (an implicit NAK): send again from it.  An ATOMIC WRITE has
 * no result: its zero-length READ RESPONSE ONLY, or an ACK at or past
 * it, completes it.  A sequence NAK at q
 * acknowledges up to q - 1 and sends again from q; an RNR NAK waits the
 * timer its syndrome names, then sends again from q; NAKs 0x61-0x63 fail
 * the WQE holding q and the QP goes to ERR.  READ responses must come in
 * PSN order: a later one is an implicit NAK, an earlier one a duplicate;
 * each is placed at the offset its PSN gives.  Going back N moves the
 * sender's tx_psn (roce_req.c) back to una, or to the PSN a NAK names.
 *
 * Timers: one per QP, in its engine's wheel.  While packets are
 * unacknowledged it is the local ACK timer, measured from when the oldest
 * of them was last sent or the last progress was made (moved lazily: an
 * ACK only records the time, and a timer that fires early is armed
 * again); after an RNR NAK it is the RNR timer.  retry_cnt timeouts (and
 * sequence or implicit NAKs) in a row fail the oldest WQE with
 * RETRY_EXC_ERR; rnr_retry RNR NAKs with RNR_RETRY_EXC_ERR (7: never).
 * Once a go-back has started, NAKs and implicit NAKs start no other
 * until progress is made (they speak of the old flight); timeouts do.
 */
#include <string.h>

#include "mwp_wqe.h"
#include "roce_comp.h"

uint64_t
mwp_ack_timeout_ns(uint8_t timeout)
{
	if (timeout == 0)
		return 0;
	return UINT64_C(4096) << (timeout & 31);
}

uint32_t
mwp_rnr_timer_us(uint8_t code)
{
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480,
		640, 960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360,
		20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760,
		327680, 491520,
	};

	return us[code & 31];
}

/* ---- completions and going back ---- */

/* The first WQE with the requester at window position *pos or after it
 * (*pos moves to it), or NULL. */
static struct mwp_swqe *
oldest_from(const struct mwp_qp *qp, uint32_t *pos)
{
	for (; *pos != qp->sq_tail; (*pos)++) {
		struct mwp_swqe *e = mwp_swqe_at(qp, *pos);

		if (e->state == MWP_SWQE_REQ)
			return e;
	}
	return NULL;
}

struct mwp_swqe *
mwp_comp_oldest(const struct mwp_qp *qp)
{
	uint32_t pos = qp->sq_head;

	return oldest_from(qp, &pos);
}

/* The window position of the started WQE holding psn, or sq_tail. */
static uint32_t
pos_of(const struct mwp_qp *qp, uint32_t psn)
{
	uint32_t pos;

	for (pos = qp->sq_head; pos != qp->sq_tail; pos++) {
		const struct mwp_swqe *e = mwp_swqe_at(qp, pos);

		if (e->state == MWP_SWQE_REQ && e->started &&
		    psn_diff(psn, e->first_psn) >= 0 && psn_diff(e->last_psn, psn) >= 0)
			break;
	}
	return pos;
}

void
mwp_comp_arm_ack_timer(struct mwp_qp *qp)
{
	const uint64_t ns = mwp_ack_timeout_ns(qp->timeout);

	if (ns != 0)
		mwp_timer_arm(mwp_sched_wheel(qp), &qp->req.tmr,
			      qp->req.ack_clock + mwp_sched_ns(qp, ns));
}

/* Send again from psn (go-back-N). */
static void
go_back(struct mwp_qp *qp, uint32_t psn)
{
	struct mwp_req *r = &qp->req;

	r->tx_pos = pos_of(qp, psn);
	r->tx_psn = psn;
	r->ack_clock = mwp_sched_now(qp);
	mwp_sched_kick_tx(qp);
}

void
mwp_comp_fail(struct mwp_qp *qp, struct mwp_swqe *e, enum ibv_wc_status st)
{
	if (e == NULL)
		return;
	if (e->rd_atomic && e->started)
		qp->req.rd_out--;
	mwp_sq_done(qp, e, st);
	mwp_sq_req_stop(qp);
	mwp_sq_deliver(qp);
}

void
mwp_comp_complete(struct mwp_qp *qp, struct mwp_swqe *e)
{
	if (e->rd_atomic)
		qp->req.rd_out--;
	mwp_sq_done(qp, e, IBV_WC_SUCCESS);
}

/* A retry (timeout, sequence NAK, implicit NAK): one of retry_cnt, then
 * the oldest WQE fails. */
static bool
retry(struct mwp_qp *qp)
{
	if (qp->req.retry_left == 0) {
		mwp_comp_fail(qp, mwp_comp_oldest(qp), IBV_WC_RETRY_EXC_ERR);
		return false;
	}
	qp->req.retry_left--;
	return true;
}

/* Go back to psn for a sequence or implicit NAK, unless a go-back
 * already runs with no progress since: then the NAK is about packets
 * sent before it (the old flight's responses, the peer's NAK of what is
 * being sent again), and starting over once more would only spend a
 * retry -- the ACK timer covers a resend that is lost too.  As rxe's
 * started_retry. */
static void
nak_retry(struct mwp_qp *qp, uint32_t psn)
{
	if (qp->req.retrying)
		return;
	if (retry(qp)) {
		qp->req.retrying = 1;
		go_back(qp, psn);
	}
}

/* Forward progress: the counts start over. */
static void
progress(struct mwp_qp *qp)
{
	qp->req.retrying = 0;
	qp->req.retry_left = qp->retry_cnt;
	qp->req.rnr_left = qp->rnr_retry;
	qp->req.ack_clock = mwp_sched_now(qp);
	mwp_sched_kick_tx(qp);	/* the window may have opened */
}

/*
 * Every PSN up to q is acknowledged.  SEND and WRITE WQEs wholly inside
 * complete; a READ or ATOMIC whose first missing response is at or before
 * q lost it: an implicit NAK, and false.
 */
static bool
ack_to(struct mwp_qp *qp, uint32_t q)
{
	struct mwp_req *r = &qp->req;
	uint32_t pos = qp->sq_head;	/* where the search goes on: one ACK
					 * may complete a whole window */
	bool moved = false;

	while (r->una != r->psn && psn_diff(q, r->una) >= 0) {
		struct mwp_swqe *e = oldest_from(qp, &pos);

		if (e == NULL || !e->started)
			break;
		/* an ATOMIC WRITE has no result to wait for: an ACK at or
		 * past it says it was done (peers answer it with an ACK or,
		 * as rxe and mwpath, a zero-length READ RESPONSE ONLY) */
		if (e->rd_atomic && e->w.opcode != IBV_WR_ATOMIC_WRITE) {
			r->st.implicit_naks++;
			if (moved)
				progress(qp);
			nak_retry(qp, r->una);
			mwp_sq_deliver(qp);
			return false;
		}
		if (psn_diff(q, e->last_psn) >= 0) {
			r->una = (e->last_psn + 1) & ROCE_PSN_MASK;
			mwp_comp_complete(qp, e);
		} else {
			r->una = (q + 1) & ROCE_PSN_MASK;
		}
		moved = true;
	}
	if (moved) {
		progress(qp);
		mwp_sq_deliver(qp);
	}
	return true;
}

/* WQE e answered whole by the one response p at its PSN (an ATOMIC ACK,
 * ATOMIC WRITE's response): acknowledged up to p, completed, and the send
 * queue goes on. */
static enum mwp_drop
answered(struct mwp_qp *qp, const struct mwp_pkt *p, struct mwp_swqe *e)
{
	qp->req.una = (p->psn + 1) & ROCE_PSN_MASK;
	qp->req.st.acks++;
	mwp_comp_complete(qp, e);
	progress(qp);
	mwp_sq_deliver(qp);
	return MWP_DROP_NONE;
}

/* ---- the peer's answers ---- */

static enum mwp_drop
bad_response(struct mwp_qp *qp, struct mwp_swqe *e)
{
	qp->req.st.bad_resps++;
	mwp_comp_fail(qp, e, IBV_WC_BAD_RESP_ERR);
	return MWP_DROP_RESP_BAD;
}

static enum mwp_drop
on_ack(struct mwp_qp *qp, uint32_t psn, uint8_t syn)
{
	struct mwp_req *r = &qp->req;
	struct mwp_swqe *e;

	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		if (!ack_to(qp, psn))
			return MWP_DROP_RESP_IMPLICIT;
		r->st.acks++;
		return MWP_DROP_NONE;
	case ROCE_AETH_RNR_NAK:
		r->st.rnr_naks++;
		if (!ack_to(qp, (psn - 1) & ROCE_PSN_MASK))
			return MWP_DROP_RESP_IMPLICIT;
		if (r->una != psn || (e = mwp_comp_oldest(qp)) == NULL)
			return MWP_DROP_RESP_STALE;
		if (qp->rnr_retry != 7) {
			if (r->rnr_left == 0) {
				mwp_comp_fail(qp, e, IBV_WC_RNR_RETRY_EXC_ERR);
				return MWP_DROP_NONE;
			}
			r->rnr_left--;
		}
		/* nothing goes out until the timer the NAK names has run */
		r->rnr_wait = 1;
		r->rnr_psn = psn;
		r->tx_pos = pos_of(qp, psn);
		r->tx_psn = psn;
		mwp_timer_arm(mwp_sched_wheel(qp), &r->tmr,
			      mwp_sched_now(qp) + mwp_sched_ns(qp, mwp_rnr_timer_us(syn & 0x1f) * UINT64_C(1000)));
		return MWP_DROP_NONE;
	default:
		break;
	}
	/* NAKs */
	if (syn == ROCE_AETH_NAK_PSN_SEQ) {
		r->st.seq_naks++;
		/* one RNR NAK is often followed by a sequence NAK for the
		 * packets behind it: the RNR timer decides */
		if (r->rnr_wait && psn == r->rnr_psn)
			return MWP_DROP_RESP_STALE;
		if (!ack_to(qp, (psn - 1) & ROCE_PSN_MASK))
			return MWP_DROP_RESP_IMPLICIT;
		nak_retry(qp, psn);
		return MWP_DROP_NONE;
	}
	r->st.fatal_naks++;
	if (!ack_to(qp, (psn - 1) & ROCE_PSN_MASK))
		return MWP_DROP_RESP_IMPLICIT;
	e = mwp_comp_oldest(qp);
	mwp_comp_fail(qp, e, syn == ROCE_AETH_NAK_INV_REQ ? IBV_WC_REM_INV_REQ_ERR :
		    syn == ROCE_AETH_NAK_REM_ACC ? IBV_WC_REM_ACCESS_ERR :
		    IBV_WC_REM_OP_ERR);
	return MWP_DROP_NONE;
}

static enum mwp_drop
on_atomic_ack(struct mwp_qp *qp, const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const struct roce_aeth *a = mwp_pkt_eh(m, p, ROCE_EH_AETH);
	const uint8_t *ack = mwp_pkt_eh(m, p, ROCE_EH_ATMACK);
	struct mwp_swqe *e;
	uint64_t orig;
	uint32_t span;
	uint8_t *dst;

	if (!ack_to(qp, (p->psn - 1) & ROCE_PSN_MASK))
		return MWP_DROP_RESP_IMPLICIT;
	e = mwp_comp_oldest(qp);
	if (e == NULL || qp->req.una != p->psn)
		return MWP_DROP_RESP_STALE;
	if ((aeth_syndrome(a) & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK ||
	    (e->w.opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	     e->w.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD))
		return bad_response(qp, e);
	/* the original value, in host order, into the one 8-byte SGE */
	memcpy(&orig, ack, sizeof(orig));
	orig = ROCE_BE64(orig);
	dst = (uint8_t *)(uintptr_t)mwp_wqe_span(qp, e, 0, 8, true, &span);
	if (dst == NULL || span != 8) {
		mwp_comp_fail(qp, e, IBV_WC_LOC_PROT_ERR);
		return MWP_DROP_NONE;
	}
	memcpy(dst, &orig, sizeof(orig));
	return answered(qp, p, e);
}

/* The answer to ATOMIC WRITE e at its PSN (IBA 1.5, rxe): a READ
 * RESPONSE ONLY with no payload and an ACK AETH; anything else from the
 * READ responses is a bad response. */
static enum mwp_drop
on_atomic_write_resp(struct mwp_qp *qp, const struct rte_mbuf *m, const struct mwp_pkt *p,
		     struct mwp_swqe *e)
{
	const struct roce_aeth *a = mwp_pkt_eh(m, p, ROCE_EH_AETH);

	if (p->opcode != ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY || p->payload_len != 0 ||
	    a == NULL || (aeth_syndrome(a) & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
		return bad_response(qp, e);
	return answered(qp, p, e);
}

/* Is opcode right for response q of READ e?  Lenient where reordering
 * makes an old request's response meet a newer request: what a PSN
 * carries is the same for both (segments align on the first PSN). */
static bool
read_resp_opcode_ok(const struct mwp_swqe *e, uint8_t op, uint32_t q)
{
	const bool last = q == e->last_psn;
	const bool start = q == e->first_psn || q == e->rd_req_psn;

	switch (op) {
	case ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST:
		return !last && start;
	case ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE:
		return !last && q != e->first_psn;
	case ROCE_OP_RC_RDMA_READ_RESPONSE_LAST:
		return last && q != e->first_psn;
	default:	/* ONLY */
		return last && start;
	}
}

static enum mwp_drop
on_read_resp(struct mwp_qp *qp, const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const uint32_t mtu = mwp_qp_mtu_bytes(qp);
	const uint32_t q = p->psn;
	struct mwp_req *r = &qp->req;
	const struct roce_aeth *a;
	uint8_t tmp[4096];
	const uint8_t *data;
	struct mwp_swqe *e;
	uint64_t off;
	uint32_t want;

	/* what comes before the READ is acknowledged; a response after the
	 * one expected means the ones between were lost */
	if (!ack_to(qp, (q - 1) & ROCE_PSN_MASK))
		return MWP_DROP_RESP_IMPLICIT;
	e = mwp_comp_oldest(qp);
	if (e == NULL || r->una != q)
		return MWP_DROP_RESP_STALE;
	if (e->w.opcode == IBV_WR_ATOMIC_WRITE)
		return on_atomic_write_resp(qp, m, p, e);
	if (e->w.opcode != IBV_WR_RDMA_READ || e->resp_psn != q ||
	    !read_resp_opcode_ok(e, p->opcode, q))
		return bad_response(qp, e);
	a = mwp_pkt_eh(m, p, ROCE_EH_AETH);
	if (a != NULL && (aeth_syndrome(a) & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
		return bad_response(qp, e);
	/* exactly the bytes this PSN stands for: never more than asked */
	off = (uint64_t)((q - e->first_psn) & ROCE_PSN_MASK) * mtu;
	want = (uint32_t)RTE_MIN((uint64_t)mtu, e->total - RTE_MIN((uint64_t)e->total, off));
	if (p->payload_len != want)
		return bad_response(qp, e);
	if (want != 0) {
		data = rte_pktmbuf_read(m, p->payload_off, want, tmp);
		if (data == NULL || !mwp_wqe_copy(qp, e, off, (uint8_t *)(uintptr_t)data, want, true)) {
			mwp_comp_fail(qp, e, IBV_WC_LOC_PROT_ERR);
			return MWP_DROP_NONE;
		}
		r->st.read_bytes += want;
	}
	e->resp_psn = (q + 1) & ROCE_PSN_MASK;
	r->una = e->resp_psn;
	r->st.acks++;
	if (q == e->last_psn)
		mwp_comp_complete(qp, e);
	progress(qp);
	mwp_sq_deliver(qp);
	return MWP_DROP_NONE;
}

enum mwp_drop
mwp_comp_rx(struct mwp_qp *qp, const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const enum ibv_qp_state st = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE);
	struct mwp_req *r = &qp->req;

	/* the QP's counters (kept with its responder's) see every frame */
	qp->resp.st.rx_pkts++;
	qp->resp.st.rx_bytes += rte_pktmbuf_pkt_len(m);
	/* as for requests: from RTR on, and not once the QP's responder has
	 * stopped on a fatal NAK */
	if (unlikely((st != IBV_QPS_RTR && st != IBV_QPS_RTS) || qp->resp.err))
		return MWP_DROP_QP_STATE;
	qp->resp.st.acks_rx++;
	if (unlikely(qp->owner == NULL))
		return MWP_DROP_RESP_GHOST;
	/* a PSN before the oldest unacknowledged one: a duplicate; at or
	 * after the next one never sent: a ghost */
	if (psn_diff(p->psn, r->una) < 0) {
		r->st.dup_resps++;
		return MWP_DROP_RESP_STALE;
	}
	if (r->una == r->psn || psn_diff(p->psn, r->sent_psn) >= 0) {
		r->st.ghost_resps++;
		return MWP_DROP_RESP_GHOST;
	}
	switch (p->opcode) {
	case ROCE_OP_RC_ACKNOWLEDGE:
		return on_ack(qp, p->psn,
			      aeth_syndrome(mwp_pkt_eh(m, p, ROCE_EH_AETH)));
	case ROCE_OP_RC_ATOMIC_ACKNOWLEDGE:
		return on_atomic_ack(qp, m, p);
	default:
		return on_read_resp(qp, m, p);
	}
}

/* ---- the timer ---- */

static void
on_timer(struct mwp_timer *t, uint64_t now)
{
	struct mwp_qp *qp = container_of(t, struct mwp_qp, req.tmr);
	struct mwp_req *r = &qp->req;
	uint64_t ns;

	if (__atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE) != IBV_QPS_RTS)
		return;
	if (r->rnr_wait) {
		r->rnr_wait = 0;
		go_back(qp, r->rnr_psn);
		return;
	}
	if (!r->have_mac) {
		mwp_sched_kick_tx(qp);	/* look for the peer's MAC again */
		return;
	}
	ns = mwp_ack_timeout_ns(qp->timeout);
	if (r->una == r->psn || ns == 0 || !is_rc(qp))
		return;
	/* moved lazily: progress since it was armed */
	if (now - r->ack_clock < mwp_sched_ns(qp, ns)) {
		mwp_comp_arm_ack_timer(qp);
		return;
	}
	r->st.timeouts++;
	if (retry(qp)) {
		r->retrying = 1;
		go_back(qp, r->una);
	}
	mwp_sq_deliver(qp);
}

void
mwp_req_attach(struct mwp_qp *qp)
{
	mwp_timer_init(&qp->req.tmr, on_timer);
}
