/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_SRQ_H
#define MWP_SRQ_H

/*
 * A shared receive queue (mwp_srq.c): receives posted by any thread and
 * taken by the threads that run the QPs attached to it -- any of them,
 * at once (a multi-consumer ring).  Private.
 */

#include <rte_ring.h>

#include "mwp_device.h"

struct mwp_srq {
	struct ibv_srq ibsrq;
	struct mwp_dev_obj obj;		/* users: the QPs attached to it */
	struct rte_ring *ring;		/* of struct mwp_rwqe */
	uint32_t cap;			/* the ring's room: max_wr's ceiling */
	uint32_t max_wr;		/* receives it holds at most */
	uint32_t max_sge;
	uint32_t limit;			/* armed: the limit event once fewer
					 * than this remain; 0: not armed */
};

#define to_msrq(s)	container_of(s, struct mwp_srq, ibsrq)

int mwp_op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);

/* A receive was taken from the SRQ: if its limit is armed and fewer
 * receives remain, the limit event (IBV_EVENT_SRQ_LIMIT_REACHED), once. */
static inline void
mwp_srq_taken(struct mwp_srq *srq)
{
	const uint32_t limit = __atomic_load_n(&srq->limit, __ATOMIC_RELAXED);

	if (unlikely(limit != 0) && rte_ring_count(srq->ring) < limit &&
	    __atomic_exchange_n(&srq->limit, 0, __ATOMIC_ACQ_REL) != 0)
		mwp_dev_async(to_mdev(srq->ibsrq.context), (struct ibv_async_event){
			.element.srq = &srq->ibsrq,
			.event_type = IBV_EVENT_SRQ_LIMIT_REACHED });
}

#endif /* MWP_SRQ_H */
