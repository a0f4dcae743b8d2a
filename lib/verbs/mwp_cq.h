/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CQ_H
#define MWP_CQ_H

/* A completion queue (mwp_cq.c): the ring the completions of QPs reach.
 * Private. */

#include <rte_ring.h>

#include "mwp_device.h"
#include "mwp_verbs.h"

struct mwp_cq {
	struct ibv_cq ibcq;
	struct mwp_dev_obj obj;		/* users: QPs reporting to it */
	struct rte_ring *ring;		/* of struct ibv_wc */
	uint64_t overruns;		/* completions that found it full */
	/* completion events: armed by ibv_req_notify_cq, disarmed by the
	 * next completion, which calls event(cq, event_arg) */
	uint8_t armed;
	mwp_cq_event_fn event;
	void *event_arg;
};

#define to_mcq(c)	container_of(c, struct mwp_cq, ibcq)

int mwp_op_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int mwp_op_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* 0, or -ENOSPC if the CQ is full (the caller keeps the completion; the
 * overrun is counted). */
int mwp_cq_push(struct mwp_cq *cq, const struct ibv_wc *wc);

/* A completion the CQ could not take: counted; the CQ is in error from
 * its first overrun (verbs), and told so. */
void mwp_cq_overrun(struct mwp_cq *cq);

#endif /* MWP_CQ_H */
