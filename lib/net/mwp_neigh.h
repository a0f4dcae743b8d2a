/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_NEIGH_H
#define MWP_NEIGH_H

/**
 * @file
 * A port's neighbour table: the MACs of the IP addresses (GIDs) its QPs
 * send to, learned from ARP (IPv4) and neighbour discovery (IPv6), with
 * ageing -- Linux's neighbour state machine, simplified.
 *
 * Keys are 16-byte addresses; IPv4 is kept IPv4-mapped (::ffff:a.b.c.d),
 * as RoCE GIDs are.  The table is the slow path: every call takes its
 * spinlock; a requester caches what it found.  Times are TSC values the
 * caller passes in (the table never reads the clock).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_spinlock.h>

/** Tunables; 0 in a field means its default. */
struct mwp_neigh_params {
	uint32_t reachable_ms;	/**< REACHABLE -> STALE this long after the
				 *   last confirmation (default 30000) */
	uint32_t probe_ms;	/**< between two probes of one entry (200) */
	uint32_t max_probes;	/**< unanswered probes before it FAILS (15; at most 255) */
	uint32_t failed_ms;	/**< FAILED answers "unreachable" this long
				 *   before resolution starts again (1000) */
	uint32_t gc_ms;		/**< a STALE or FAILED entry unused this long
				 *   may make room for a new one (60000) */
};

/** An entry's state. */
enum mwp_neigh_state {
	MWP_NEIGH_FREE = 0,	/**< unused slot */
	MWP_NEIGH_INCOMPLETE,	/**< asked (broadcast), no answer yet */
	MWP_NEIGH_REACHABLE,	/**< confirmed recently */
	MWP_NEIGH_STALE,	/**< usable; being confirmed (unicast probes) */
	MWP_NEIGH_FAILED,	/**< no answer: unreachable for a while */
};

/** What resolving an address gave. */
enum mwp_neigh_res {
	MWP_NEIGH_OK,		/**< the MAC is known */
	MWP_NEIGH_WAIT,		/**< being resolved */
	MWP_NEIGH_UNREACH,	/**< not resolvable (failed, or no room) */
};

/** One entry. */
struct mwp_neigh_entry {
	uint8_t ip[16];			/**< IPv6, or IPv4-mapped */
	struct rte_ether_addr mac;	/**< when REACHABLE or STALE */
	uint8_t state;			/**< enum mwp_neigh_state */
	uint8_t probes;			/**< unanswered probes sent */
	uint64_t confirmed;		/**< TSC of the last confirmation */
	uint64_t probed;		/**< TSC of the last probe */
	uint64_t used;			/**< TSC of the last resolve */
	uint64_t failed;		/**< TSC it failed */
};

/** Counters (written under the lock, read without it). */
struct mwp_neigh_stats {
	uint64_t lookups;	/**< mwp_neigh_resolve calls */
	uint64_t misses;	/**< ... that found no entry */
	uint64_t probes;	/**< probes asked for */
	uint64_t learned;	/**< entries made by learning */
	uint64_t updated;	/**< entries confirmed or changed */
	uint64_t evicted;	/**< entries dropped to make room */
	uint64_t failed;	/**< entries that failed */
	uint64_t full;		/**< no room for an address */
	uint64_t ignored;	/**< unsolicited news of unknown addresses
				 *   with no free slot (never evicts) */
};

/** A table. */
struct mwp_neigh_table {
	rte_spinlock_t lock;
	uint64_t reachable, probe, failed_for, gc;	/**< in TSC cycles */
	uint64_t per_ms;			/**< TSC cycles a millisecond */
	uint32_t max_probes;
	uint32_t size;				/**< entries */
	struct mwp_neigh_stats st;
	struct mwp_neigh_entry e[];		/**< [size] */
};

/** Called for each used entry, under the table's lock. */
typedef void (*mwp_neigh_walk_fn)(const struct mwp_neigh_entry *e, uint64_t age_ms,
				  void *arg);

/**
 * Visit every used entry (telemetry); age_ms: since its last
 * confirmation.
 *
 * @return
 *   Entries visited.
 */
unsigned int mwp_neigh_walk(struct mwp_neigh_table *t, uint64_t now, mwp_neigh_walk_fn fn,
			    void *arg);

/** "incomplete", "reachable", "stale", "failed" ("free"). */
const char *mwp_neigh_state_name(enum mwp_neigh_state s);

#endif /* MWP_NEIGH_H */
