/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Where keys come from (docs/security.md).
 *
 * An attacker on the L2 segment needs a QPN, a PSN and an R_Key to read
 * or write a host's memory; keys that count up from the lowest free slot
 * are guessed in a few tries (ReDMArk).  A key generator hands out the
 * slots of one kind of object (MRs, or MWs) and the key byte of each new
 * key:
 *
 * - random (the default): a free slot drawn at random, its index a keyed
 *   permutation of the slot over the whole 23-bit index range (so an
 *   index tells nothing of the next), the key byte from a CSPRNG
 *   (getrandom), and a slot just freed kept out of use (quarantined) for
 *   the next MWP_KEYGEN_QUARANTINE frees, so that an (index, key byte)
 *   pair is not live again soon after it was revoked;
 * - sequential (tests, and replays of captures whose keys are fixed): the
 *   lowest free slot, index = slot, key bytes counting up per slot.
 *
 * Every call but mwp_keygen_index()/mwp_keygen_slot() is made under the
 * device's lock; those two read only what init wrote.  A key history
 * (mwp_key_hist_*: a Type 1 window's last key bytes) is its object's,
 * used by whoever posts the window's binds, without the lock.
 */
#ifndef MWP_KEYGEN_H
#define MWP_KEYGEN_H

#include <stdbool.h>
#include <stdint.h>

/** Frees a slot waits for before it is drawn again (random mode). */
#define MWP_KEYGEN_QUARANTINE	4096u

/** The slots and key bytes of one kind of object. */
struct mwp_keygen {
	bool sequential;
	uint32_t n;		/**< slots: [0, n) */
	uint32_t domain;	/**< indices: [0, domain), domain >= n */
	uint64_t round_key[4];	/**< the permutation's secret */
	uint32_t hint;		/**< sequential: no free slot below it */
	uint8_t *last;		/**< [n]: the key byte last given in the slot
				 *   (0xff before the first: sequential
				 *   slots start at 0) */
	uint8_t *held;		/**< [n]: in quarantine */
	uint32_t *fifo;		/**< quarantined slots, oldest first */
	uint32_t qsize, qhead, qcount;
};

/**
 * Set up g for n slots and indices [0, domain).
 *
 * @return 0, or ENOMEM, or EINVAL (domain < n, or over 24 bits).
 */
int mwp_keygen_init(struct mwp_keygen *g, uint32_t n, uint32_t domain, bool sequential);

/** Free what init allocated. */
void mwp_keygen_fini(struct mwp_keygen *g);

/**
 * A free slot of tbl[n] (NULL entries): the lowest, or one at random out
 * of quarantine.  The caller fills tbl[slot] or gives it back with
 * mwp_keygen_untake().
 *
 * @return The slot, or -1 when every slot is used.
 */
int mwp_keygen_take(struct mwp_keygen *g, void *const *tbl);

/** A slot taken and not used after all: free again, not quarantined. */
void mwp_keygen_untake(struct mwp_keygen *g, uint32_t slot);

/** A slot whose object is gone (its key revoked): quarantined. */
void mwp_keygen_give(struct mwp_keygen *g, uint32_t slot);

/**
 * The key byte of a new object in slot: the next after the last
 * (sequential), or a random one other than the last.
 */
uint8_t mwp_keygen_key_byte(struct mwp_keygen *g, uint32_t slot);

/** The key byte of slot is in use from now on (the last given). */
void mwp_keygen_commit(struct mwp_keygen *g, uint32_t slot, uint8_t key_byte);

/** The index (offset in the kind's range) of slot. */
uint32_t mwp_keygen_index(const struct mwp_keygen *g, uint32_t slot);

/** The slot of index, or -1 when no slot has that index. */
int64_t mwp_keygen_slot(const struct mwp_keygen *g, uint32_t index);

/**
 * The key byte after cur when a key is made anew for the same object (a
 * Type 1 bind): cur + 1 (sequential), or a random byte other than cur.
 */
uint8_t mwp_key_byte_next(uint8_t cur, bool sequential);

/** Key bytes a Type 1 window's rebind keeps away from: its last so many. */
#define MWP_KEY_HIST	64u

/**
 * The last MWP_KEY_HIST key bytes one object was given, most recent last
 * (a Type 1 window's: alloc's, then every bind's), as a ring and as a
 * set of the same bytes.  Made and read on the control path only (a
 * window's, by whoever posts its binds); nothing on the datapath reads it.
 */
struct mwp_key_hist {
	uint64_t set[4];		/**< bit b: b is in ring */
	uint8_t ring[MWP_KEY_HIST];	/**< ring[(head + i) % MWP_KEY_HIST],
					 *   i < count: oldest first */
	uint8_t head, count;
};

/** h holds first only (an object's first key byte counts as history). */
void mwp_key_hist_init(struct mwp_key_hist *h, uint8_t first);

/**
 * b is the object's key byte from now on: the most recent in h; the
 * oldest leaves h when it is full.  A b already in h moves to the end.
 */
void mwp_key_hist_add(struct mwp_key_hist *h, uint8_t b);

/** Is b one of h's bytes? */
static inline bool
mwp_key_hist_has(const struct mwp_key_hist *h, uint8_t b)
{
	return (h->set[b >> 6] >> (b & 63)) & 1;
}

/**
 * The key byte after cur when a key is made anew for the object of h (a
 * Type 1 bind): cur + 1 (sequential), or a byte drawn uniformly from
 * those not in h (256 - MWP_KEY_HIST = 192 once h is full).  cur, if not
 * in h (the consumer's own key byte), joins h first, so the result is
 * never cur.  h is not told of the result: mwp_key_hist_add() it once
 * it is given out.
 */
uint8_t mwp_key_hist_next(struct mwp_key_hist *h, uint8_t cur, bool sequential);

/** 64 random bits from a CSPRNG (getrandom, buffered per thread). */
uint64_t mwp_rand64(void);

/** A uniform random number in [0, n), n > 0. */
uint32_t mwp_rand_below(uint32_t n);

#endif /* MWP_KEYGEN_H */
