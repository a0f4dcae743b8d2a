/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_DEVICE_H
#define MWP_DEVICE_H

/*
 * The device (the software ibv_context) and its protection domains: the
 * objects every other verbs object belongs to (the device's base:
 * mwp_device.c; PDs: mwp_pd.c; the context a program opens:
 * mwp_context.c).
 * Each object embeds its public libibverbs struct first; to_mxxx()
 * converts back (container_of).  Private: not installed.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rte_common.h>
#include <rte_rcu_qsbr.h>

#include "mwp_keygen.h"
#include "mwp_verbs.h"
#include "rkey_tbl.h"

/* R_Key = index << 8 | key byte.  MR and MW indices come from disjoint
 * ranges by construction. */
#define MWP_MR_INDEX_BASE	0x000001u
#define MWP_MW_INDEX_BASE	0x800000u
#define MWP_INDEX_SPAN		0x7fffffu
#define MWP_FIRST_QPN		0x11u

#define MWP_MAX_INLINE		256

struct mwp_qp;
struct mwp_pd;
struct mwp_cq;
struct mwp_mr;
struct mwp_mw;
struct mwp_dev;
struct mwp_dev_objs;

/* What the device keeps of a PD or a CQ: its place in the device's list
 * (to free what the program leaves at close), how many objects use it
 * (destroying it before them is EBUSY), and how to free it. */
struct mwp_dev_obj {
	TAILQ_ENTRY(mwp_dev_obj) next;
	uint32_t users;
	struct mwp_dev *dev;
	struct mwp_dev_objs *list;	/* the one it is in */
	/* frees the object once it is out of its list */
	void (*release)(struct mwp_dev_obj *o);
};

TAILQ_HEAD(mwp_dev_objs, mwp_dev_obj);

/** A device: the software ibv_context. */
struct mwp_dev {
	/* the context, as libibverbs' extended one: verbs_get_ctx() finds
	 * its extended ops (none here; a host of the device may set some),
	 * and NULL ops answer EOPNOTSUPP from the inline verbs */
	struct verbs_context vctx;
	struct ibv_device ibdev;
	pthread_mutex_t lock;		/* control path only */
	struct rte_rcu_qsbr *rcu;
	uint32_t max_readers;
	uint32_t nb_readers;
	uint8_t *reader_on;		/* [max_readers]: registered */
	struct mwp_key_table *keys;
	uint32_t max_keys;
	int socket;
	/* objects by index, for execution-time lookups by key */
	struct mwp_mr **mr_by_idx;	/* [index - MWP_MR_INDEX_BASE] */
	struct mwp_mw **mw_by_idx;	/* [index - MWP_MW_INDEX_BASE] */
	/* the slots, indices and key bytes of each kind: a reused slot
	 * gets a new key, so a stale one is never mistaken for it;
	 * random unless the device was opened MWP_DEVICE_F_SEQUENTIAL */
	struct mwp_keygen mr_keys, mw_keys;
	bool sequential;
	uint32_t next_pd;
	uint32_t next_qpn;		/* sequential QPNs: the next to try */
	uint32_t qpn_lo, qpn_hi;	/* the numbers QPs take (mwp_device_set_qpn_range) */
	TAILQ_HEAD(, mwp_qp) qps;
	/* of qps, those mwp_poll runs (no owner, or a stopped engine's):
	 * with none, it need not take the lock the datapath tries */
	uint32_t nb_polled;
	struct mwp_dev_objs pds, cqs, ahs, srqs;
	/* asynchronous events (mwp_device_set_async), NULL: none */
	mwp_async_event_fn async;
	void *async_arg;
	unsigned int id;
	/* work requests posted through the ibv_wr_* API (mwp_wr.c) */
	uint64_t wr_api_posted;
};

struct mwp_pd {
	struct ibv_pd ibpd;
	struct mwp_dev_obj obj;		/* users: MRs, MWs and QPs in it */
};

#define to_mdev(c)	container_of(c, struct mwp_dev, vctx.context)
#define to_mpd(p)	container_of(p, struct mwp_pd, ibpd)

/* A device's base: its tables, key table and RCU, no objects (NULL with
 * errno EINVAL or ENOMEM); mwp_context.c makes it the ibv_context. */
struct mwp_dev *mwp_dev_create(const struct mwp_device_attr *attr);

/* Free a device's base, its objects gone. */
void mwp_dev_free(struct mwp_dev *d);

/* Raise an asynchronous event (ev.element: a QP or a CQ of the device). */
void mwp_dev_async(struct mwp_dev *d, struct ibv_async_event ev);
/* The QPs of d (its lock held). */
unsigned int mwp_dev_qp_count(const struct mwp_dev *d);

/* Puts o in list l, under the device's lock; release frees it once it
 * is taken out. */
void mwp_dev_obj_add(struct mwp_dev *d, struct mwp_dev_objs *l, struct mwp_dev_obj *o,
		     void (*release)(struct mwp_dev_obj *o));

/* Takes o out of its list and releases it, unless something uses it
 * (EBUSY); 0 when released. */
int mwp_dev_obj_del(struct mwp_dev_obj *o);

/*
 * The slot and key of a new region or window.  mwp_dev_keyed_new() gives
 * a zeroed object of size bytes, a free slot of gen (a NULL entry of tbl)
 * and the key it will carry, (base + the slot's index) << 8 | a fresh key
 * byte, and returns holding the device's lock: the slot stays free until
 * the object is in tbl, so the lock is held until the caller has put it
 * there and calls mwp_dev_keyed_publish(), or calls mwp_dev_keyed_drop().
 */
struct mwp_dev_keyed {
	struct mwp_keygen *gen;
	uint32_t slot;
	uint32_t key;
};

/* NULL, errno ENOMEM and the lock not held when memory or slots run out. */
void *mwp_dev_keyed_new(struct mwp_dev *d, struct mwp_dev_keyed *k, struct mwp_keygen *gen,
			void *const *tbl, uint32_t base, size_t size);

/* tbl[k->slot] is the object, in pd: its key byte is taken; unlocks. */
void mwp_dev_keyed_publish(struct mwp_dev *d, const struct mwp_dev_keyed *k, struct ibv_pd *pd);

/* The object was not made after all: its slot free again, the object
 * freed; unlocks. */
void mwp_dev_keyed_drop(struct mwp_dev *d, const struct mwp_dev_keyed *k, void *obj);

#endif /* MWP_DEVICE_H */
