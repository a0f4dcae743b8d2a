/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RKEY_TBL_H
#define RKEY_TBL_H

/*
 * The R_Key table (private; its readers' face is mwp_keys.h): rte_hash keyed by the full 32-bit R_Key with lock-free
 * readers (RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF); each value points to an
 * immutable descriptor of one binding.  A rebind publishes a new descriptor
 * under the new key and deletes the old key; descriptors and hash slots
 * are reclaimed only after an RCU (QSBR) grace period.
 *
 * Writers (publish, revoke) must be serialised by the caller (the device
 * lock); readers take no lock but must be registered, online QSBR readers
 * of the table's RCU variable and must not keep a descriptor across a
 * quiescent report.
 */

#include <stdint.h>

#include <rte_hash_crc.h>
#if defined(RTE_ARCH_ARM64) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif
#include <rte_rcu_qsbr.h>

#include "mwp_keys.h"

/**
 * Create a table.
 *
 * @param name
 *   Unique name (rte_hash names are global).
 * @param max_keys
 *   Live keys it must hold.
 * @param rcu
 *   The QSBR variable readers report to.
 * @param socket
 *   NUMA socket or SOCKET_ID_ANY.
 * @return
 *   The table, or NULL with rte_errno set.
 */
struct mwp_key_table *mwp_keys_create(const char *name, uint32_t max_keys,
				      struct rte_rcu_qsbr *rcu, int socket);

/** Free a table and every descriptor in it.  No reader may be active. */
void mwp_keys_free(struct mwp_key_table *t);

/**
 * Allocate a descriptor to fill and publish.
 *
 * @return
 *   A zeroed descriptor, or NULL.
 */
struct mwp_binding *mwp_binding_alloc(struct mwp_key_table *t);

/**
 * Derive a descriptor's qpn_mask and fast_len from its other fields, as
 * mwp_keys_publish does before publishing it.  A descriptor never sealed
 * (fast_len 0) is still decided correctly, by the ordered checks alone.
 */
void mwp_binding_seal(struct mwp_binding *b);

/** Free a descriptor that was never published. */
void mwp_binding_free(struct mwp_binding *b);

/**
 * Publish a descriptor under b->rkey.  Writers only.
 *
 * @return
 *   0; -EEXIST if the key is live; -ENOSPC if the table is full.
 */
int mwp_keys_publish(struct mwp_key_table *t, struct mwp_binding *b);

/**
 * Put b in the place of the live descriptor of b->rkey (sealed first), in
 * one store: a reader finds the old descriptor or b, never neither.  The
 * old one stays readable until every reader has reported a quiescent
 * state; then it is the caller's to free (mwp_binding_free).  Writers
 * only.
 *
 * @return
 *   The descriptor b replaced, or NULL if the key is not live (nothing
 *   changed).
 */
struct mwp_binding *mwp_keys_replace(struct mwp_key_table *t, struct mwp_binding *b);

/**
 * Delete a key.  Readers may still hold its descriptor until they report
 * a quiescent state; the descriptor is freed after that.  Writers only.
 *
 * @return
 *   0, or -ENOENT.
 */
int mwp_keys_revoke(struct mwp_key_table *t, uint32_t rkey);

/**
 * The table's generation, as a seqlock's: odd while a descriptor is being
 * replaced or revoked, even otherwise, and never the same again after.  A
 * reader that read an even value, then looked a key up, and later --
 * online, after coming online again if it went offline -- reads the same
 * value, may use the descriptor it found without looking again: none has
 * left the table since (the send queue's WQEs keep their first buffer's
 * so).
 */
uint64_t mwp_keys_gen(const struct mwp_key_table *t);

/**
 * The last key one thread looked up and its descriptor, kept while the
 * table's generation stays the one read before that lookup
 * (mwp_keys_gen): programs post from one buffer or a few, so their local
 * keys repeat.
 */
struct mwp_key_memo {
	uint32_t key;
	const struct mwp_binding *b;	/**< NULL: nothing kept */
	uint64_t gen;
};

/**
 * key's descriptor: the memo's, if it is for key and gen is its
 * generation, else looked up (and kept, gen even).
 *
 * @param gen
 *   mwp_keys_gen(t), read by the caller (online) before this.
 */
static inline const struct mwp_binding *
mwp_keys_lookup_memo(const struct mwp_key_table *t, struct mwp_key_memo *m, uint32_t key,
		     uint64_t gen)
{
	const struct mwp_binding *b;

	if (key == m->key && gen == m->gen && m->b != NULL)
		return m->b;
	b = mwp_keys_lookup(t, key);
	if (b != NULL && !(gen & 1)) {
		m->key = key;
		m->b = b;
		m->gen = gen;
	}
	return b;
}

/**
 * Look up a burst of keys at once (the datapath's way): one bulk hash
 * lookup per 64 keys.
 *
 * @param rkeys
 *   The keys.
 * @param n
 *   How many.
 * @param out
 *   Per key: its descriptor, or NULL (unknown key, or a stale key byte:
 *   both answered with NAK 0x62).
 * @return
 *   The number of keys found.
 */
unsigned int mwp_keys_lookup_burst(const struct mwp_key_table *t,
				   const uint32_t *rkeys, unsigned int n,
				   const struct mwp_binding **out);

/** The table's hash of an R_Key (CRC32-C of the word), for
 * mwp_keys_lookup_bulk.  With the CRC32-C instruction known at build time
 * (x86 SSE4.2; arm64 __ARM_FEATURE_CRC32, which Debian's arm64 libdpdk.pc
 * sets with -march=armv8-a+crc), the instruction itself:
 * rte_hash_crc_4byte tests at run time which one to use, on every call
 * (the same value either way). */
static inline uint32_t
mwp_keys_sig(uint32_t rkey)
{
#if defined(__SSE4_2__)
	return __builtin_ia32_crc32si(0, rkey);
#elif defined(RTE_ARCH_ARM64) && defined(__ARM_FEATURE_CRC32)
	return __crc32cw(0, rkey);
#else
	return rte_hash_crc_4byte(rkey, 0);
#endif
}

/**
 * The datapath's bulk lookup: one rte_hash bulk lookup for up to 64 keys
 * (RTE_HASH_LOOKUP_BULK_MAX) that the caller collected, with their hashes,
 * in a pass it makes anyway.
 *
 * @param keys
 *   keys[i] points at an R_Key.
 * @param sig
 *   sig[i] = mwp_keys_sig(*keys[i]).
 * @param n
 *   How many; at most 64.
 * @param out
 *   out[i]: key i's descriptor, written only where bit i of the result is
 *   set (elsewhere: an unknown key or a stale key byte).
 * @return
 *   The hit mask.
 */
uint64_t mwp_keys_lookup_bulk(const struct mwp_key_table *t, const void **keys,
			      const uint32_t *sig, unsigned int n,
			      const struct mwp_binding **out);

/**
 * Call fn for every live key, in table order.  Not against writers: the
 * caller excludes binds, invalidations and registrations meanwhile (the
 * device lock does; see mwp_device_keys_walk, mwp_verbs.h).
 *
 * @return
 *   Keys visited.
 */
unsigned int mwp_keys_walk(const struct mwp_key_table *t, mwp_keys_walk_fn fn,
			   void *arg);

#endif /* RKEY_TBL_H */
