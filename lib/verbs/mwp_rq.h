/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_RQ_H
#define MWP_RQ_H

/*
 * A QP's receive queue (mwp_rq.c): receives posted by any thread, taken
 * and completed by the thread that runs the QP.  Private.
 */

#include <rte_ring_elem.h>

#include "mwp_qp.h"
#include "mwp_srq.h"
#include "mwp_tsan.h"

/* A posted receive wr (its SGE count checked) onto ring, the QP's or an
 * SRQ's: 0, or ENOMEM (full). */
int mwp_rq_push(struct rte_ring *ring, const struct ibv_recv_wr *wr);

int mwp_op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);

/* The completion of receive r, which the responder took from the ring
 * (it holds it while a SEND fills it): 0, or -ENOSPC on a CQ overrun
 * (the QP goes to ERR). */
int mwp_rq_done(struct mwp_qp *qp, const struct mwp_rwqe *r, enum ibv_wc_opcode opcode,
		uint32_t byte_len, unsigned int wc_flags, uint32_t imm_or_inv,
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
int mwp_rq_complete(struct ibv_qp *qp, enum ibv_wc_opcode opcode, uint32_t byte_len,
		    unsigned int wc_flags, uint32_t imm_or_inv, enum ibv_wc_status status,
		    uint64_t *wr_id);

/* Where the QP's receives are: its SRQ's ring, or its own. */
static inline struct rte_ring *
mwp_rq_ring(const struct mwp_qp *qp)
{
	return unlikely(qp->srq != NULL) ? qp->srq->ring : qp->rq;
}

/* Is a receive posted for the QP? */
static inline bool
mwp_rq_posted(const struct mwp_qp *qp)
{
	return rte_ring_count(mwp_rq_ring(qp)) != 0;
}

/* Take the QP's next receive into r, for the thread that runs it: 0, or
 * -ENOENT (none). */
static inline int
mwp_rq_take(struct mwp_qp *qp, struct mwp_rwqe *r)
{
	struct rte_ring *ring = mwp_rq_ring(qp);

	if (rte_ring_dequeue_elem(ring, r, sizeof(*r)) != 0)
		return -ENOENT;
	MWP_TSAN_ACQUIRE(ring);
	if (unlikely(qp->srq != NULL))
		mwp_srq_taken(qp->srq);
	return 0;
}

/* A UD receive's completion: byte_len with the 40 bytes of the GRH area,
 * IBV_WC_GRH, the immediate (network order) if imm, src_qp the sender's
 * QP (its DETH), sl as given (on RoCE, the frame's network type); P_Key
 * index 0 (the one partition).  An error status moves the QP to ERR. */
int mwp_rq_done_ud(struct mwp_qp *qp, const struct mwp_rwqe *r, uint32_t byte_len,
		   enum ibv_wc_status status, bool imm, uint32_t imm_data, uint32_t src_qp,
		   uint8_t sl);

/* In ERR: every posted receive completes with WR_FLUSH_ERR (while the CQ
 * takes them).  Returns how many. */
int mwp_rq_flush(struct mwp_qp *qp);

#endif /* MWP_RQ_H */
