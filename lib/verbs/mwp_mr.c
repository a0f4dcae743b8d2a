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

/* A region's descriptor under its R_Key: peers may reach the region
 * itself only with remote rights. */
static void
mr_binding(struct mwp_binding *b, const struct mwp_mr *mr)
{
	b->rkey = mr->ibmr.rkey;
	b->kind = MWP_KEY_MR;
	b->access = mr->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC);
	b->local_access = (uint16_t)mr->access;
	b->pd = mr->ibmr.pd->handle;
	b->va = mr->iova;
	b->length = mr->ibmr.length;
	b->host = mr->ibmr.addr;
	b->mr_host = mr->ibmr.addr;
	b->mr_length = mr->ibmr.length;
}

/* The access flags a region may have: known ones, and remote write or
 * atomic access only with local write (verbs). */
static bool
mr_access_ok(int access)
{
	return !(access & ~MR_ACCESS_KNOWN) &&
	       (!(access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) ||
		(access & IBV_ACCESS_LOCAL_WRITE));
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

	if (length == 0 || addr == NULL || !mr_access_ok(access) ||
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

	mr_binding(b, mr);
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

/* The descriptors of a region's keys made again from what it now is, and
 * put in place of the old ones; the old ones are returned, to be freed
 * after a grace period.  0 or ENOMEM (then nothing changed). */
static int
mr_republish(struct mwp_dev *d, struct mwp_mr *mr, struct mwp_binding *old[2])
{
	struct mwp_binding *b = mwp_binding_alloc(d->keys), *lb = NULL;

	if (b == NULL)
		return ENOMEM;
	mr_binding(b, mr);
	if (mr->ibmr.lkey != mr->ibmr.rkey) {
		/* a pinned R_Key's L_Key: its own descriptor, no remote rights */
		lb = mwp_binding_alloc(d->keys);
		if (lb == NULL) {
			mwp_binding_free(b);
			return ENOMEM;
		}
		*lb = *b;
		lb->rkey = mr->ibmr.lkey;
		lb->access = 0;
	}
	old[0] = mwp_keys_replace(d->keys, b);
	old[1] = lb != NULL ? mwp_keys_replace(d->keys, lb) : NULL;
	/* the counters go on */
	if (old[0] != NULL) {
		b->allowed = old[0]->allowed;
		b->denied = old[0]->denied;
	}
	return 0;
}

int
mwp_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
	     int access)
{
	const int known = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
			  IBV_REREG_MR_CHANGE_ACCESS;
	struct mwp_mr *mr;
	struct mwp_dev *d;
	struct mwp_binding *old[2] = { NULL, NULL };
	struct mwp_mr was;
	int ret;

	if (ibmr == NULL || flags == 0 || (flags & ~known))
		return EINVAL;
	mr = to_mmr(ibmr);
	d = to_mdev(ibmr->context);
	if ((flags & IBV_REREG_MR_CHANGE_PD) && (pd == NULL || pd->context != ibmr->context))
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_ACCESS) && !mr_access_ok(access))
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	    (addr == NULL || length == 0 || (uintptr_t)addr + length - 1 < (uintptr_t)addr))
		return EINVAL;
	pthread_mutex_lock(&d->lock);
	was = *mr;
	/* windows bound to it were bound to what it is now */
	if (mr->bound_mws != 0) {
		pthread_mutex_unlock(&d->lock);
		return EBUSY;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		to_mpd(ibmr->pd)->obj.users--;
		to_mpd(pd)->obj.users++;
		ibmr->pd = pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		mr->access = (unsigned int)access;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ibmr->addr = addr;
		ibmr->length = length;
		mr->iova = (uintptr_t)addr;
	}
	/* the keys stay (a peer keeps using the R_Key it was given); what
	 * they lead to changes in one store each */
	ret = mr_republish(d, mr, old);
	if (ret != 0) {
		if (flags & IBV_REREG_MR_CHANGE_PD) {
			to_mpd(pd)->obj.users--;
			to_mpd(was.ibmr.pd)->obj.users++;
		}
		*mr = was;
	}
	pthread_mutex_unlock(&d->lock);
	if (ret != 0)
		return ret;
	/* As for a deregistration: once this returns, no reader uses what
	 * the region was (its old memory may be freed at once). */
	rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	mwp_binding_free(old[0]);
	mwp_binding_free(old[1]);
	return 0;
}
