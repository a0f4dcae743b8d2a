/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The send queue of a QP: WQEs execute in posting order -- BIND_MW and
 * LOCAL_INV by the window's rules (mwp_mw.c), data WQEs by handing them
 * to the requester (req/), which the QP's engine runs -- and then wait in the QP's window until
 * they are complete: an invalidation until an RCU grace period has passed, so
 * that a completion the consumer sees means no reader can still use the
 * old key (C10-68); a data WQE until the peer acknowledged it (RC) or it
 * was sent (UC).  Completions are delivered in posting order (mwp_cq.c).
 * A failed WQE moves the QP to ERR; everything after it completes with
 * WR_FLUSH_ERR.
 *
 * Runs on the thread that runs the QP: its engine's, or mwp_poll's under
 * the device lock (mwp_sched.h).
 */
#include <errno.h>
#include <string.h>

#include <rte_pause.h>
#include <rte_ring_elem.h>

#include "mwp_cq.h"
#include "mwp_mw.h"
#include "mwp_rq.h"
#include "mwp_sched.h"
#include "mwp_sq.h"
#include "mwp_tsan.h"
#include "mwp_wqe.h"

static enum ibv_wc_opcode
wc_opcode(uint32_t op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	default:
		return IBV_WC_SEND;
	}
}

/* READs and atomics, ATOMIC WRITE among them (IBA 1.5 makes it an RDMA
 * READ-like request with a response): IBV_SEND_FENCE waits for them, and
 * max_rd_atomic bounds how many are outstanding. */
static bool
is_rd_atomic(uint32_t op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_WRITE;
}

/* The post lock: one poster at a time writes the ring (single-producer:
 * no compare-and-swap of its own) and counts the slots.  One locked
 * instruction a post, where the slot count's atomic add and the
 * multi-producer ring's compare-and-swap were two. */
static inline void
post_lock(struct mwp_qp *qp)
{
	uint32_t free_ = 0;

	while (!__atomic_compare_exchange_n(&qp->sq_post_lock, &free_, 1, false,
					    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		while (__atomic_load_n(&qp->sq_post_lock, __ATOMIC_RELAXED) != 0)
			rte_pause();
		free_ = 0;
	}
}

static inline void
post_unlock(struct mwp_qp *qp)
{
	__atomic_store_n(&qp->sq_post_lock, 0, __ATOMIC_RELEASE);
}

/* n more slots under the post lock, or false: the send queue is full.
 * The runner frees slots (sq_freed) before their completions are seen,
 * so a program that posts as soon as it polls one finds room. */
static inline bool
take_slots(struct mwp_qp *qp, unsigned int n)
{
	const uint32_t held = qp->sq_posted - __atomic_load_n(&qp->sq_freed, __ATOMIC_ACQUIRE);

	if (held + n > qp->cap.max_send_wr)
		return false;
	/* read without the lock by mwp_qp_sq_outstanding */
	__atomic_store_n(&qp->sq_posted, qp->sq_posted + n, __ATOMIC_RELAXED);
	return true;
}

int
mwp_sq_post(struct mwp_qp *qp, const struct mwp_wqe *w)
{
	return mwp_sq_post_n(qp, w, 1);
}

int
mwp_sq_post_n(struct mwp_qp *qp, const struct mwp_wqe *w, unsigned int n)
{
	enum ibv_qp_state st = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE);
	struct rte_ring_zc_data zcd;

	/* In ERR the WQE is taken and flushed with WR_FLUSH_ERR. */
	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR)
		return EINVAL;
	if (n == 0)
		return 0;
	post_lock(qp);
	/* a slot is held from post to completion (verbs' send queue depth) */
	if (!take_slots(qp, n)) {
		post_unlock(qp);
		return ENOMEM;
	}
	if (rte_ring_enqueue_zc_bulk_elem_start(qp->sq, sizeof(*w), n, &zcd, NULL) != n) {
		__atomic_store_n(&qp->sq_posted, qp->sq_posted - n, __ATOMIC_RELAXED);
		post_unlock(qp);
		return ENOMEM;
	}
	/* in place, only the bytes that mean something; the slots may wrap
	 * at the ring's end; published by the release after the writes */
	for (unsigned int i = 0; i < n; i++)
		memcpy(i < zcd.n1 ? (struct mwp_wqe *)zcd.ptr1 + i :
		       (struct mwp_wqe *)zcd.ptr2 + (i - zcd.n1), &w[i], mwp_wqe_size(&w[i]));
	MWP_TSAN_RELEASE(qp->sq);
	rte_ring_enqueue_zc_elem_finish(qp->sq, n);
	post_unlock(qp);
	/* A QP its engine watches needs no doorbell: the engine sees the
	 * ring's tail move.  No fence between the tail and this load: the
	 * engine, before it stops watching, clears sq_watched and runs a
	 * membarrier(2), then reads the tail (mwp_engine.c, unwatch) --
	 * either it sees this post, or this sees the flag cleared. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&qp->sq_watched, __ATOMIC_RELAXED))
		mwp_sched_doorbell(qp);
	return 0;
}

/* ---- completions, in posting order ---- */

/* Deliver completed entries in order; stop at the first that is not
 * complete, or when the CQ is full (an overrun: the QP goes to ERR and the
 * completion waits, never dropped). */
int
mwp_sq_deliver(struct mwp_qp *qp)
{
	uint32_t ready = 0, pos = qp->sq_head;
	int n = 0;

	/* how many are complete, from the oldest */
	for (; pos != qp->sq_tail; pos++, ready++) {
		const struct mwp_swqe *e = mwp_swqe_at(qp, pos);

		if (e->state == MWP_SWQE_REQ)
			break;
		if (e->state == MWP_SWQE_GRACE &&
		    rte_rcu_qsbr_check(qp->dev->rcu, e->token, false) != 1) {
			/* look again on the engine's next pass */
			mwp_sched_kick_sq(qp);
			break;
		}
	}
	if (ready == 0)
		return 0;
	/* their slots are free before their completions are seen: a
	 * program that posts again as soon as it polls one (qperf does)
	 * must find room.  This thread alone writes sq_freed: a store. */
	__atomic_store_n(&qp->sq_freed, qp->sq_freed + ready, __ATOMIC_RELEASE);
	while ((uint32_t)n < ready) {
		struct mwp_swqe *e = mwp_swqe_at(qp, qp->sq_head);

		if ((e->signaled || e->wc.status != IBV_WC_SUCCESS) &&
		    mwp_cq_push(qp->scq, &e->wc) != 0) {
			/* the rest keep their slots until they are delivered */
			__atomic_store_n(&qp->sq_freed, qp->sq_freed - (ready - (uint32_t)n),
					 __ATOMIC_RELAXED);
			mwp_qp_overrun(qp);
			break;
		}
		if (e->det_bind)
			qp->det_bind_out--;
		qp->sq_head++;
		n++;
	}
	/* the head of the ring may have waited for these (LOCAL_INV's
	 * implicit fence, a DET bind's) */
	if (n != 0 && rte_ring_count(qp->sq) != 0)
		mwp_sched_kick_sq(qp);
	return n;
}

void
mwp_sq_done(struct mwp_qp *qp, struct mwp_swqe *e, enum ibv_wc_status status)
{
	e->state = MWP_SWQE_READY;
	e->wc.status = status;
	/* bytes only where verbs providers give them (mlx5): a READ's, an
	 * ATOMIC's 8 (an ATOMIC WRITE's 8 too, as rxe's); not a SEND's or a
	 * WRITE's */
	if (status == IBV_WC_SUCCESS && e->w.opcode == IBV_WR_RDMA_READ)
		e->wc.byte_len = e->total;
	else if (status == IBV_WC_SUCCESS && e->rd_atomic)
		e->wc.byte_len = sizeof(uint64_t);
	if (e->rd_atomic) {
		qp->rd_atomic_out--;
		e->rd_atomic = 0;
	}
	if (status != IBV_WC_SUCCESS)
		mwp_qp_to_err(qp);
	/* a WQE may have waited for this one (a fence, LOCAL_INV) */
	if (rte_ring_count(qp->sq) != 0 || status != IBV_WC_SUCCESS)
		mwp_sched_kick_sq(qp);
}

/* ---- the window: each WQE from its execution to its completion ---- */

static struct mwp_swqe *
swq_push(struct mwp_qp *qp, const struct mwp_wqe *w, enum ibv_wc_status st)
{
	struct mwp_swqe *e = mwp_swqe_at(qp, qp->sq_tail++);

	memset(&e->wc, 0, sizeof(e->wc));
	memcpy(&e->w, w, mwp_wqe_size(w));
	e->wc.wr_id = w->wr_id;
	e->wc.status = st;
	e->wc.opcode = wc_opcode(w->opcode);
	e->wc.qp_num = qp->ibqp.qp_num;
	e->state = MWP_SWQE_READY;
	e->signaled = qp->sq_sig_all || (w->flags & MWP_WQE_F_SIGNALED);
	e->rd_atomic = 0;
	e->det_bind = 0;
	e->started = 0;
	e->b0 = NULL;
	return e;
}

/* Has an earlier WQE work still to do?  A request on the wire has; a
 * bind or invalidation that waits only for the grace period of the key
 * it revoked has done its work -- its completion waits so that no lcore
 * can still use the old key when it is seen (C10-68), and completions
 * leave in posting order all the same. */
static bool
earlier_at_work(const struct mwp_qp *qp)
{
	for (uint32_t pos = qp->sq_head; pos != qp->sq_tail; pos++) {
		const struct mwp_swqe *e = mwp_swqe_at(qp, pos);

		if (e->state != MWP_SWQE_GRACE && e->state != MWP_SWQE_READY)
			return true;
	}
	return false;
}

/* May the WQE at the head run now? (section 5) */
static bool
blocked(const struct mwp_qp *qp, const struct mwp_wqe *w)
{
	/* A DET bind fences every later WQE until it completes. */
	if (qp->det_bind_out != 0)
		return true;
	/* LOCAL_INV: an implicit fence on every earlier WQE's work (an
	 * earlier invalidation in its grace period does not hold it: a
	 * batch of invalidations shares grace periods instead of taking
	 * one each). */
	if (w->opcode == IBV_WR_LOCAL_INV && qp->sq_head != qp->sq_tail &&
	    earlier_at_work(qp))
		return true;
	/* In order: a bind or an invalidation waits until every earlier
	 * data WQE is on the wire. */
	if ((w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV) &&
	    qp->req.nb_unsent != 0)
		return true;
	/* IBV_SEND_FENCE: earlier READs and ATOMICs must be complete. */
	if ((w->flags & MWP_WQE_F_FENCE) && qp->rd_atomic_out != 0)
		return true;
	return false;
}

/* Run the WQE at the head.  Returns false if it cannot leave the ring
 * yet. */
static bool
execute(struct mwp_qp *qp, const struct mwp_wqe *w, bool *failed)
{
	enum ibv_wc_status st;
	struct mwp_swqe *e;
	uint32_t revoked = 0;

	*failed = false;
	switch (w->opcode) {
	case IBV_WR_BIND_MW:
		st = mwp_mw_bind_exec(qp, w, &revoked);
		break;
	case IBV_WR_LOCAL_INV:
		st = mwp_mw_local_inv_exec(qp, w, &revoked);
		break;
	default:
		/* a data WQE needs a wire: a QP on no port keeps it */
		if (qp->port == NULL)
			return false;
		e = swq_push(qp, w, IBV_WC_SUCCESS);
		st = mwp_wqe_prepare(qp, e);
		if (st != IBV_WC_SUCCESS) {
			e->wc.status = st;
			*failed = true;
			return true;
		}
		e->state = MWP_SWQE_REQ;
		e->sent = 0;
		qp->req.nb_unsent++;
		if (is_rd_atomic(w->opcode)) {
			e->rd_atomic = 1;
			qp->rd_atomic_out++;
		}
		mwp_sched_kick_tx(qp);
		return true;
	}
	e = swq_push(qp, w, st);
	if (w->flags & MWP_WQE_F_DET_BIND) {
		e->det_bind = 1;
		qp->det_bind_out++;
	}
	if (revoked) {
		e->state = MWP_SWQE_GRACE;
		e->token = rte_rcu_qsbr_start(qp->dev->rcu);
	}
	*failed = st != IBV_WC_SUCCESS;
	return true;
}

void
mwp_sq_req_stop(struct mwp_qp *qp)
{
	struct mwp_req *r = &qp->req;

	r->rnr_wait = 0;
	r->rd_out = 0;
	r->nb_unsent = 0;
	if (qp->owner == NULL)
		return;
	mwp_timer_cancel(mwp_sched_wheel(qp), &r->tmr);
	mwp_sched_untx(qp);
}

/* In ERR: the requester's WQEs and every WQE still in the ring complete
 * with WR_FLUSH_ERR (always reported), and so does every posted receive. */
static int
flush(struct mwp_qp *qp)
{
	struct mwp_wqe w;
	int n = 0;

	/* requests on the wire will never be answered now */
	mwp_sq_req_stop(qp);
	for (uint32_t pos = qp->sq_head; pos != qp->sq_tail; pos++) {
		struct mwp_swqe *e = mwp_swqe_at(qp, pos);

		if (e->state == MWP_SWQE_REQ) {
			e->state = MWP_SWQE_READY;
			e->wc.status = IBV_WC_WR_FLUSH_ERR;
			n++;
		}
		e->rd_atomic = 0;
	}
	qp->rd_atomic_out = 0;
	qp->req.nb_unsent = 0;
	while (rte_ring_dequeue_elem(qp->sq, &w, sizeof(w)) == 0) {
		MWP_TSAN_ACQUIRE(qp->sq);
		swq_push(qp, &w, IBV_WC_WR_FLUSH_ERR);
		n++;
	}
	n += mwp_rq_flush(qp);
	return n;
}

int
mwp_sq_run(struct mwp_qp *qp, unsigned int max)
{
	enum ibv_qp_state st = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE);
	int work = 0, pass;

	if (st == IBV_QPS_RESET)
		return 0;
	/* until nothing moves: a completion delivered may unblock the head
	 * (a DET bind's fence, LOCAL_INV's) */
	do {
		pass = mwp_sq_deliver(qp);
		while (max != 0 && qp->ibqp.state != IBV_QPS_ERR) {
			struct rte_ring_zc_data zcd;
			const struct mwp_wqe *w;
			bool failed;

			/* the WQE at the head, read where it is */
			if (rte_ring_dequeue_zc_bulk_elem_start(qp->sq, sizeof(*w), 1, &zcd,
							   NULL) != 1)
				break;
			MWP_TSAN_ACQUIRE(qp->sq);
			w = zcd.ptr1;
			if (blocked(qp, w) || !execute(qp, w, &failed)) {
				rte_ring_dequeue_zc_elem_finish(qp->sq, 0);
				break;
			}
			rte_ring_dequeue_zc_elem_finish(qp->sq, 1);
			max--;
			pass++;
			if (failed)
				mwp_qp_to_err(qp);
		}
		if (qp->ibqp.state == IBV_QPS_ERR)
			pass += flush(qp);
		pass += mwp_sq_deliver(qp);
		work += pass;
	} while (pass != 0 && max != 0 && rte_ring_count(qp->sq) != 0);
	return work;
}

void
mwp_sq_reset(struct mwp_qp *qp)
{
	struct mwp_wqe w;
	struct mwp_rwqe r;

	while (rte_ring_dequeue_elem(qp->sq, &w, sizeof(w)) == 0)
		;
	while (rte_ring_dequeue_elem(qp->rq, &r, sizeof(r)) == 0)
		;
	qp->sq_head = qp->sq_tail = 0;
	qp->rd_atomic_out = qp->det_bind_out = 0;
	/* no poster in RESET (mwp_sq_post_n refuses it); the lock all the
	 * same, for one that read the state before it changed */
	post_lock(qp);
	__atomic_store_n(&qp->sq_freed, qp->sq_posted, __ATOMIC_RELEASE);
	post_unlock(qp);
}
