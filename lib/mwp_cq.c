/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_ring_elem.h>

#include "mwp_priv.h"
#include "mwp_tsan.h"

static unsigned int next_cq_id;

struct ibv_cq *
mwp_create_cq(struct ibv_context *ctx, int cqe)
{
	struct mwp_dev *d = to_mdev(ctx);
	char name[RTE_RING_NAMESIZE];
	struct mwp_cq *cq;

	if (cqe < 1 || cqe > (1 << 20)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "mwp_cq%u",
		 __atomic_fetch_add(&next_cq_id, 1, __ATOMIC_RELAXED));
	/* Producers: the executing thread; consumer: ibv_poll_cq. */
	cq->ring = rte_ring_create_elem(name, sizeof(struct ibv_wc), (unsigned int)cqe,
					d->socket, RING_F_EXACT_SZ);
	if (cq->ring == NULL) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->ibcq.context = ctx;
	cq->ibcq.cqe = cqe;
	pthread_mutex_lock(&d->lock);
	TAILQ_INSERT_TAIL(&d->cqs, cq, next);
	d->nb_cqs++;
	pthread_mutex_unlock(&d->lock);
	return &cq->ibcq;
}

int
mwp_destroy_cq(struct ibv_cq *ibcq)
{
	struct mwp_cq *cq = to_mcq(ibcq);
	struct mwp_dev *d = to_mdev(ibcq->context);

	pthread_mutex_lock(&d->lock);
	if (cq->users != 0) {
		pthread_mutex_unlock(&d->lock);
		return EBUSY;
	}
	TAILQ_REMOVE(&d->cqs, cq, next);
	d->nb_cqs--;
	pthread_mutex_unlock(&d->lock);
	rte_ring_free(cq->ring);
	free(cq);
	return 0;
}

/* 0, or -ENOSPC if the CQ is full (the caller keeps the completion). */
int
mwp_cq_push(struct mwp_cq *cq, const struct ibv_wc *wc)
{
	MWP_TSAN_RELEASE(cq->ring);
	if (rte_ring_enqueue_elem(cq->ring, (void *)(uintptr_t)wc, sizeof(*wc)) != 0) {
		cq->overruns++;
		return -ENOSPC;
	}
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
mwp_op_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	RTE_SET_USED(cq);
	RTE_SET_USED(solicited_only);
	/* No completion channels: consumers poll. */
	return EOPNOTSUPP;
}
