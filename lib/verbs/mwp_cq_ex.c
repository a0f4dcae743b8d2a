/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Extended CQs (ibv_create_cq_ex): the same ring of completions as an
 * ordinary CQ, read one at a time through start_poll / next_poll /
 * end_poll and the ibv_wc_read_* accessors.  The completion taken is
 * copied out of the ring (the ring is the producers' again at once); the
 * accessors read the copy.  start_poll to end_poll is one consumer's: a
 * spinlock keeps two threads apart unless the CQ was made single-threaded.
 */
#include <errno.h>

#include <rte_ring_elem.h>

#include "mwp_cq.h"
#include "mwp_errno.h"
#include "mwp_tsan.h"
#include "mwp_verbs.h"

/* What mwpath fills in every completion (rxe's set): no timestamps, no
 * VLAN, no flow tag, no tag matching. */
#define CQ_EX_WC_FLAGS	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |		\
			 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |	\
			 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |		\
			 IBV_WC_EX_WITH_DLID_PATH_BITS)

static inline struct mwp_cq *
to_mcq_ex(struct ibv_cq_ex *c)
{
	return container_of(c, struct mwp_cq, ibcq_ex);
}

/* Take the next completion into cur: 0, or ENOENT when there is none. */
static int
take(struct mwp_cq *cq)
{
	do {
		if (rte_ring_dequeue_elem(cq->ring, &cq->cur, sizeof(cq->cur)) != 0)
			return ENOENT;
	} while (cq->cur.qp_num == MWP_WC_PURGED);	/* of a QP reset since */
	MWP_TSAN_ACQUIRE(cq->ring);
	cq->ibcq_ex.status = cq->cur.status;
	cq->ibcq_ex.wr_id = cq->cur.wr_id;
	return 0;
}

static int
cq_start_poll(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr)
{
	struct mwp_cq *cq = to_mcq_ex(c);

	RTE_SET_USED(attr);	/* comp_mask: nothing defined */
	if (!cq->single_threaded)
		rte_spinlock_lock(&cq->poll_lock);
	if (take(cq) != 0) {
		/* nothing: the poll has ended (end_poll is not called) */
		if (!cq->single_threaded)
			rte_spinlock_unlock(&cq->poll_lock);
		return ENOENT;
	}
	return 0;
}

static int
cq_next_poll(struct ibv_cq_ex *c)
{
	return take(to_mcq_ex(c));
}

static void
cq_end_poll(struct ibv_cq_ex *c)
{
	struct mwp_cq *cq = to_mcq_ex(c);

	if (!cq->single_threaded)
		rte_spinlock_unlock(&cq->poll_lock);
}

static enum ibv_wc_opcode
cq_read_opcode(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.opcode;
}

static uint32_t
cq_read_vendor_err(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.vendor_err;
}

static uint32_t
cq_read_byte_len(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.byte_len;
}

/* the immediate (network order), or the invalidated R_Key */
static __be32
cq_read_imm_data(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.imm_data;
}

static uint32_t
cq_read_qp_num(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.qp_num;
}

static uint32_t
cq_read_src_qp(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.src_qp;
}

static unsigned int
cq_read_wc_flags(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.wc_flags;
}

static uint32_t
cq_read_slid(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.slid;
}

static uint8_t
cq_read_sl(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.sl;
}

static uint8_t
cq_read_dlid_path_bits(struct ibv_cq_ex *c)
{
	return to_mcq_ex(c)->cur.dlid_path_bits;
}

struct ibv_cq_ex *
mwp_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *x;
	struct mwp_cq *cq;
	struct ibv_cq *c;

	if (ctx == NULL || attr == NULL)
		return mwp_null_errno(EINVAL);
	/* what the device cannot do: not supported (a parent domain, a
	 * timestamp, a VLAN...), as rxe answers */
	if ((attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    (attr->wc_flags & ~(uint64_t)CQ_EX_WC_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)))
		return mwp_null_errno(EOPNOTSUPP);
	if (attr->cqe < 1 || attr->cqe > MWP_MAX_CQE)
		return mwp_null_errno(EINVAL);
	c = mwp_create_cq(ctx, (int)attr->cqe);
	if (c == NULL)
		return NULL;
	cq = to_mcq(c);
	rte_spinlock_init(&cq->poll_lock);
	cq->single_threaded = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			      (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	x = &cq->ibcq_ex;
	x->comp_mask = 0;
	x->start_poll = cq_start_poll;
	x->next_poll = cq_next_poll;
	x->end_poll = cq_end_poll;
	x->read_opcode = cq_read_opcode;
	x->read_vendor_err = cq_read_vendor_err;
	x->read_wc_flags = cq_read_wc_flags;
	/* every accessor of what a completion holds, asked for or not */
	x->read_byte_len = cq_read_byte_len;
	x->read_imm_data = cq_read_imm_data;
	x->read_qp_num = cq_read_qp_num;
	x->read_src_qp = cq_read_src_qp;
	x->read_slid = cq_read_slid;
	x->read_sl = cq_read_sl;
	x->read_dlid_path_bits = cq_read_dlid_path_bits;
	return x;
}
