/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester: the send queue's data WQEs (roce_req.h) as packets on the
 * wire, and what the peer says about them.
 *
 * Every data WQE keeps its place in the QP's window until it is complete,
 * so any of its packets can be built again from it: there is no copy of a
 * sent frame.  PSNs are given when a WQE is first sent (a READ takes one
 * PSN per response it expects, IBA 9.7.4.1.4).  The state is three PSNs:
 * the next new one (psn), the oldest not acknowledged (una) and the next
 * to send (tx_psn, with tx_pos the window position holding it).
 * Go-back-N moves tx_psn back to una, or to the PSN a NAK names.
 *
 * The peer's answers, in the order of IBA 9.7.5.2 (rxe_comp.c has the
 * same shape): a PSN before una is a duplicate, one not yet sent a ghost
 * -- both ignored.  An ACK at PSN q acknowledges every PSN up to q; if
 * that passes a READ or ATOMIC whose response has not come, the response
 * was lost (an implicit NAK): send again from it.  A sequence NAK at q
 * acknowledges up to q - 1 and sends again from q; an RNR NAK waits the
 * timer its syndrome names, then sends again from q; NAKs 0x61-0x63 fail
 * the WQE holding q and the QP goes to ERR.  READ responses must come in
 * PSN order: a later one is an implicit NAK, an earlier one a duplicate;
 * each is placed at the offset its PSN gives.
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
 *
 * UC: no acknowledgements, no retransmission; a WQE completes once its
 * last packet is on its way.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_memcpy.h>

#include "mwp_ctrl.h"
#include "mwp_port.h"
#include "mwp_priv.h"
#include "mwp_wqe.h"
#include "roce_build.h"
#include "roce_req.h"


/* How often a requester without the peer's MAC looks again (the
 * neighbour table paces its own probes). */
#define MAC_RETRY_US	1000
/* How long a MAC from the neighbour table is used before asking again. */
#define MAC_RECHECK_US	1000000

/* b - a in the 24-bit PSN space, as a signed distance */
static inline int32_t
psn_diff(uint32_t b, uint32_t a)
{
	return (int32_t)((b - a) << 8) >> 8;
}

static inline bool
is_rc(const struct mwp_qp *qp)
{
	return qp->transport == ROCE_TRANSPORT_RC;
}

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

/* ---- building requests ---- */

/* The opcode of packet i of n (IBA 9.4.1's sequences; RC and UC share
 * them, UC 0x20 above). */
static uint8_t
seg_opcode(const struct mwp_wqe *w, bool uc, uint32_t i, uint32_t n)
{
	const bool first = i == 0, last = i == n - 1;
	const uint8_t base = uc ? ROCE_OP_UC_SEND_FIRST : ROCE_OP_RC_SEND_FIRST;

	switch (w->opcode) {
	case IBV_WR_RDMA_READ:
		return ROCE_OP_RC_RDMA_READ_REQUEST;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return ROCE_OP_RC_COMPARE_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return ROCE_OP_RC_FETCH_ADD;
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

/* The headers towards the peer (its MAC known). */
static void
make_flow(struct mwp_qp *qp)
{
	const struct mwp_port_conf *pc = &qp->port->conf;
	struct mwp_flow *f = &qp->req.flow;

	memset(f, 0, sizeof(*f));
	rte_ether_addr_copy(&pc->mac, &f->smac);
	rte_ether_addr_copy(&qp->req.mac, &f->dmac);
	f->ipv6 = !qp->peer_ipv4;
	if (f->ipv6) {
		memcpy(f->sip6, pc->ipv6, 16);
		memcpy(f->dip6, qp->peer_gid, 16);
	} else {
		f->sip4 = pc->ipv4;
		memcpy(&f->dip4, qp->peer_gid + 12, 4);
	}
	/* one UDP source port per QP, from the dynamic range (RoCEv2
	 * A17.4.3): a peer's RSS keeps the QP on one queue */
	f->sport = (uint16_t)(0xc000 | (qp->ibqp.qp_num & 0x3fff));
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
		.opcode = seg_opcode(w, uc, i, e->npsn),
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
			data = mwp_wqe_span(qp, w, off, len, false, &span);
			if (data == NULL)
				return -1;
			if (span < len) {
				if (!mwp_wqe_copy(qp, w, off, buf, len, false))
					return -1;
				data = buf;
			}
		}
		break;
	}
	}
	ret = mwp_build_deferred(m, &qp->req.flow, &h, data, len, p);
	if (ret < 0)
		return -1;
	*icrc = ret;
	if (len != 0)
		qp->req.st.bytes += len;
	return next;
}

/* ---- completions and going back ---- */

/* The oldest WQE with the requester (started, if anything is
 * outstanding), or NULL. */
static struct mwp_swqe *
oldest(const struct mwp_qp *qp)
{
	for (uint32_t pos = qp->sq_head; pos != qp->sq_tail; pos++) {
		struct mwp_swqe *e = mwp_swqe_at(qp, pos);

		if (e->state == MWP_SWQE_REQ)
			return e;
	}
	return NULL;
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

static void
arm_ack_timer(struct mwp_qp *qp)
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

/* A WQE fails: the QP goes to ERR, its runner flushes the rest. */
static void
fail(struct mwp_qp *qp, struct mwp_swqe *e, enum ibv_wc_status st)
{
	if (e == NULL)
		return;
	if (e->rd_atomic && e->started)
		qp->req.rd_out--;
	mwp_cq_send_done(qp, e, st);
	mwp_qp_req_stop(qp);
	mwp_cq_deliver_sq(qp);
}

static void
complete(struct mwp_qp *qp, struct mwp_swqe *e)
{
	if (e->rd_atomic)
		qp->req.rd_out--;
	mwp_cq_send_done(qp, e, IBV_WC_SUCCESS);
}

/* A retry (timeout, sequence NAK, implicit NAK): one of retry_cnt, then
 * the oldest WQE fails. */
static bool
retry(struct mwp_qp *qp)
{
	if (qp->req.retry_left == 0) {
		fail(qp, oldest(qp), IBV_WC_RETRY_EXC_ERR);
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
	bool moved = false;

	while (r->una != r->psn && psn_diff(q, r->una) >= 0) {
		struct mwp_swqe *e = oldest(qp);

		if (e == NULL || !e->started)
			break;
		if (e->rd_atomic) {
			r->st.implicit_naks++;
			if (moved)
				progress(qp);
			nak_retry(qp, r->una);
			mwp_cq_deliver_sq(qp);
			return false;
		}
		if (psn_diff(q, e->last_psn) >= 0) {
			r->una = (e->last_psn + 1) & ROCE_PSN_MASK;
			complete(qp, e);
		} else {
			r->una = (q + 1) & ROCE_PSN_MASK;
		}
		moved = true;
	}
	if (moved) {
		progress(qp);
		mwp_cq_deliver_sq(qp);
	}
	return true;
}

/* ---- the peer's answers ---- */

static enum mwp_drop
bad_response(struct mwp_qp *qp, struct mwp_swqe *e)
{
	qp->req.st.bad_resps++;
	fail(qp, e, IBV_WC_BAD_RESP_ERR);
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
		if (r->una != psn || (e = oldest(qp)) == NULL)
			return MWP_DROP_RESP_STALE;
		if (qp->rnr_retry != 7) {
			if (r->rnr_left == 0) {
				fail(qp, e, IBV_WC_RNR_RETRY_EXC_ERR);
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
	e = oldest(qp);
	fail(qp, e, syn == ROCE_AETH_NAK_INV_REQ ? IBV_WC_REM_INV_REQ_ERR :
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
	e = oldest(qp);
	if (e == NULL || qp->req.una != p->psn)
		return MWP_DROP_RESP_STALE;
	if ((aeth_syndrome(a) & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK ||
	    (e->w.opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	     e->w.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD))
		return bad_response(qp, e);
	/* the original value, in host order, into the one 8-byte SGE */
	memcpy(&orig, ack, sizeof(orig));
	orig = ROCE_BE64(orig);
	dst = (uint8_t *)(uintptr_t)mwp_wqe_span(qp, &e->w, 0, 8, true, &span);
	if (dst == NULL || span != 8) {
		fail(qp, e, IBV_WC_LOC_PROT_ERR);
		return MWP_DROP_NONE;
	}
	memcpy(dst, &orig, sizeof(orig));
	qp->req.una = (p->psn + 1) & ROCE_PSN_MASK;
	qp->req.st.acks++;
	complete(qp, e);
	progress(qp);
	mwp_cq_deliver_sq(qp);
	return MWP_DROP_NONE;
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
	e = oldest(qp);
	if (e == NULL || r->una != q)
		return MWP_DROP_RESP_STALE;
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
		if (data == NULL || !mwp_wqe_copy(qp, &e->w, off, (uint8_t *)(uintptr_t)data, want, true)) {
			fail(qp, e, IBV_WC_LOC_PROT_ERR);
			return MWP_DROP_NONE;
		}
		r->st.read_bytes += want;
	}
	e->resp_psn = (q + 1) & ROCE_PSN_MASK;
	r->una = e->resp_psn;
	r->st.acks++;
	if (q == e->last_psn)
		complete(qp, e);
	progress(qp);
	mwp_cq_deliver_sq(qp);
	return MWP_DROP_NONE;
}

enum mwp_drop
mwp_req_rx(struct mwp_qp *qp, const struct rte_mbuf *m,
	   const struct mwp_pkt *p)
{
	struct mwp_req *r = &qp->req;

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
		arm_ack_timer(qp);
		return;
	}
	r->st.timeouts++;
	if (retry(qp)) {
		r->retrying = 1;
		go_back(qp, r->una);
	}
	mwp_cq_deliver_sq(qp);
}

/* ---- sending ---- */

/* Is the peer's MAC known?  The configured one, or what the port's
 * neighbour table found for the peer's GID (looked up again every second;
 * probes go out through c).  false: not yet -- the timer looks again --
 * or never: the table gave up, and the oldest WQE fails. */
static bool
peer_mac(struct mwp_tx *tx, struct mwp_ctrl_ctx *ctrl, struct mwp_qp *qp)
{
	struct mwp_req *r = &qp->req;
	const uint64_t now = mwp_sched_now(qp);
	struct rte_ether_addr mac;
	enum mwp_neigh_res res;
	bool probe, unicast;

	if (__atomic_load_n(&qp->has_peer_mac, __ATOMIC_ACQUIRE)) {
		if (!r->have_mac || !rte_is_same_ether_addr(&r->mac, &qp->peer_mac)) {
			r->mac = qp->peer_mac;
			r->have_mac = 1;
			make_flow(qp);
		}
		return true;
	}
	if (r->have_mac && now - r->mac_tsc < mwp_sched_ns(qp, MAC_RECHECK_US * UINT64_C(1000)))
		return true;
	if (mwp_port_is_own_ip(qp->port, qp->peer_gid) &&
	    !rte_is_zero_ether_addr(&qp->port->conf.mac)) {
		/* a QP of this port: to our own MAC, which the poll loop
		 * turns back in */
		if (!r->have_mac || !rte_is_same_ether_addr(&r->mac, &qp->port->conf.mac)) {
			r->mac = qp->port->conf.mac;
			make_flow(qp);
		}
		r->have_mac = 1;
		r->mac_tsc = now;
		return true;
	}
	if (qp->port->neigh == NULL)
		res = MWP_NEIGH_UNREACH;
	else
		res = mwp_neigh_resolve(qp->port->neigh, qp->peer_gid, now, &mac, &probe,
					&unicast);
	if (res != MWP_NEIGH_UNREACH && probe && mwp_tx_room(tx)) {
		struct rte_mbuf *m;

		ctrl->mp = qp->port->mp;
		m = mwp_ctrl_probe(ctrl, qp->peer_gid, unicast ? &mac : NULL);
		if (m != NULL)
			mwp_tx_queue(tx, m, false);
	}
	switch (res) {
	case MWP_NEIGH_OK:
		if (!r->have_mac || !rte_is_same_ether_addr(&r->mac, &mac)) {
			r->mac = mac;
			make_flow(qp);
		}
		r->have_mac = 1;
		r->mac_tsc = now;
		return true;
	case MWP_NEIGH_WAIT:
		/* a MAC known before stays in use while it is asked again */
		if (r->have_mac)
			return true;
		r->st.unresolved++;
		if (!mwp_timer_armed(&r->tmr))
			mwp_timer_arm(mwp_sched_wheel(qp), &r->tmr,
				      now + mwp_sched_ns(qp, MAC_RETRY_US * UINT64_C(1000)));
		return false;
	default:
		/* nobody answers for that address */
		r->have_mac = 0;
		r->st.unresolved++;
		fail(qp, oldest(qp), IBV_WC_RETRY_EXC_ERR);
		return false;
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
		if (!peer_mac(tx, ctrl, qp))
			return false;
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
		m = mwp_tx_slot(tx);
		if (m == NULL) {
			r->st.no_mbuf++;
			return true;
		}
		p = mwp_tx_next_pkt(tx);
		next = build_request(qp, e, m, p, &icrc);
		if (next < 0) {
			rte_pktmbuf_free(m);
			fail(qp, e, IBV_WC_LOC_PROT_ERR);
			return false;
		}
		again = psn_diff(r->tx_psn, r->sent_psn) < 0;
		mwp_tx_queue(tx, m, icrc == 1);
		if (again) {
			r->st.retrans++;
		} else {
			r->st.pkts++;
			r->sent_psn = (uint32_t)next;
		}
		/* the ACK timer runs while anything is unacknowledged */
		if (rc && !mwp_timer_armed(&r->tmr)) {
			r->ack_clock = mwp_sched_now(qp);
			arm_ack_timer(qp);
		}
		r->tx_psn = (uint32_t)next;
		if (psn_diff(r->tx_psn, e->last_psn) > 0) {
			r->tx_pos++;
			if (!e->sent) {
				/* binds and invalidations behind it may run */
				e->sent = 1;
				if (--r->nb_unsent == 0 && rte_ring_count(qp->sq) != 0)
					mwp_sched_kick_sq(qp);
			}
			if (!rc) {
				/* UC: complete once sent */
				complete(qp, e);
				mwp_cq_deliver_sq(qp);
			}
		}
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

void
mwp_req_attach(struct mwp_qp *qp)
{
	mwp_timer_init(&qp->req.tmr, on_timer);
}
