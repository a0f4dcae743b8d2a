/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_KEYS_H
#define MWP_KEYS_H

/**
 * @file
 * The R_Key table as its readers see it: each live key names an immutable
 * descriptor of one binding (a region, or a window bound to one).  A
 * reader takes no lock but must be a registered, online RCU reader of the
 * device (mwp_reader_register) and must not keep a descriptor across a
 * quiescent report.  Keys are made and revoked by the verbs objects
 * alone.
 */

#include <stdint.h>

#include <rte_common.h>

/** What a key names. */
enum mwp_key_kind {
	MWP_KEY_MR = 0,		/**< a memory region */
	MWP_KEY_MW1 = 1,	/**< a Type 1 memory window */
	MWP_KEY_MW2 = 2,	/**< a Type 2B memory window (bound to one QP) */
};

/** One binding, immutable once published.  The first cache line holds
 * what an allowed access reads (mwp_access_decide's one-pass check). */
struct mwp_binding {
	uint32_t rkey;		/**< the full R_Key */
	uint32_t pd;		/**< PD handle */
	uint32_t qpn;		/**< MWP_KEY_MW2: the QP it is bound to */
	uint32_t qpn_mask;	/**< derived (mwp_binding_seal): all ones for
				 *   MWP_KEY_MW2, else 0 */
	uint16_t access;	/**< IBV_ACCESS_* granted to remote peers */
	uint16_t local_access;	/**< MRs: the region's own IBV_ACCESS_* */
	uint8_t kind;		/**< enum mwp_key_kind */
	uint8_t zero_based;	/**< addresses are offsets from the start */
	uint64_t va;		/**< first address peers use (0 if zero_based) */
	uint64_t fast_len;	/**< derived (mwp_binding_seal): bytes from va
				 *   inside both the binding and its region,
				 *   without wrapping past 2^64; 0: none */
	uint8_t *host;		/**< host address of va */
	uint64_t length;	/**< bytes */
	uint8_t *mr_host;	/**< the region's first host byte */
	/* Counters, on their own line: the only fields written after
	 * publication (relaxed atomic adds by the lcores). */
	uint64_t allowed __rte_cache_aligned; /**< accesses allowed */
	uint64_t denied;	/**< accesses denied */
	/* Read only when an access is refused or a descriptor is not
	 * sealed (mwp_access_check): kept off the first line. */
	uint64_t mr_length;	/**< the region's length */
} __rte_cache_aligned;

struct mwp_key_table;

/** Look one key up (readers and writers); NULL if not live. */
const struct mwp_binding *mwp_keys_lookup(const struct mwp_key_table *t,
					  uint32_t rkey);

/** Number of live keys. */
uint32_t mwp_keys_count(const struct mwp_key_table *t);

/** What a walk over the keys (mwp_device_keys_walk) calls for each live
 *  key. */
typedef void (*mwp_keys_walk_fn)(const struct mwp_binding *b, void *arg);

#endif /* MWP_KEYS_H */
