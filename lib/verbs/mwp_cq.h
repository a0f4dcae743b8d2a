/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CQ_H
#define MWP_CQ_H

/* A completion queue (mwp_cq.c): the ring the completions of QPs reach.
 * Private. */

#include <rte_ring.h>
#include <rte_spinlock.h>

#include "mwp_device.h"
#include "mwp_verbs.h"

struct mwp_cq {
	/* an extended CQ (mwp_cq_ex.c) begins as an ordinary one:
	 * ibv_cq_ex_to_cq() is a cast */
	union {
		struct ibv_cq ibcq;
		struct ibv_cq_ex ibcq_ex;
	};
	struct mwp_dev_obj obj;		/* users: QPs reporting to it */
	struct rte_ring *ring;		/* of struct ibv_wc */
	uint64_t overruns;		/* completions that found it full */
	/* completion events: armed by ibv_req_notify_cq, disarmed by the
	 * next completion, which calls event(cq, event_arg) */
	uint8_t armed;
	mwp_cq_event_fn event;
	void *event_arg;
	/* extended polling: the completion start_poll or next_poll took,
	 * and the consumer's hold from start_poll to end_poll */
	struct ibv_wc cur;
	rte_spinlock_t poll_lock;
	uint8_t single_threaded;	/* IBV_CREATE_CQ_ATTR_SINGLE_THREADED */
};

#define to_mcq(c)	container_of(c, struct mwp_cq, ibcq)

int mwp_op_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int mwp_op_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* 0, or -ENOSPC if the CQ is full (the caller keeps the completion; the
 * overrun is counted). */
int mwp_cq_push(struct mwp_cq *cq, const struct ibv_wc *wc);

/* The qp_num a purged completion bears (QPNs have 24 bits): polls skip
 * it. */
#define MWP_WC_PURGED	UINT32_MAX

/* Take a QP's completions out of a CQ (its transition to RESET, as mlx4
 * and mlx5 clean their CQs): each one still in the ring is marked, in
 * place and atomically, and polls pass over it.  The QP must produce no
 * completions meanwhile; other QPs and pollers may run.  Returns how
 * many were taken. */
unsigned int mwp_cq_purge_qp(struct mwp_cq *cq, uint32_t qpn);

/* A completion the CQ could not take: counted; the CQ is in error from
 * its first overrun (verbs), and told so. */
void mwp_cq_overrun(struct mwp_cq *cq);

#endif /* MWP_CQ_H */
