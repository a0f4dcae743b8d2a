/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CQ_H
#define MWP_CQ_H

/* A completion queue, and the completions that reach it (mwp_cq.c).
 * Private. */

#include <rte_ring.h>

#include "mwp_device.h"
#include "mwp_verbs.h"

struct mwp_swqe;
struct mwp_rwqe;

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

/* 0, or -ENOSPC if the CQ is full (the caller keeps the completion). */
int mwp_cq_push(struct mwp_cq *cq, const struct ibv_wc *wc);
/* Deliver what is complete, in order, to the send CQ. */
int mwp_cq_deliver_sq(struct mwp_qp *qp);
/* The requester's: a data WQE is complete with this status (an error
 * moves the QP to ERR). */
void mwp_cq_send_done(struct mwp_qp *qp, struct mwp_swqe *e,
		      enum ibv_wc_status status);
/* The completion of receive r, which the responder took from the ring
 * (it holds it while a SEND fills it): 0, or -ENOSPC on a CQ overrun
 * (the QP goes to ERR). */
int mwp_cq_recv_done(struct mwp_qp *qp, const struct mwp_rwqe *r,
		     enum ibv_wc_opcode opcode, uint32_t byte_len,
		     unsigned int wc_flags, uint32_t imm_or_inv,
		     enum ibv_wc_status status);

/**
 * Complete the oldest posted receive of a QP (taken from the ring and
 * completed in one step).
 *
 * @param opcode
 *   IBV_WC_RECV or IBV_WC_RECV_RDMA_WITH_IMM.
 * @param byte_len
 *   Bytes placed.
 * @param wc_flags
 *   IBV_WC_WITH_IMM (imm_or_inv is the immediate, network order) or
 *   IBV_WC_WITH_INV (imm_or_inv is the invalidated rkey), or 0.
 * @param status
 *   IBV_WC_SUCCESS or the error; an error moves the QP to ERR.
 * @param wr_id
 *   If not NULL, receives the WQE's wr_id.
 * @return
 *   0; -ENOENT if no receive is posted (the responder answers RNR);
 *   -ENOSPC if the CQ is full (the receive stays posted, the QP goes to
 *   ERR: a CQ overrun).
 */
int mwp_cq_recv_complete(struct ibv_qp *qp, enum ibv_wc_opcode opcode,
			 uint32_t byte_len, unsigned int wc_flags,
			 uint32_t imm_or_inv, enum ibv_wc_status status,
			 uint64_t *wr_id);

#endif /* MWP_CQ_H */
