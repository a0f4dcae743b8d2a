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
 * device's lock; those two read only what init wrote.
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

/** 64 random bits from a CSPRNG (getrandom, buffered per thread). */
uint64_t mwp_rand64(void);

/** A uniform random number in [0, n), n > 0. */
uint32_t mwp_rand_below(uint32_t n);

#endif /* MWP_KEYGEN_H */
