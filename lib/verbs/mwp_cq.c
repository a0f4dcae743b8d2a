/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: a ring of work completions, pushed by the thread
 * that runs a QP (its send queue's completions: mwp_sq.c; its receives':
 * mwp_rq.c) and polled by any one consumer thread per CQ, with the
 * completion events of a channel.  A full CQ is an overrun, counted and
 * told once.
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
#include "mwp_ring.h"
#include "mwp_tsan.h"
#include "mwp_verbs.h"

static void
cq_release(struct mwp_dev_obj *o)
{
	struct mwp_cq *cq = container_of(o, struct mwp_cq, obj);

	mwp_ring_free(cq->ring);
	free(cq);
}

struct ibv_cq *
mwp_create_cq(struct ibv_context *ctx, int cqe)
{
	struct mwp_dev *d = to_mdev(ctx);
	struct mwp_cq *cq;

	if (cqe < 1 || cqe > MWP_MAX_CQE)
		return mwp_null_errno(EINVAL);
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return mwp_null_errno(ENOMEM);
	/* Producers: the executing thread; consumer: ibv_poll_cq. */
	cq->ring = mwp_ring_make("cq", sizeof(struct ibv_wc), (unsigned int)cqe,
				 d->socket, 0);
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

void
mwp_cq_overrun(struct mwp_cq *cq)
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
		mwp_cq_overrun(cq);
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

unsigned int
mwp_cq_purge_qp(struct mwp_cq *cq, uint32_t qpn)
{
	struct rte_ring *r = cq->ring;
	uint8_t *slots = (uint8_t *)(r + 1);
	/* what is in the ring and claimed by no poller yet */
	const uint32_t from = __atomic_load_n(&r->cons.head, __ATOMIC_ACQUIRE);
	const uint32_t to = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	RTE_BUILD_BUG_ON(offsetof(struct ibv_wc, qp_num) % 4 != 0);
	for (uint32_t i = from; i != to; i++) {
		struct ibv_wc *wc = (struct ibv_wc *)(slots + (size_t)(i & r->mask) * sizeof(*wc));
		uint32_t want = qpn;

		/* a compare-and-swap: a poller may have taken the slot since,
		 * and a producer filled it with another QP's completion */
		n += __atomic_compare_exchange_n(&wc->qp_num, &want, MWP_WC_PURGED, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	return n;
}

int
mwp_op_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct rte_ring *r = to_mcq(ibcq)->ring;
	unsigned int got, kept;

	if (n <= 0)
		return 0;
	do {
		got = rte_ring_dequeue_burst_elem(r, wc, sizeof(*wc), (unsigned int)n, NULL);
		if (got == 0)
			return 0;
		MWP_TSAN_ACQUIRE(r);
		/* the completions of QPs reset since they were made: gone */
		kept = 0;
		for (unsigned int i = 0; i < got; i++)
			if (likely(wc[i].qp_num != MWP_WC_PURGED))
				wc[kept++] = wc[i];
	} while (kept == 0);
	return (int)kept;
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
