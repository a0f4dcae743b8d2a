/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "mwp_errno.h"
#include "mwp_mr.h"
#include "mwp_verbs.h"

#define MR_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			 IBV_ACCESS_MW_BIND)

struct mwp_mr *
mwp_mr_by_key(struct mwp_dev *d, uint32_t key)
{
	uint32_t idx = key >> 8;
	struct mwp_mr *mr;
	int64_t slot;

	if (idx < MWP_MR_INDEX_BASE)
		return NULL;
	slot = mwp_keygen_slot(&d->mr_keys, idx - MWP_MR_INDEX_BASE);
	if (slot < 0)
		return NULL;
	mr = d->mr_by_idx[slot];
	return mr != NULL && mr->ibmr.lkey == key ? mr : NULL;
}

/* rkey 0 with !pinned: the R_Key is the L_Key (slot and generation). */
static struct ibv_mr *
reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
       int access, uint32_t rkey, bool pinned)
{
	struct mwp_dev *d = to_mdev(ibpd->context);
	struct mwp_dev_keyed k;
	struct mwp_mr *mr;
	struct mwp_binding *b, *lb;
	int ret;

	/* C10-?: remote write or atomic access needs local write (verbs). */
	if (length == 0 || addr == NULL || (access & ~MR_ACCESS_KNOWN) ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)) ||
	    iova + length - 1 < iova ||
	    (uintptr_t)addr + length - 1 < (uintptr_t)addr)
		return mwp_null_errno(EINVAL);
	mr = mwp_dev_keyed_new(d, &k, &d->mr_keys, (void *const *)d->mr_by_idx,
			       MWP_MR_INDEX_BASE, sizeof(*mr));
	if (mr == NULL)
		return NULL;
	b = mwp_binding_alloc(d->keys);
	if (b == NULL) {
		mwp_dev_keyed_drop(d, &k, mr);
		return mwp_null_errno(ENOMEM);
	}
	mr->ibmr.context = ibpd->context;
	mr->ibmr.pd = ibpd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.handle = k.slot;
	mr->ibmr.lkey = k.key;
	mr->ibmr.rkey = pinned ? rkey : mr->ibmr.lkey;
	mr->iova = iova;
	mr->access = (unsigned int)access;

	/* Peers may reach the region itself only with remote rights. */
	b->rkey = mr->ibmr.rkey;
	b->kind = MWP_KEY_MR;
	b->access = access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC);
	b->local_access = (uint16_t)access;
	b->pd = ibpd->handle;
	b->va = iova;
	b->length = length;
	b->host = addr;
	b->mr_host = addr;
	b->mr_length = length;
	/*
	 * The responder finds the regions of receive SGEs by L_Key in the
	 * same table.  A pinned R_Key differs from the L_Key, so the L_Key
	 * gets its own descriptor, with no remote rights: a peer naming it
	 * is refused as for any region without them.
	 */
	lb = NULL;
	if (pinned) {
		lb = mwp_binding_alloc(d->keys);
		if (lb == NULL) {
			ret = -ENOMEM;
			goto fail;
		}
		*lb = *b;
		lb->rkey = mr->ibmr.lkey;
		lb->access = 0;
		ret = mwp_keys_publish(d->keys, lb);
		if (ret != 0)
			goto fail;
	}
	ret = mwp_keys_publish(d->keys, b);
	if (ret != 0) {
		if (lb != NULL) {
			mwp_keys_revoke(d->keys, lb->rkey);
			lb = NULL;	/* the table frees it after a grace period */
		}
		goto fail;
	}
	d->mr_by_idx[k.slot] = mr;
	mwp_dev_keyed_publish(d, &k, ibpd);
	return &mr->ibmr;
fail:
	mwp_dev_keyed_drop(d, &k, mr);
	mwp_binding_free(b);
	mwp_binding_free(lb);
	return mwp_null_errno(ret == -EEXIST ? EEXIST : ENOMEM);
}

struct ibv_mr *
mwp_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	return reg_mr(pd, addr, length, iova, access, 0, false);
}

struct ibv_mr *
mwp_reg_mr_key(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
	       int access, uint32_t rkey)
{
	return reg_mr(pd, addr, length, iova, access, rkey, true);
}

struct ibv_mr *
mwp_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return mwp_reg_mr_iova(pd, addr, length, (uintptr_t)addr, access);
}

int
mwp_dereg_mr(struct ibv_mr *ibmr)
{
	struct mwp_mr *mr = to_mmr(ibmr);
	struct mwp_dev *d = to_mdev(ibmr->context);

	pthread_mutex_lock(&d->lock);
	if (mr->bound_mws != 0) {
		pthread_mutex_unlock(&d->lock);
		return EBUSY;
	}
	mwp_keys_revoke(d->keys, ibmr->rkey);
	if (ibmr->lkey != ibmr->rkey)
		mwp_keys_revoke(d->keys, ibmr->lkey);	/* a pinned R_Key's alias */
	d->mr_by_idx[ibmr->handle] = NULL;
	mwp_keygen_give(&d->mr_keys, ibmr->handle);
	to_mpd(ibmr->pd)->obj.users--;
	pthread_mutex_unlock(&d->lock);
	/* The caller may free the memory once we return: wait until no
	 * reader can still be using the key. */
	rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	free(mr);
	return 0;
}
