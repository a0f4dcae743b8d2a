/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ibv_wr_* post API of extended QPs.  Between wr_start and
 * wr_complete a program builds work requests one call at a time: a
 * builder (wr_send, wr_rdma_write...) opens one with the QP's wr_id and
 * wr_flags of that moment, setters (wr_set_sge, wr_set_inline_data,
 * wr_set_ud_addr...) fill it, the next builder or wr_complete closes it.
 * Each is checked and made a WQE exactly as ibv_post_send makes one
 * (mwp_post_make_wqe), so the rules, the completions and the one send
 * queue are the same; wr_complete then posts the batch at once, all or
 * none, with one doorbell.  An error met on the way (a bad attribute:
 * EINVAL; more work requests than the queue has room for: ENOSPC, as
 * rxe's provider says it) is kept and returned by
 * wr_complete, which then posts none of the batch, as rdma-core's
 * providers do; wr_abort drops the batch.
 *
 * The batch is the QP's: wr_start takes its lock and wr_complete or
 * wr_abort gives it back, so threads sharing a QP take turns.  Inline
 * data is copied when it is set (the program may reuse its buffer at
 * once).  The WQE array grows to the deepest batch posted (at most
 * max_send_wr) and is kept: no allocation once a QP has reached its
 * depth.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_spinlock.h>

#include "mwp_post.h"
#include "mwp_qp.h"
#include "mwp_sq.h"

struct mwp_wr_batch {
	rte_spinlock_t lock;	/* wr_start to wr_complete / wr_abort */
	int err;		/* the batch's first error */
	bool open;		/* wr is being built */
	uint32_t n, cap;	/* WQEs made; room in w */
	struct mwp_wqe *w;
	struct ibv_send_wr wr;
	struct ibv_sge sge[MWP_MAX_SGE];
	uint8_t inl[MWP_MAX_INLINE];
};

static inline struct mwp_qp *
to_mqp_ex(struct ibv_qp_ex *x)
{
	return container_of(x, struct mwp_qp, ibqp_ex);
}

static void
fail(struct mwp_wr_batch *b, int err)
{
	if (b->err == 0)
		b->err = err;
}

/* Close the work request being built: made a WQE, or the batch's error. */
static void
close_wr(struct mwp_qp *qp)
{
	struct mwp_wr_batch *b = qp->wrb;

	if (!b->open)
		return;
	b->open = false;
	if (b->err != 0)
		return;
	if (b->n >= qp->cap.max_send_wr) {
		fail(b, ENOSPC);	/* more than the send queue holds */
		return;
	}
	if (b->n == b->cap) {
		uint32_t cap = RTE_MIN(RTE_MAX(b->cap * 2, 16u), qp->cap.max_send_wr);
		struct mwp_wqe *w = realloc(b->w, sizeof(*w) * cap);

		if (w == NULL) {
			fail(b, ENOMEM);
			return;
		}
		b->w = w;
		b->cap = cap;
	}
	b->wr.next = NULL;
	fail(b, mwp_post_make_wqe(qp, &b->wr, &b->w[b->n]));
	if (b->err != 0)
		return;
	if (b->wr.opcode == IBV_WR_ATOMIC_WRITE) {
		struct mwp_wqe *w = &b->w[b->n];

		/* the value wr_atomic_write copied: carried in the WQE, as
		 * inline data is, whatever max_inline_data the QP has */
		w->num_sge = 0;
		memcpy(w->inline_data, b->inl, ROCE_ATOMIC_WRITE_BYTES);
		w->inline_len = ROCE_ATOMIC_WRITE_BYTES;
		w->flags |= MWP_WQE_F_INLINE;
	}
	b->n++;
}

/* Open a work request of opcode op: the previous one is closed. */
static struct ibv_send_wr *
open_wr(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
	struct mwp_qp *qp = to_mqp_ex(x);
	struct mwp_wr_batch *b = qp->wrb;

	close_wr(qp);
	memset(&b->wr, 0, sizeof(b->wr));
	b->wr.wr_id = x->wr_id;
	b->wr.opcode = op;
	b->wr.send_flags = x->wr_flags & ~(unsigned int)IBV_SEND_INLINE;
	b->wr.sg_list = b->sge;
	b->open = true;
	return &b->wr;
}

/* The work request a setter fills; NULL (and the batch's error) if no
 * builder opened one. */
static struct ibv_send_wr *
cur_wr(struct ibv_qp_ex *x)
{
	struct mwp_wr_batch *b = to_mqp_ex(x)->wrb;

	if (!b->open) {
		fail(b, EINVAL);
		return NULL;
	}
	return &b->wr;
}

/* ---- builders ---- */

static void
wr_send(struct ibv_qp_ex *x)
{
	open_wr(x, IBV_WR_SEND);
}

static void
wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	open_wr(x, IBV_WR_SEND_WITH_IMM)->imm_data = imm;
}

static void
wr_send_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	open_wr(x, IBV_WR_SEND_WITH_INV)->invalidate_rkey = rkey;
}

static void
wr_send_tso(struct ibv_qp_ex *x, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	RTE_SET_USED(hdr);
	RTE_SET_USED(hdr_sz);
	RTE_SET_USED(mss);
	open_wr(x, IBV_WR_TSO);		/* refused: raw packet QPs only */
}

static void
wr_rdma(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *wr = open_wr(x, op);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
}

static void
wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	wr_rdma(x, IBV_WR_RDMA_WRITE, rkey, addr);
}

static void
wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, __be32 imm)
{
	wr_rdma(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr);
	to_mqp_ex(x)->wrb->wr.imm_data = imm;
}

static void
wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	wr_rdma(x, IBV_WR_RDMA_READ, rkey, addr);
}

static void
wr_atomic(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
	  uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = open_wr(x, op);

	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void
wr_atomic_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, uint64_t compare,
		  uint64_t swap)
{
	wr_atomic(x, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void
wr_atomic_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, uint64_t add)
{
	wr_atomic(x, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void
wr_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey,
	   const struct ibv_mw_bind_info *bi)
{
	struct ibv_send_wr *wr = open_wr(x, IBV_WR_BIND_MW);

	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	if (bi != NULL)
		wr->bind_mw.bind_info = *bi;
	else
		fail(to_mqp_ex(x)->wrb, EINVAL);
}

/* RDMA ATOMIC WRITE: the 8 bytes at atomic_wr, copied now, are its value
 * (an SGE set after it changes nothing but the length make_wqe checks). */
static void
wr_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, const void *atomic_wr)
{
	struct mwp_wr_batch *b = to_mqp_ex(x)->wrb;
	struct ibv_send_wr *wr = open_wr(x, IBV_WR_ATOMIC_WRITE);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	if (atomic_wr == NULL) {
		fail(b, EINVAL);
		return;
	}
	memcpy(b->inl, atomic_wr, ROCE_ATOMIC_WRITE_BYTES);
	/* what make_wqe checks: 8 bytes named (the lkey is never used) */
	wr->sg_list[0] = (struct ibv_sge){ .addr = (uintptr_t)b->inl,
					   .length = ROCE_ATOMIC_WRITE_BYTES };
	wr->num_sge = 1;
}

static void
wr_local_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	open_wr(x, IBV_WR_LOCAL_INV)->invalidate_rkey = rkey;
}

/* ---- setters ---- */

static void
wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_send_wr *wr = cur_wr(x);

	if (wr == NULL)
		return;
	wr->sg_list[0] = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
	wr->num_sge = 1;
	wr->send_flags &= ~(unsigned int)IBV_SEND_INLINE;
}

static void
wr_set_sge_list(struct ibv_qp_ex *x, size_t num_sge, const struct ibv_sge *sg)
{
	struct ibv_send_wr *wr = cur_wr(x);

	if (wr == NULL)
		return;
	if (num_sge > MWP_MAX_SGE || (num_sge != 0 && sg == NULL)) {
		fail(to_mqp_ex(x)->wrb, EINVAL);
		return;
	}
	if (num_sge != 0)
		memcpy(wr->sg_list, sg, sizeof(*sg) * num_sge);
	wr->num_sge = (int)num_sge;
	wr->send_flags &= ~(unsigned int)IBV_SEND_INLINE;
}

/* Inline data: copied now, into the batch; make_wqe copies it into the
 * WQE, checking it against the QP's max_inline_data. */
static void
wr_set_inline_data_list(struct ibv_qp_ex *x, size_t num_buf, const struct ibv_data_buf *bufs)
{
	struct mwp_wr_batch *b = to_mqp_ex(x)->wrb;
	struct ibv_send_wr *wr = cur_wr(x);
	size_t total = 0;

	if (wr == NULL)
		return;
	for (size_t i = 0; i < num_buf; i++) {
		if (bufs[i].length > sizeof(b->inl) - total) {
			fail(b, EINVAL);
			return;
		}
		if (bufs[i].length != 0)
			memcpy(b->inl + total, bufs[i].addr, bufs[i].length);
		total += bufs[i].length;
	}
	wr->sg_list[0] = (struct ibv_sge){ .addr = (uintptr_t)b->inl, .length = (uint32_t)total };
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void
wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(x, 1, &buf);
}

static void
wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t remote_qpn,
	       uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = cur_wr(x);

	if (wr == NULL)
		return;
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

static void
wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t srqn)
{
	RTE_SET_USED(srqn);
	fail(to_mqp_ex(x)->wrb, EOPNOTSUPP);	/* no XRC QPs */
}

/* ---- the batch ---- */

static void
wr_start(struct ibv_qp_ex *x)
{
	struct mwp_wr_batch *b = to_mqp_ex(x)->wrb;

	rte_spinlock_lock(&b->lock);
	b->err = 0;
	b->n = 0;
	b->open = false;
}

static int
wr_complete(struct ibv_qp_ex *x)
{
	struct mwp_qp *qp = to_mqp_ex(x);
	struct mwp_wr_batch *b = qp->wrb;
	int ret;

	close_wr(qp);
	ret = b->err != 0 ? b->err : mwp_sq_post_n(qp, b->w, b->n);
	/* no room for the batch: ENOSPC, as rxe's wr_complete says it
	 * (ibv_post_send's word, like rxe's, is ENOMEM) */
	if (ret == ENOMEM)
		ret = ENOSPC;
	if (ret == 0)
		__atomic_fetch_add(&qp->dev->wr_api_posted, b->n, __ATOMIC_RELAXED);
	b->n = 0;
	rte_spinlock_unlock(&b->lock);
	return ret;
}

static void
wr_abort(struct ibv_qp_ex *x)
{
	struct mwp_wr_batch *b = to_mqp_ex(x)->wrb;

	b->n = 0;
	b->open = false;
	rte_spinlock_unlock(&b->lock);
}

int
mwp_wr_init(struct mwp_qp *qp)
{
	struct ibv_qp_ex *x = &qp->ibqp_ex;
	struct mwp_wr_batch *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return ENOMEM;
	rte_spinlock_init(&b->lock);
	qp->wrb = b;
	x->comp_mask = 0;
	x->wr_id = 0;
	x->wr_flags = 0;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_atomic_write = wr_atomic_write;
	return 0;
}

void
mwp_wr_free(struct mwp_qp *qp)
{
	if (qp->wrb == NULL)
		return;
	free(qp->wrb->w);
	free(qp->wrb);
	qp->wrb = NULL;
}
