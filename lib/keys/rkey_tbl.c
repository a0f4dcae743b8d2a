/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "mwp_tsan.h"
#include "rkey_tbl.h"

/* Publication is ordered by rte_hash itself (LF mode: the key index is
 * stored with release and loaded with acquire), inside a library that
 * ThreadSanitizer does not see: mwp_tsan.h tells it. */

struct mwp_key_table {
	struct rte_hash *h;
	int socket;
	/* Live keys.  rte_hash_count() also counts deleted slots still
	 * waiting in the RCU defer queue. */
	uint32_t live;
	/* Odd while a descriptor leaves the table (replace, revoke), even
	 * otherwise: mwp_keys_gen. */
	uint64_t gen;
};

/* Around every change that takes a descriptor out of the table, as a
 * seqlock's writer: a reader that read an even generation, looked a key
 * up, and later -- online -- reads the same generation knows no
 * descriptor has left since, so the one it found is still alive.  The
 * full fence orders the first increment before the hash's store and
 * before the RCU check that may free the old descriptor at once (every
 * reader offline): a reader coming online after that check sees it. */
static void
gen_begin(struct mwp_key_table *t)
{
	__atomic_fetch_add(&t->gen, 1, __ATOMIC_SEQ_CST);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void
gen_end(struct mwp_key_table *t)
{
	__atomic_fetch_add(&t->gen, 1, __ATOMIC_RELEASE);
}

uint64_t
mwp_keys_gen(const struct mwp_key_table *t)
{
	return __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE);
}

/* rte_hash compares keys of other than 16..128 bytes with memcmp through
 * a function pointer; an R_Key is one 32-bit word. */
static int
rkey_cmp(const void *a, const void *b, size_t len)
{
	uint32_t x, y;

	RTE_SET_USED(len);
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x != y;
}

static uint32_t
rkey_hash(const void *key, uint32_t len, uint32_t init)
{
	uint32_t k;

	RTE_SET_USED(len);
	RTE_SET_USED(init);
	memcpy(&k, key, sizeof(k));
	return mwp_keys_sig(k);
}

/* Called by the hash's RCU defer queue once no reader can hold b. */
static void
free_binding(void *p, void *key_data)
{
	RTE_SET_USED(p);
	rte_free(key_data);
}

struct mwp_key_table *
mwp_keys_create(const char *name, uint32_t max_keys, struct rte_rcu_qsbr *rcu,
		int socket)
{
	struct rte_hash_parameters hp = {
		.name = name,
		/* 4-byte keys: rte_hash's compare falls back to memcmp for
		 * them, but the CRC32 hash is a single instruction. */
		.entries = RTE_MAX(max_keys, 16u),
		.key_len = sizeof(uint32_t),
		.hash_func = rkey_hash,
		.socket_id = socket,
		/* Lock-free readers; the extendable table keeps inserts from
		 * failing below `entries` however the keys hash. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			      RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	struct rte_hash_rcu_config rc = {
		.v = rcu,
		.mode = RTE_HASH_QSBR_MODE_DQ,
		.free_key_data_func = free_binding,
	};
	struct mwp_key_table *t;

	t = rte_zmalloc_socket("mwp_keys", sizeof(*t), 0, socket);
	if (t == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	t->socket = socket;
	t->h = rte_hash_create(&hp);
	if (t->h == NULL) {
		rte_free(t);
		return NULL;
	}
	rte_hash_set_cmp_func(t->h, rkey_cmp);
	rc.key_data_ptr = t;
	if (rte_hash_rcu_qsbr_add(t->h, &rc) != 0) {
		rte_hash_free(t->h);
		rte_free(t);
		return NULL;
	}
	return t;
}

void
mwp_keys_free(struct mwp_key_table *t)
{
	const void *key;
	void *data;
	uint32_t it = 0;

	if (t == NULL)
		return;
	/* Live keys still own their descriptors; the defer queue frees the
	 * revoked ones when the hash goes. */
	while (rte_hash_iterate(t->h, &key, &data, &it) >= 0)
		rte_free(data);
	rte_hash_free(t->h);
	rte_free(t);
}

struct mwp_binding *
mwp_binding_alloc(struct mwp_key_table *t)
{
	return rte_zmalloc_socket("mwp_binding", sizeof(struct mwp_binding),
				  RTE_CACHE_LINE_SIZE, t->socket);
}

void
mwp_binding_free(struct mwp_binding *b)
{
	rte_free(b);
}

void
mwp_binding_seal(struct mwp_binding *b)
{
	uint64_t len = 0;

	/* the part of [va, va + length) that is also inside the region */
	if (b->host >= b->mr_host && (uint64_t)(b->host - b->mr_host) <= b->mr_length)
		len = RTE_MIN(b->length, b->mr_length - (uint64_t)(b->host - b->mr_host));
	/* and that does not wrap past 2^64: the one-pass check takes the
	 * offset va - b->va, which would wrap there */
	if (b->va != 0 && len > -b->va)
		len = -b->va;
	/* it also takes va itself as the offset of a zero-based binding */
	if (b->zero_based && b->va != 0)
		len = 0;
	b->fast_len = len;
	b->qpn_mask = b->kind == MWP_KEY_MW2 ? UINT32_MAX : 0;
}

int
mwp_keys_publish(struct mwp_key_table *t, struct mwp_binding *b)
{
	int ret;

	mwp_binding_seal(b);

	if (rte_hash_lookup(t->h, &b->rkey) >= 0)
		return -EEXIST;
	/* The descriptor's stores are made visible by the hash's release
	 * store of the key slot (LF mode). */
	MWP_TSAN_RELEASE(b);
	ret = rte_hash_add_key_data(t->h, &b->rkey, b);
	if (ret != 0)
		return -ENOSPC;
	__atomic_fetch_add(&t->live, 1, __ATOMIC_RELAXED);
	return 0;
}

struct mwp_binding *
mwp_keys_replace(struct mwp_key_table *t, struct mwp_binding *b)
{
	void *old;

	if (rte_hash_lookup_data(t->h, &b->rkey, &old) < 0)
		return NULL;
	mwp_binding_seal(b);
	MWP_TSAN_RELEASE(b);
	gen_begin(t);
	/* a live key: the hash stores the new data pointer with release
	 * order (LF mode), in place */
	if (rte_hash_add_key_data(t->h, &b->rkey, b) != 0)
		old = NULL;
	gen_end(t);
	return old;
}

int
mwp_keys_revoke(struct mwp_key_table *t, uint32_t rkey)
{
	int ret;

	gen_begin(t);
	ret = rte_hash_del_key(t->h, &rkey);
	gen_end(t);
	if (ret < 0)
		return -ENOENT;
	__atomic_fetch_sub(&t->live, 1, __ATOMIC_RELAXED);
	return 0;
}

const struct mwp_binding *
mwp_keys_lookup(const struct mwp_key_table *t, uint32_t rkey)
{
	void *data;

	if (rte_hash_lookup_with_hash_data(t->h, &rkey, mwp_keys_sig(rkey), &data) < 0)
		return NULL;
	MWP_TSAN_ACQUIRE(data);
	return data;
}

/* The lookups compute the hash (mwp_keys_sig) inline and hand it to
 * rte_hash, which saves an indirect call to rkey_hash per key. */
uint64_t
mwp_keys_lookup_bulk(const struct mwp_key_table *t, const void **keys,
		     const uint32_t *sig, unsigned int n, const struct mwp_binding **out)
{
	uint64_t hits = 0;

	RTE_ASSERT(n <= RTE_HASH_LOOKUP_BULK_MAX);
	rte_hash_lookup_with_hash_bulk_data(t->h, keys, (hash_sig_t *)(uintptr_t)sig, n,
					    &hits, (void **)(uintptr_t)out);
#if defined(__SANITIZE_THREAD__)
	for (unsigned int i = 0; i < n; i++)
		if ((hits >> i) & 1)
			MWP_TSAN_ACQUIRE((void *)(uintptr_t)out[i]);
#endif
	return hits;
}

unsigned int
mwp_keys_lookup_burst(const struct mwp_key_table *t, const uint32_t *rkeys,
		      unsigned int n, const struct mwp_binding **out)
{
	unsigned int found = 0;

	for (unsigned int base = 0; base < n; base += RTE_HASH_LOOKUP_BULK_MAX) {
		unsigned int k = RTE_MIN(n - base, (unsigned int)RTE_HASH_LOOKUP_BULK_MAX);
		const void *keys[RTE_HASH_LOOKUP_BULK_MAX];
		uint32_t sig[RTE_HASH_LOOKUP_BULK_MAX];
		uint64_t hits;

		for (unsigned int i = 0; i < k; i++) {
			keys[i] = &rkeys[base + i];
			sig[i] = mwp_keys_sig(rkeys[base + i]);
		}
		hits = mwp_keys_lookup_bulk(t, keys, sig, k, &out[base]);
		for (unsigned int i = 0; i < k; i++)
			if (!((hits >> i) & 1))
				out[base + i] = NULL;
		found += (unsigned int)__builtin_popcountll(hits);
	}
	return found;
}

uint32_t
mwp_keys_count(const struct mwp_key_table *t)
{
	return __atomic_load_n(&t->live, __ATOMIC_RELAXED);
}

unsigned int
mwp_keys_walk(const struct mwp_key_table *t, mwp_keys_walk_fn fn, void *arg)
{
	const void *key;
	void *data;
	uint32_t it = 0;
	unsigned int n = 0;

	while (rte_hash_iterate(t->h, &key, &data, &it) >= 0) {
		fn(data, arg);
		n++;
	}
	return n;
}
