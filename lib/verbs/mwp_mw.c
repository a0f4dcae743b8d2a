/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows: allocation, deallocation, and the rules every bind and
 * LOCAL_INV executes by (memory-windows.md sections 2 and 4) when its
 * send queue reaches it (mwp_sq.c); remote invalidation (the
 * responder's).  Binds and LOCAL_INV are posted in mwp_post.c: Type 1
 * binds by ibv_bind_mw and the DET-style bind, the rest with
 * ibv_post_send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mwp_errno.h"
#include "mwp_mw.h"
#include "mwp_qp.h"
#include "mwp_verbs.h"

struct mwp_mw *
mwp_mw_by_key(struct mwp_dev *d, uint32_t key)
{
	uint32_t idx = key >> 8;
	int64_t slot;

	if (idx < MWP_MW_INDEX_BASE)
		return NULL;
	slot = mwp_keygen_slot(&d->mw_keys, idx - MWP_MW_INDEX_BASE);
	return slot < 0 ? NULL : d->mw_by_idx[slot];
}

struct ibv_mw *
mwp_op_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct mwp_dev *d = to_mdev(ibpd->context);
	struct mwp_dev_keyed k;
	struct mwp_mw *mw;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return mwp_null_errno(EINVAL);
	mw = mwp_dev_keyed_new(d, &k, &d->mw_keys, (void *const *)d->mw_by_idx,
			       MWP_MW_INDEX_BASE, sizeof(*mw));
	if (mw == NULL)
		return NULL;
	mw->index = k.key >> 8;
	mw->cur_rkey = k.key;
	mw->state = MWP_MW_FREE;	/* Type 1: unbound, usable by nobody */
	mw->ibmw.context = ibpd->context;
	mw->ibmw.pd = ibpd;
	mw->ibmw.rkey = mw->cur_rkey;
	/* the first key byte is history: no Type 1 rebind gives it soon */
	mwp_key_hist_init(&mw->key_hist, (uint8_t)k.key);
	mw->ibmw.handle = k.slot;
	mw->ibmw.type = type;
	d->mw_by_idx[k.slot] = mw;
	mwp_dev_keyed_publish(d, &k, ibpd);
	return &mw->ibmw;
}

/* Take a window's key out of the table, if it has one.  Returns the number
 * of keys revoked (0 or 1); the caller waits for a grace period. */
uint32_t
mwp_mw_unbind_locked(struct mwp_dev *d, struct mwp_mw *mw)
{
	if (mw->state != MWP_MW_VALID)
		return 0;
	mwp_keys_revoke(d->keys, mw->cur_rkey);
	mw->mr->bound_mws--;
	mw->mr = NULL;
	mw->state = MWP_MW_FREE;
	return 1;
}

int
mwp_op_dealloc_mw(struct ibv_mw *ibmw)
{
	struct mwp_mw *mw = to_mmw(ibmw);
	struct mwp_dev *d = to_mdev(ibmw->context);
	uint32_t revoked;

	pthread_mutex_lock(&d->lock);
	revoked = mwp_mw_unbind_locked(d, mw);
	d->mw_by_idx[ibmw->handle] = NULL;
	/* the slot's next window avoids the key byte this one held last
	 * (its binds'), not only the one alloc gave; sequential devices
	 * keep counting from alloc's */
	if (!d->sequential)
		mwp_keygen_commit(&d->mw_keys, ibmw->handle, (uint8_t)mw->cur_rkey);
	mwp_keygen_give(&d->mw_keys, ibmw->handle);
	to_mpd(ibmw->pd)->obj.users--;
	pthread_mutex_unlock(&d->lock);
	/* The old key must be dead for every reader when we return (C10-68). */
	if (revoked)
		rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	free(mw);
	return 0;
}

int
mwp_mw_remote_invalidate_locked(struct mwp_qp *qp, uint32_t rkey)
{
	struct mwp_dev *d = qp->dev;
	struct mwp_mw *mw = mwp_mw_by_key(d, rkey);

	if (mw != NULL && mw->ibmw.type == IBV_MW_TYPE_2 && mw->cur_rkey == rkey &&
	    mw->state == MWP_MW_VALID && mw->qpn == qp->ibqp.qp_num) {
		mwp_mw_unbind_locked(d, mw);
		return 0;
	}
	return -EINVAL;
}

/* ---- BIND_MW (memory-windows.md section 2) ---- */

enum ibv_wc_status
mwp_mw_bind_exec(struct mwp_qp *qp, const struct mwp_wqe *w, uint32_t *revoked)
{
	struct mwp_dev *d = qp->dev;
	struct mwp_mw *mw = mwp_mw_by_key(d, w->bind.mw_index << 8);
	struct mwp_mr *mr = NULL;
	const uint64_t addr = w->bind.addr, len = w->bind.length;
	const uint32_t qp_pd = qp->ibqp.pd->handle;
	const bool zb = w->bind.access & IBV_ACCESS_ZERO_BASED;
	struct mwp_binding *b;
	bool type2;

	*revoked = 0;
	if (mw == NULL)
		return IBV_WC_MW_BIND_ERR;
	type2 = mw->ibmw.type == IBV_MW_TYPE_2;
	/* Type 1: the window's current key must be the one the consumer
	 * held (ibv_bind_mw advanced mw->rkey from it).  Type 2: the key is
	 * the consumer's to keep (mw->rkey is left alone, as rdma-core's
	 * providers do), and the window must be FREE below. */
	if (!type2 && mw->cur_rkey != w->bind.mw_rkey)
		return IBV_WC_MW_BIND_ERR;
	/* The region's lkey must be current. */
	if (w->bind.mr_lkey != 0) {
		mr = mwp_mr_by_key(d, w->bind.mr_lkey);
		if (mr == NULL)
			return IBV_WC_MW_BIND_ERR;
	}
	if (type2) {
		if (mw->state == MWP_MW_VALID)		/* o10-37.2.30 */
			return IBV_WC_MW_BIND_ERR;
		if (len == 0 || mr == NULL)		/* o10-37.2.40 */
			return IBV_WC_MW_BIND_ERR;
	}
	/* C10-72: the window's, the region's and the QP's PD are one. */
	if (mw->ibmw.pd->handle != qp_pd ||
	    (mr != NULL && mr->ibmr.pd->handle != qp_pd))
		return IBV_WC_MW_BIND_ERR;
	if (len != 0) {
		uint64_t off;

		if (!(mr->access & IBV_ACCESS_MW_BIND))	/* C10-73 */
			return IBV_WC_MW_BIND_ERR;
		if ((w->bind.access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & IBV_ACCESS_LOCAL_WRITE))	/* C10-74 */
			return IBV_WC_MW_BIND_ERR;
		/* [addr, addr + len) inside the region; for a zero-based
		 * window its start address too */
		if (!mwp_mr_range(mr, addr, len, &off))
			return IBV_WC_MW_BIND_ERR;

		b = mwp_binding_alloc(d->keys);
		if (b == NULL)
			return IBV_WC_MW_BIND_ERR;
		b->rkey = w->bind.new_rkey;
		b->kind = type2 ? MWP_KEY_MW2 : MWP_KEY_MW1;
		b->zero_based = zb;
		b->access = w->bind.access & (IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
		b->pd = qp_pd;
		b->qpn = type2 ? qp->ibqp.qp_num : 0;
		b->va = zb ? 0 : addr;
		b->length = len;
		b->host = (uint8_t *)mr->ibmr.addr + off;
		b->mr_host = mr->ibmr.addr;
		b->mr_length = mr->ibmr.length;
		/* A rebind: the old key dies, then the new one is born. */
		*revoked = mwp_mw_unbind_locked(d, mw);
		if (mwp_keys_publish(d->keys, b) != 0) {
			mwp_binding_free(b);
			mw->cur_rkey = w->bind.new_rkey;
			return IBV_WC_MW_BIND_ERR;
		}
		mr->bound_mws++;
		mw->mr = mr;
		mw->state = MWP_MW_VALID;
		mw->qpn = b->qpn;
	} else {
		/* Type 1, length 0: unbind; the old key stops working. */
		*revoked = mwp_mw_unbind_locked(d, mw);
	}
	mw->cur_rkey = w->bind.new_rkey;
	return IBV_WC_SUCCESS;
}

/* ---- LOCAL_INV (section 4) ---- */

enum ibv_wc_status
mwp_mw_local_inv_exec(struct mwp_qp *qp, const struct mwp_wqe *w, uint32_t *revoked)
{
	const uint32_t rkey = w->imm_or_inv;
	struct mwp_mw *mw = mwp_mw_by_key(qp->dev, rkey);

	*revoked = 0;
	/* Unknown key, a region's key (regions are not invalidated), a
	 * Type 1 window (o10-37.2.26), a stale key byte, a FREE window. */
	if (mw == NULL || mw->ibmw.type != IBV_MW_TYPE_2 || mw->cur_rkey != rkey ||
	    mw->state != MWP_MW_VALID)
		return IBV_WC_LOC_QP_OP_ERR;
	/* Bound to another QP: refused, nothing invalidated. */
	if (mw->qpn != qp->ibqp.qp_num)
		return IBV_WC_MW_BIND_ERR;
	*revoked = mwp_mw_unbind_locked(qp->dev, mw);
	return IBV_WC_SUCCESS;
}
