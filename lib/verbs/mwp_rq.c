/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A QP's receive queue: receives posted (ibv_post_recv, any thread),
 * taken by the responder as SENDs and WRITEs with immediate arrive --
 * from the QP's own ring, or its SRQ's -- and completed; the QP's own
 * flushed once it is in ERR (an SRQ's stay for its other QPs).
 */
#include <errno.h>
#include <string.h>

#include <rte_ring_elem.h>

#include "mwp_rq.h"
#include "mwp_sched.h"
#include "mwp_tsan.h"

int
mwp_rq_push(struct rte_ring *ring, const struct ibv_recv_wr *wr)
{
	struct mwp_rwqe r = { .wr_id = wr->wr_id, .num_sge = (uint32_t)wr->num_sge };

	if (wr->num_sge > 0)
		memcpy(r.sge, wr->sg_list, sizeof(r.sge[0]) * (size_t)wr->num_sge);
	MWP_TSAN_RELEASE(ring);
	return rte_ring_enqueue_elem(ring, &r, sizeof(r)) == 0 ? 0 : ENOMEM;
}

int
mwp_op_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad_wr)
{
	struct mwp_qp *qp = to_mqp(ibqp);
	enum ibv_qp_state st = __atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE);
	int ret = 0;

	for (; wr != NULL; wr = wr->next) {
		/* a QP on an SRQ takes its receives there (rxe: EINVAL) */
		if (st == IBV_QPS_RESET || qp->srq != NULL || wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > qp->cap.max_recv_sge) {
			ret = EINVAL;
			break;
		}
		ret = mwp_rq_push(qp->rq, wr);
		if (ret != 0)
			break;
	}
	/* in ERR a receive completes at once, flushed (verbs): by the QP's
	 * runner, which a doorbell sends to it (the state read again: a
	 * move to ERR while this posted flushed what it found) */
	if (__atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE) == IBV_QPS_ERR)
		mwp_sched_doorbell(qp);
	if (ret != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return ret;
}

/* The completion wc of a receive: to the receive CQ (an error moves the
 * QP to ERR). */
static int
done(struct mwp_qp *qp, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS)
		mwp_qp_to_err(qp);
	if (mwp_cq_push(qp->rcq, wc) != 0) {
		mwp_qp_overrun(qp);
		return -ENOSPC;
	}
	return 0;
}

int
mwp_rq_done(struct mwp_qp *qp, const struct mwp_rwqe *r,
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
	return done(qp, &wc);
}

int
mwp_rq_done_ud(struct mwp_qp *qp, const struct mwp_rwqe *r, uint32_t byte_len,
	       enum ibv_wc_status status, bool imm, uint32_t imm_data, uint32_t src_qp,
	       uint8_t sl)
{
	const struct ibv_wc wc = {
		.wr_id = r->wr_id, .status = status, .opcode = IBV_WC_RECV,
		.byte_len = byte_len, .qp_num = qp->ibqp.qp_num, .src_qp = src_qp,
		.wc_flags = IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0),
		.imm_data = imm ? imm_data : 0,
		/* the one P_Key (index 0); RoCE has no LIDs */
		.pkey_index = 0, .sl = sl, .slid = 0, .dlid_path_bits = 0,
	};

	return done(qp, &wc);
}

int
mwp_rq_complete(struct ibv_qp *ibqp, enum ibv_wc_opcode opcode,
		     uint32_t byte_len, unsigned int wc_flags, uint32_t imm_or_inv,
		     enum ibv_wc_status status, uint64_t *wr_id)
{
	struct mwp_qp *qp = to_mqp(ibqp);
	struct rte_ring *ring = mwp_rq_ring(qp);
	struct mwp_rwqe r;

	if (rte_ring_dequeue_bulk_elem_start(ring, &r, sizeof(r), 1, NULL) != 1)
		return -ENOENT;
	MWP_TSAN_ACQUIRE(ring);
	/* keep the receive posted if the CQ cannot take its completion */
	if (rte_ring_free_count(qp->rcq->ring) == 0) {
		rte_ring_dequeue_elem_finish(ring, 0);
		mwp_cq_overrun(qp->rcq);
		mwp_qp_overrun(qp);
		return -ENOSPC;
	}
	rte_ring_dequeue_elem_finish(ring, 1);
	if (qp->srq != NULL)
		mwp_srq_taken(qp->srq);
	if (wr_id != NULL)
		*wr_id = r.wr_id;
	return mwp_rq_done(qp, &r, opcode, byte_len, wc_flags, imm_or_inv, status);
}

int
mwp_rq_flush(struct mwp_qp *qp)
{
	struct mwp_rwqe r;
	int n = 0;

	while (rte_ring_dequeue_bulk_elem_start(qp->rq, &r, sizeof(r), 1, NULL) == 1) {
		MWP_TSAN_ACQUIRE(qp->rq);
		struct ibv_wc wc = {
			.wr_id = r.wr_id, .status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV, .qp_num = qp->ibqp.qp_num,
		};

		if (mwp_cq_push(qp->rcq, &wc) != 0) {
			rte_ring_dequeue_elem_finish(qp->rq, 0);
			break;
		}
		rte_ring_dequeue_elem_finish(qp->rq, 1);
		n++;
	}
	return n;
}
