/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device's base (mwp_device.h): what every verbs object of a device
 * uses -- its tables and key table, its RCU readers, the lists its PDs
 * and CQs are kept in, the slots and keys of regions and windows, its
 * asynchronous events.  The device as programs open it, with the ops its
 * inline verbs call, is mwp_context.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "mwp_device.h"
#include "roce_hdr.h"
#include "mwp_errno.h"
#include "mwp_log.h"

#define DEFAULT_MAX_KEYS 65536

static unsigned int next_dev_id;

/* The device's own tables (not the objects). */
static void
free_tables(struct mwp_dev *d)
{
	free(d->reader_on);
	mwp_keygen_fini(&d->mr_keys);
	mwp_keygen_fini(&d->mw_keys);
	free(d->mw_by_idx);
	free(d->mr_by_idx);
	rte_free(d->rcu);
	free(d);
}

struct mwp_dev *
mwp_dev_create(const struct mwp_device_attr *attr)
{
	struct mwp_device_attr a = { 0 };
	struct mwp_dev *d;
	char name[RTE_HASH_NAMESIZE];
	size_t rcu_sz;

	if (attr != NULL)
		a = *attr;
	if (a.max_keys == 0)
		a.max_keys = DEFAULT_MAX_KEYS;
	if (a.max_readers == 0)
		a.max_readers = RTE_MAX_LCORE;
	if (attr == NULL)
		a.socket = SOCKET_ID_ANY;
	if (a.max_keys > MWP_INDEX_SPAN)
		return mwp_null_errno(EINVAL);
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return mwp_null_errno(ENOMEM);
	d->id = __atomic_fetch_add(&next_dev_id, 1, __ATOMIC_RELAXED);
	d->max_keys = a.max_keys;
	d->max_readers = a.max_readers;
	d->socket = a.socket;
	d->next_pd = 1;
	d->next_qpn = MWP_FIRST_QPN;
	d->qpn_lo = MWP_FIRST_QPN;
	d->qpn_hi = ROCE_PSN_MASK;
	d->sequential = (a.flags & MWP_DEVICE_F_SEQUENTIAL) != 0;
	TAILQ_INIT(&d->qps);
	TAILQ_INIT(&d->pds);
	TAILQ_INIT(&d->cqs);
	TAILQ_INIT(&d->ahs);
	TAILQ_INIT(&d->srqs);
	pthread_mutex_init(&d->lock, NULL);

	rcu_sz = rte_rcu_qsbr_get_memsize(a.max_readers);
	d->rcu = rte_zmalloc_socket("mwp_rcu", rcu_sz, RTE_CACHE_LINE_SIZE, a.socket);
	d->mr_by_idx = calloc(a.max_keys, sizeof(*d->mr_by_idx));
	d->mw_by_idx = calloc(a.max_keys, sizeof(*d->mw_by_idx));
	d->reader_on = calloc(a.max_readers, 1);
	if (d->rcu == NULL || d->mr_by_idx == NULL || d->mw_by_idx == NULL ||
	    d->reader_on == NULL ||
	    mwp_keygen_init(&d->mr_keys, a.max_keys, MWP_INDEX_SPAN, d->sequential) != 0 ||
	    mwp_keygen_init(&d->mw_keys, a.max_keys, MWP_INDEX_SPAN, d->sequential) != 0 ||
	    rte_rcu_qsbr_init(d->rcu, a.max_readers) != 0)
		goto fail;
	snprintf(name, sizeof(name), "mwp%u_keys", d->id);
	d->keys = mwp_keys_create(name, a.max_keys, d->rcu, a.socket);
	if (d->keys == NULL) {
		MWP_LOG(ERR, "device %u: key table: %s", d->id, rte_strerror(rte_errno));
		goto fail;
	}
	return d;
fail:
	free_tables(d);
	return mwp_null_errno(ENOMEM);
}

void
mwp_dev_free(struct mwp_dev *d)
{
	mwp_keys_free(d->keys);
	pthread_mutex_destroy(&d->lock);
	free_tables(d);
}

int
mwp_reader_register(struct ibv_context *ctx, unsigned int thread_id)
{
	struct mwp_dev *d = to_mdev(ctx);
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	if (thread_id >= d->max_readers || d->reader_on[thread_id] ||
	    rte_rcu_qsbr_thread_register(d->rcu, thread_id) != 0) {
		ret = EINVAL;
	} else {
		rte_rcu_qsbr_thread_online(d->rcu, thread_id);
		d->reader_on[thread_id] = 1;
		d->nb_readers++;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

void
mwp_reader_quiescent(struct ibv_context *ctx, unsigned int thread_id)
{
	rte_rcu_qsbr_quiescent(to_mdev(ctx)->rcu, thread_id);
}

void
mwp_reader_offline(struct ibv_context *ctx, unsigned int thread_id)
{
	rte_rcu_qsbr_thread_offline(to_mdev(ctx)->rcu, thread_id);
}

void
mwp_reader_online(struct ibv_context *ctx, unsigned int thread_id)
{
	rte_rcu_qsbr_thread_online(to_mdev(ctx)->rcu, thread_id);
}

int
mwp_reader_unregister(struct ibv_context *ctx, unsigned int thread_id)
{
	struct mwp_dev *d = to_mdev(ctx);
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	if (thread_id >= d->max_readers || !d->reader_on[thread_id]) {
		ret = EINVAL;
	} else {
		rte_rcu_qsbr_thread_offline(d->rcu, thread_id);
		rte_rcu_qsbr_thread_unregister(d->rcu, thread_id);
		d->reader_on[thread_id] = 0;
		d->nb_readers--;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

struct mwp_key_table *
mwp_device_keys(struct ibv_context *ctx)
{
	return to_mdev(ctx)->keys;
}

unsigned int
mwp_device_keys_walk(struct ibv_context *ctx, mwp_keys_walk_fn fn, void *arg)
{
	struct mwp_dev *d = to_mdev(ctx);
	unsigned int n;

	/* every change to the table, and the reclamation it triggers, is
	 * made under this lock */
	pthread_mutex_lock(&d->lock);
	n = mwp_keys_walk(d->keys, fn, arg);
	pthread_mutex_unlock(&d->lock);
	return n;
}

void
mwp_dev_obj_add(struct mwp_dev *d, struct mwp_dev_objs *l, struct mwp_dev_obj *o,
		void (*release)(struct mwp_dev_obj *o))
{
	o->dev = d;
	o->list = l;
	o->release = release;
	pthread_mutex_lock(&d->lock);
	TAILQ_INSERT_TAIL(l, o, next);
	pthread_mutex_unlock(&d->lock);
}

int
mwp_dev_obj_del(struct mwp_dev_obj *o)
{
	struct mwp_dev *d = o->dev;
	int ret = EBUSY;

	pthread_mutex_lock(&d->lock);
	if (o->users == 0) {
		TAILQ_REMOVE(o->list, o, next);
		ret = 0;
	}
	pthread_mutex_unlock(&d->lock);
	if (ret == 0)
		o->release(o);
	return ret;
}

void
mwp_device_set_async(struct ibv_context *ctx, mwp_async_event_fn fn, void *arg)
{
	struct mwp_dev *d = to_mdev(ctx);

	d->async_arg = arg;
	__atomic_store_n(&d->async, fn, __ATOMIC_RELEASE);
}

int
mwp_device_set_qpn_range(struct ibv_context *ctx, uint32_t lo, uint32_t hi)
{
	struct mwp_dev *d = to_mdev(ctx);

	if (lo < MWP_FIRST_QPN || hi > ROCE_PSN_MASK || lo > hi)
		return EINVAL;
	pthread_mutex_lock(&d->lock);
	d->qpn_lo = lo;
	d->qpn_hi = hi;
	d->next_qpn = lo;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

void
mwp_dev_async(struct mwp_dev *d, struct ibv_async_event ev)
{
	mwp_async_event_fn fn = __atomic_load_n(&d->async, __ATOMIC_ACQUIRE);

	if (fn != NULL)
		fn(&d->vctx.context, &ev, d->async_arg);
}

void *
mwp_dev_keyed_new(struct mwp_dev *d, struct mwp_dev_keyed *k, struct mwp_keygen *gen,
		  void *const *tbl, uint32_t base, size_t size)
{
	void *obj = calloc(1, size);
	int slot;

	if (obj == NULL)
		return mwp_null_errno(ENOMEM);
	pthread_mutex_lock(&d->lock);
	slot = mwp_keygen_take(gen, tbl);
	if (slot < 0) {
		pthread_mutex_unlock(&d->lock);
		free(obj);
		return mwp_null_errno(ENOMEM);
	}
	k->gen = gen;
	k->slot = (uint32_t)slot;
	k->key = ((base + mwp_keygen_index(gen, k->slot)) << 8) |
		 mwp_keygen_key_byte(gen, k->slot);
	return obj;
}

void
mwp_dev_keyed_publish(struct mwp_dev *d, const struct mwp_dev_keyed *k, struct ibv_pd *pd)
{
	mwp_keygen_commit(k->gen, k->slot, (uint8_t)k->key);
	to_mpd(pd)->obj.users++;
	pthread_mutex_unlock(&d->lock);
}

void
mwp_dev_keyed_drop(struct mwp_dev *d, const struct mwp_dev_keyed *k, void *obj)
{
	/* the slot stays free, its key byte unused */
	mwp_keygen_untake(k->gen, k->slot);
	pthread_mutex_unlock(&d->lock);
	free(obj);
}
