/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues, and the completions that reach them: a QP's send
 * WQEs in posting order from its send queue's window (mwp_sq.c), each
 * when it is complete -- an invalidation only after an RCU grace period
 * (C10-68) -- and its receives as the responder consumes them.  A full
 * CQ is an overrun: the QP goes to ERR and the completion waits, never
 * dropped.  Pushed by the thread that runs the QP; polled by any one
 * consumer thread per CQ.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_atomic.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>

#include "mwp_cq.h"
#include "mwp_errno.h"
#include "mwp_sched.h"
#include "mwp_tsan.h"
#include "mwp_verbs.h"

static unsigned int next_cq_id;

static void
cq_release(struct mwp_dev_obj *o)
{
	struct mwp_cq *cq = container_of(o, struct mwp_cq, obj);

	rte_ring_free(cq->ring);
	free(cq);
}

struct ibv_cq *
mwp_create_cq(struct ibv_context *ctx, int cqe)
{
	struct mwp_dev *d = to_mdev(ctx);
	char name[RTE_RING_NAMESIZE];
	struct mwp_cq *cq;

	if (cqe < 1 || cqe > (1 << 20))
		return mwp_null_errno(EINVAL);
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return mwp_null_errno(ENOMEM);
	snprintf(name, sizeof(name), "mwp_cq%u",
		 __atomic_fetch_add(&next_cq_id, 1, __ATOMIC_RELAXED));
	/* Producers: the executing thread; consumer: ibv_poll_cq. */
	cq->ring = rte_ring_create_elem(name, sizeof(struct ibv_wc), (unsigned int)cqe,
					d->socket, RING_F_EXACT_SZ);
	if (cq->ring == NULL) {
		free(cq);
		return mwp_null_errno(ENOMEM);
	}
	cq->ibcq.context = ctx;
	cq->ibcq.cqe = cqe;
	mwp_dev_obj_add(d, &d->cqs, &cq->obj, cq_release);
	return &cq->ibcq;
}

int
mwp_destroy_cq(struct ibv_cq *ibcq)
{
	return mwp_dev_obj_del(&to_mcq(ibcq)->obj);
}

/* A completion the CQ could not take: counted; the CQ is in error from
 * its first overrun (verbs), and told so. */
static void
cq_overrun(struct mwp_cq *cq)
{
	if (cq->overruns++ == 0)
		mwp_dev_async(to_mdev(cq->ibcq.context), (struct ibv_async_event){
			.element.cq = &cq->ibcq, .event_type = IBV_EVENT_CQ_ERR });
}

int
mwp_cq_push(struct mwp_cq *cq, const struct ibv_wc *wc)
{
	MWP_TSAN_RELEASE(cq->ring);
	if (rte_ring_enqueue_elem(cq->ring, (void *)(uintptr_t)wc, sizeof(*wc)) != 0) {
		cq_overrun(cq);
		return -ENOSPC;
	}
	if (likely(cq->event == NULL))
		return 0;	/* no channel: never armed */
	/* The completion in the ring before armed is read: else a store
	 * buffer holds it while a program that arms and then polls (the
	 * verbs way) reads the ring empty, and this reads armed before
	 * the program's store: no event, and the program waits for ever.
	 * Paired with the seq_cst store of mwp_op_req_notify_cq. */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cq->armed, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&cq->armed, 0, __ATOMIC_ACQ_REL) != 0)
		cq->event(&cq->ibcq, cq->event_arg);
	return 0;
}

int
mwp_cq_set_event(struct ibv_cq *ibcq, mwp_cq_event_fn fn, void *arg)
{
	struct mwp_cq *cq = to_mcq(ibcq);

	cq->event_arg = arg;
	cq->event = fn;
	return 0;
}

int
mwp_op_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct rte_ring *r = to_mcq(ibcq)->ring;
	unsigned int got;

	if (n <= 0)
		return 0;
	got = rte_ring_dequeue_burst_elem(r, wc, sizeof(*wc), (unsigned int)n, NULL);
	if (got != 0)
		MWP_TSAN_ACQUIRE(r);
	return (int)got;
}

int
mwp_op_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct mwp_cq *cq = to_mcq(ibcq);

	RTE_SET_USED(solicited_only);	/* any completion signals */
	if (cq->event == NULL)
		return EOPNOTSUPP;	/* no channel: consumers poll */
	/* seq_cst: before the program's next poll reads the ring */
	__atomic_store_n(&cq->armed, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* A QP whose completion its CQ could not take: in error, and told so
 * once (the completion is tried again until the CQ has room). */
static void
overrun(struct mwp_qp *qp)
{
	const bool was_err = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE) == IBV_QPS_ERR;

	mwp_qp_to_err(qp);
	if (!was_err)
		mwp_dev_async(qp->dev, (struct ibv_async_event){
			.element.qp = &qp->ibqp, .event_type = IBV_EVENT_QP_FATAL });
}

/* ---- send completions, in posting order ---- */

/* Deliver completed entries in order; stop at the first that is not
 * complete, or when the CQ is full (an overrun: the QP goes to ERR and the
 * completion waits, never dropped). */
int
mwp_cq_deliver_sq(struct mwp_qp *qp)
{
	int n = 0;

	while (qp->sq_head != qp->sq_tail) {
		struct mwp_swqe *e = mwp_swqe_at(qp, qp->sq_head);

		if (e->state == MWP_SWQE_REQ)
			break;
		if (e->state == MWP_SWQE_GRACE &&
		    rte_rcu_qsbr_check(qp->dev->rcu, e->token, false) != 1) {
			/* look again on the engine's next pass */
			mwp_sched_kick_sq(qp);
			break;
		}
		if ((e->signaled || e->wc.status != IBV_WC_SUCCESS) &&
		    mwp_cq_push(qp->scq, &e->wc) != 0) {
			overrun(qp);
			break;
		}
		if (e->det_bind)
			qp->det_bind_out--;
		qp->sq_head++;
		__atomic_fetch_sub(&qp->sq_used, 1, __ATOMIC_RELEASE);
		n++;
	}
	/* the head of the ring may have waited for these (LOCAL_INV's
	 * implicit fence, a DET bind's) */
	if (n != 0 && rte_ring_count(qp->sq) != 0)
		mwp_sched_kick_sq(qp);
	return n;
}

void
mwp_cq_send_done(struct mwp_qp *qp, struct mwp_swqe *e, enum ibv_wc_status status)
{
	e->state = MWP_SWQE_READY;
	e->wc.status = status;
	/* bytes only where verbs providers give them (mlx5): a READ's, an
	 * ATOMIC's 8; not a SEND's or a WRITE's */
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

/* ---- receive completions ---- */

/* The completion of a receive already taken from the ring (the responder
 * holds it while a SEND fills it).  0, or -ENOSPC on a CQ overrun (the QP
 * goes to ERR). */
int
mwp_cq_recv_done(struct mwp_qp *qp, const struct mwp_rwqe *r,
		 enum ibv_wc_opcode opcode, uint32_t byte_len, unsigned int wc_flags,
		 uint32_t imm_or_inv, enum ibv_wc_status status)
{
	struct ibv_wc wc = {
		.wr_id = r->wr_id, .status = status, .opcode = opcode,
		.byte_len = byte_len, .qp_num = qp->ibqp.qp_num,
		.wc_flags = wc_flags,
	};

	if (wc_flags & IBV_WC_WITH_INV)
		wc.invalidated_rkey = imm_or_inv;
	else if (wc_flags & IBV_WC_WITH_IMM)
		wc.imm_data = imm_or_inv;
	if (status != IBV_WC_SUCCESS)
		mwp_qp_to_err(qp);
	if (mwp_cq_push(qp->rcq, &wc) != 0) {
		overrun(qp);
		return -ENOSPC;
	}
	return 0;
}

int
mwp_cq_recv_complete(struct ibv_qp *ibqp, enum ibv_wc_opcode opcode,
		     uint32_t byte_len, unsigned int wc_flags, uint32_t imm_or_inv,
		     enum ibv_wc_status status, uint64_t *wr_id)
{
	struct mwp_qp *qp = to_mqp(ibqp);
	struct mwp_rwqe r;

	if (rte_ring_dequeue_bulk_elem_start(qp->rq, &r, sizeof(r), 1, NULL) != 1)
		return -ENOENT;
	MWP_TSAN_ACQUIRE(qp->rq);
	/* keep the receive posted if the CQ cannot take its completion */
	if (rte_ring_free_count(qp->rcq->ring) == 0) {
		rte_ring_dequeue_elem_finish(qp->rq, 0);
		cq_overrun(qp->rcq);
		overrun(qp);
		return -ENOSPC;
	}
	rte_ring_dequeue_elem_finish(qp->rq, 1);
	if (wr_id != NULL)
		*wr_id = r.wr_id;
	return mwp_cq_recv_done(qp, &r, opcode, byte_len, wc_flags, imm_or_inv, status);
}
