/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues (ibv_create_srq and its verbs).  Receives are
 * posted from any thread without a lock; the threads that run the QPs
 * attached take them in order, each whole (an HTS ring: one taker at a
 * time, none waits long).  max_wr may change up to the room the ring was
 * made with (the next power of two above the max_wr asked at creation);
 * the limit, once armed, raises IBV_EVENT_SRQ_LIMIT_REACHED when fewer
 * receives than it remain, and disarms.  An SRQ in use by a QP cannot
 * be destroyed (EBUSY).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring_elem.h>

#include "mwp_errno.h"
#include "mwp_ring.h"
#include "mwp_rq.h"
#include "mwp_srq.h"
#include "mwp_tsan.h"
#include "mwp_verbs.h"

#define SRQ_MAX_WR	65536

static uint32_t next_srq_handle;

static void
srq_release(struct mwp_dev_obj *o)
{
	struct mwp_srq *srq = container_of(o, struct mwp_srq, obj);

	pthread_mutex_lock(&o->dev->lock);
	to_mpd(srq->ibsrq.pd)->obj.users--;
	pthread_mutex_unlock(&o->dev->lock);
	mwp_ring_free(srq->ring);
	free(srq);
}

struct ibv_srq *
mwp_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct mwp_srq *srq;
	struct mwp_dev *d;

	if (pd == NULL || attr == NULL || attr->attr.max_wr == 0 ||
	    attr->attr.max_wr > SRQ_MAX_WR || attr->attr.max_sge > MWP_MAX_SGE ||
	    attr->attr.srq_limit > attr->attr.max_wr)
		return mwp_null_errno(EINVAL);
	d = to_mdev(pd->context);
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return mwp_null_errno(ENOMEM);
	/* posting: any thread; taking: the lcores of its QPs, each whole;
	 * room for max_wr and up to the next power of two */
	srq->ring = mwp_ring_make("srq", sizeof(struct mwp_rwqe),
				  rte_align32pow2(attr->attr.max_wr + 1) - 1, d->socket,
				  RING_F_MC_HTS_DEQ);
	if (srq->ring == NULL) {
		free(srq);
		return mwp_null_errno(ENOMEM);
	}
	srq->cap = rte_ring_get_capacity(srq->ring);
	srq->max_wr = attr->attr.max_wr;
	srq->max_sge = RTE_MAX(attr->attr.max_sge, 1u);
	srq->limit = attr->attr.srq_limit;
	srq->ibsrq.context = pd->context;
	srq->ibsrq.srq_context = attr->srq_context;
	srq->ibsrq.pd = pd;
	srq->ibsrq.handle = __atomic_fetch_add(&next_srq_handle, 1, __ATOMIC_RELAXED);
	srq->ibsrq.events_completed = 0;
	attr->attr.max_wr = srq->max_wr;
	attr->attr.max_sge = srq->max_sge;
	pthread_mutex_lock(&d->lock);
	to_mpd(pd)->obj.users++;
	pthread_mutex_unlock(&d->lock);
	mwp_dev_obj_add(d, &d->srqs, &srq->obj, srq_release);
	return &srq->ibsrq;
}

int
mwp_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct mwp_srq *srq;
	struct mwp_dev *d;
	int ret = 0;

	if (ibsrq == NULL || attr == NULL ||
	    (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) != 0)
		return EINVAL;
	srq = to_msrq(ibsrq);
	d = to_mdev(ibsrq->context);
	pthread_mutex_lock(&d->lock);
	if ((mask & IBV_SRQ_MAX_WR) &&
	    (attr->max_wr == 0 || attr->max_wr > srq->cap ||
	     attr->max_wr < rte_ring_count(srq->ring)))
		ret = EINVAL;
	else if ((mask & IBV_SRQ_LIMIT) &&
		 attr->srq_limit > ((mask & IBV_SRQ_MAX_WR) ? attr->max_wr : srq->max_wr))
		ret = EINVAL;
	if (ret == 0) {
		if (mask & IBV_SRQ_MAX_WR)
			__atomic_store_n(&srq->max_wr, attr->max_wr, __ATOMIC_RELEASE);
		/* armed: the event comes when a receive taken leaves fewer */
		if (mask & IBV_SRQ_LIMIT)
			__atomic_store_n(&srq->limit, attr->srq_limit, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int
mwp_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	const struct mwp_srq *srq;

	if (ibsrq == NULL || attr == NULL)
		return EINVAL;
	srq = to_msrq(ibsrq);
	attr->max_wr = __atomic_load_n(&srq->max_wr, __ATOMIC_ACQUIRE);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	return 0;
}

int
mwp_destroy_srq(struct ibv_srq *ibsrq)
{
	if (ibsrq == NULL)
		return EINVAL;
	return mwp_dev_obj_del(&to_msrq(ibsrq)->obj);
}

int
mwp_op_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct mwp_srq *srq = to_msrq(ibsrq);
	int ret = 0;

	for (; wr != NULL; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (rte_ring_count(srq->ring) >=
		    __atomic_load_n(&srq->max_wr, __ATOMIC_ACQUIRE)) {
			ret = ENOMEM;
			break;
		}
		ret = mwp_rq_push(srq->ring, wr);
		if (ret != 0)
			break;
	}
	if (ret != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return ret;
}
