/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_RQ_H
#define MWP_RQ_H

/*
 * A QP's receive queue (mwp_rq.c): receives posted by any thread, taken
 * and completed by the thread that runs the QP.  Private.
 */

#include "mwp_qp.h"

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

/* In ERR: every posted receive completes with WR_FLUSH_ERR (while the CQ
 * takes them).  Returns how many. */
int mwp_rq_flush(struct mwp_qp *qp);

#endif /* MWP_RQ_H */
