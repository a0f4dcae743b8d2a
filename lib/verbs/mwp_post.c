/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting to a send queue (ibv_post_send, ibv_bind_mw, mwp_det_bind):
 * each work request checked against its QP and made a WQE at post time
 * -- from any thread, with no lock -- then put on the QP's send ring,
 * where its engine runs it (mwp_sq.c).  And what a program may ask of a
 * send queue's progress.  Receives are posted in mwp_rq.c.
 */
#include <errno.h>
#include <string.h>

#include <rte_ring_elem.h>

#include "mwp_keygen.h"
#include "mwp_mw.h"
#include "mwp_post.h"
#include "mwp_sq.h"

/* Which opcodes each transport may post (IBA 10.8.2; rxe's table). */
static bool
opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	if (t == IBV_QPT_UD)
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return true;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_WRITE:
		return t == IBV_QPT_RC;
	default:
		return false;
	}
}

/* The bytes a WR's SGEs name in all. */
static uint64_t
sge_total(const struct ibv_send_wr *wr)
{
	uint64_t total = 0;

	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	return total;
}

/* A UD send: its address handle's destination, copied, and the peer's
 * QP and Q_Key; a message must fit one packet of the port's MTU. */
static int
make_ud(struct mwp_qp *qp, const struct ibv_send_wr *wr, struct mwp_wqe *w)
{
	const struct ibv_ah *ah = wr->wr.ud.ah;

	if (ah == NULL || ah->context != qp->ibqp.context ||
	    wr->wr.ud.remote_qpn > ROCE_PSN_MASK)
		return EINVAL;
	if (sge_total(wr) > mwp_qp_mtu_bytes(qp))
		return EINVAL;
	w->ud.dest = to_mah((struct ibv_ah *)(uintptr_t)ah)->dest;
	w->ud.remote_qpn = wr->wr.ud.remote_qpn;
	w->ud.remote_qkey = wr->wr.ud.remote_qkey;
	return 0;
}

/* Turn one posted WR into a WQE; 0 or the verbs errno. */
static int
make_wqe(struct mwp_qp *qp, const struct ibv_send_wr *wr, struct mwp_wqe *w)
{
	int ret;

	/* the header; SGEs or inline data are written as far as used
	 * (mwp_wqe_size) */
	memset(w, 0, offsetof(struct mwp_wqe, sge));
	if (!opcode_ok(qp->ibqp.qp_type, wr->opcode) || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return EINVAL;
	if (qp->ibqp.qp_type == IBV_QPT_UD && (ret = make_ud(qp, wr, w)) != 0)
		return ret;
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->flags = (wr->send_flags & IBV_SEND_SIGNALED) ? MWP_WQE_F_SIGNALED : 0;
	if (wr->send_flags & IBV_SEND_FENCE)
		w->flags |= MWP_WQE_F_FENCE;

	switch (wr->opcode) {
	case IBV_WR_BIND_MW: {
		const struct ibv_mw *mw = wr->bind_mw.mw;
		const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;

		/* No SGEs, no immediate; Type 1 windows are bound with
		 * ibv_bind_mw, never posted (o10-37.2.34). */
		if (wr->num_sge != 0 || wr->imm_data != 0 || mw == NULL ||
		    mw->context != qp->ibqp.context || mw->type != IBV_MW_TYPE_2 ||
		    (bi->mr == NULL && (bi->addr != 0 || bi->length != 0)))
			return EINVAL;
		w->bind.mw_index = to_mmw((struct ibv_mw *)(uintptr_t)mw)->index;
		w->bind.mw_rkey = mw->rkey;
		w->bind.new_rkey = (w->bind.mw_index << 8) | (wr->bind_mw.rkey & 0xff);
		w->bind.mr_lkey = bi->mr != NULL ? bi->mr->lkey : 0;
		w->bind.addr = bi->addr;
		w->bind.length = bi->length;
		w->bind.access = bi->mw_access_flags;
		return 0;
	}
	case IBV_WR_LOCAL_INV:
		if (wr->num_sge != 0)
			return EINVAL;
		w->imm_or_inv = wr->invalidate_rkey;
		return 0;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8)
			return EINVAL;
		w->rdma.remote_addr = wr->wr.atomic.remote_addr;
		w->rdma.rkey = wr->wr.atomic.rkey;
		w->rdma.compare_add = wr->wr.atomic.compare_add;
		w->rdma.swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* the value: SGEs (or inline data) of exactly 8 bytes in all,
		 * as rxe's post-time check asks */
		if (sge_total(wr) != ROCE_ATOMIC_WRITE_BYTES)
			return EINVAL;
		w->rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->rdma.rkey = wr->wr.rdma.rkey;
		break;
	default:
		break;
	}
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		w->imm_or_inv = wr->invalidate_rkey;
	else if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
		 wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		w->imm_or_inv = wr->imm_data;
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t total;

		/* the data is copied now: the consumer may reuse its buffers
		 * as soon as the call returns, and no lkey is checked */
		if (wr->opcode == IBV_WR_RDMA_READ ||
		    wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			return EINVAL;
		total = sge_total(wr);
		if (total > qp->cap.max_inline_data || total > sizeof(w->inline_data))
			return EINVAL;
		for (int i = 0; i < wr->num_sge; i++) {
			/* an empty SGE may name no buffer (UCX's UD does) */
			if (wr->sg_list[i].length == 0)
				continue;
			memcpy(w->inline_data + w->inline_len,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			w->inline_len += wr->sg_list[i].length;
		}
		w->flags |= MWP_WQE_F_INLINE;
		return 0;
	}
	w->num_sge = (uint32_t)wr->num_sge;
	if (wr->num_sge > 0)
		memcpy(w->sge, wr->sg_list, sizeof(w->sge[0]) * (size_t)wr->num_sge);
	return 0;
}

int
mwp_post_make_wqe(struct mwp_qp *qp, const struct ibv_send_wr *wr, struct mwp_wqe *w)
{
	return make_wqe(qp, wr, w);
}

int
mwp_op_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad_wr)
{
	struct mwp_qp *qp = to_mqp(ibqp);
	struct mwp_wqe w;
	int ret = 0;

	for (; wr != NULL; wr = wr->next) {
		ret = make_wqe(qp, wr, &w);
		if (ret == 0)
			ret = mwp_sq_post(qp, &w);
		if (ret != 0)
			break;
		/* A Type 2 bind leaves mw->rkey alone: the new key is the
		 * consumer's (wr->bind_mw.rkey), to use once the bind has
		 * completed, as with rdma-core's providers; a bind that fails
		 * or is flushed changes nothing it holds. */
	}
	if (ret != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return ret;
}

/* ---- windows: Type 1 binds ---- */

/* Post-time checks shared by the Type 1 verb and the DET call, and the
 * post itself: the new key is written to mw->rkey when the bind is posted
 * (the consumer restores it if the completion fails). */
static int
post_type1_bind(struct ibv_qp *qp, struct ibv_mw *mw,
		const struct ibv_mw_bind_info *bi, uint64_t wr_id,
		uint32_t wqe_flags)
{
	struct mwp_wqe w = { 0 };
	int ret;

	w.wr_id = wr_id;
	w.opcode = IBV_WR_BIND_MW;
	w.flags = wqe_flags | MWP_WQE_F_TYPE1;
	w.bind.mw_index = to_mmw(mw)->index;
	w.bind.mw_rkey = mw->rkey;
	/* the verbs leave the key byte of a Type 1 bind to the device: none
	 * of the window's last MWP_KEY_HIST key bytes (mwp_keygen.h) */
	w.bind.new_rkey = (mw->rkey & ~0xffu) |
			  mwp_key_hist_next(&to_mmw(mw)->key_hist, (uint8_t)mw->rkey,
					    to_mdev(mw->context)->sequential);
	w.bind.mr_lkey = bi->mr != NULL ? bi->mr->lkey : 0;
	w.bind.addr = bi->addr;
	w.bind.length = bi->length;
	w.bind.access = bi->mw_access_flags;
	ret = mwp_sq_post(to_mqp(qp), &w);
	if (ret == 0) {
		mw->rkey = w.bind.new_rkey;
		mwp_key_hist_add(&to_mmw(mw)->key_hist, (uint8_t)w.bind.new_rkey);
	}
	return ret;
}

int
mwp_op_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	const struct ibv_mw_bind_info *bi = &b->bind_info;

	/* ibv_bind_mw() checked the type, mr == NULL with a range, and the
	 * MR's PD; check again for callers of the op itself. */
	if (mw->type != IBV_MW_TYPE_1 || (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED) ||
	    (bi->mr == NULL && (bi->addr != 0 || bi->length != 0)))
		return EINVAL;
	if (bi->mr != NULL && bi->mr->pd != mw->pd)
		return EPERM;
	if (qp->context != mw->context)
		return EINVAL;
	return post_type1_bind(qp, mw, bi, b->wr_id,
			       (b->send_flags & IBV_SEND_SIGNALED) ?
			       MWP_WQE_F_SIGNALED : 0);
}

int
mwp_det_bind(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mr *mr,
	     uint64_t addr, uint64_t length, unsigned int access,
	     uint64_t wr_id, uint32_t *rkey)
{
	const unsigned int remote = IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mw_bind_info bi = {
		.mr = mr, .addr = addr, .length = length,
		.mw_access_flags = access,
	};
	struct mwp_mr *m;
	uint64_t off;
	int ret;

	if (qp == NULL || mw == NULL || rkey == NULL || mw->type != IBV_MW_TYPE_1 ||
	    (access & ~remote) != 0 || (mr == NULL && length != 0))
		return EINVAL;
	if (qp->state != IBV_QPS_RTS)
		return ENOTCONN;
	if (qp->pd != mw->pd || (mr != NULL && mr->pd != mw->pd))
		return EPERM;
	if (length != 0) {
		m = to_mmr(mr);
		if (!(m->access & IBV_ACCESS_MW_BIND) ||
		    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
		     !(m->access & IBV_ACCESS_LOCAL_WRITE)))
			return EACCES;
		if (addr + length < addr)
			return EFAULT;
		if (!mwp_mr_range(m, addr, length, &off))
			return ERANGE;
	} else {
		bi.mr = NULL;
		bi.addr = 0;
	}
	ret = post_type1_bind(qp, mw, &bi, wr_id,
			      MWP_WQE_F_SIGNALED | MWP_WQE_F_DET_BIND);
	if (ret == ENOMEM)
		return ENOSPC;	/* DET's word for a full send queue */
	if (ret != 0)
		return ret;
	*rkey = mw->rkey;
	return 0;
}

unsigned int
mwp_qp_sq_queued(struct ibv_qp *ibqp)
{
	return rte_ring_count(to_mqp(ibqp)->sq);
}

unsigned int
mwp_qp_sq_outstanding(struct ibv_qp *ibqp)
{
	const struct mwp_qp *qp = to_mqp(ibqp);

	return __atomic_load_n(&qp->sq_posted, __ATOMIC_RELAXED) -
	       __atomic_load_n(&qp->sq_freed, __ATOMIC_ACQUIRE);
}

unsigned int
mwp_qp_sq_with_requester(struct ibv_qp *ibqp)
{
	const struct mwp_qp *qp = to_mqp(ibqp);
	unsigned int n = 0;

	for (uint32_t pos = qp->sq_head; pos != qp->sq_tail; pos++)
		n += mwp_swqe_at(qp, pos)->state == MWP_SWQE_REQ;
	return n;
}
