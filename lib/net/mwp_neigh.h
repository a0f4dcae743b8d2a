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

/**
 * Create a table.
 *
 * @param size
 *   Entries; 0: 256.
 * @param p
 *   Tunables, or NULL for the defaults.
 * @param tsc_hz
 *   TSC cycles per second (rte_get_tsc_hz()).
 * @param socket
 *   NUMA socket, or SOCKET_ID_ANY.
 * @return
 *   The table, or NULL with rte_errno ENOMEM.
 */
struct mwp_neigh_table *mwp_neigh_create(uint32_t size, const struct mwp_neigh_params *p,
					 uint64_t tsc_hz, int socket);

/** Free a table; NULL is allowed. */
void mwp_neigh_free(struct mwp_neigh_table *t);

/**
 * Resolve ip to send to it at now.
 *
 * @param mac
 *   On MWP_NEIGH_OK: the MAC.  Also when *probe and *unicast are set: the
 *   MAC the unicast probe goes to.
 * @param probe
 *   Set when the caller must send a probe now (ARP request, neighbour
 *   solicitation): the table paces them.
 * @param unicast
 *   With *probe: to *mac (a STALE entry's refresh), else broadcast / the
 *   solicited-node multicast address.
 * @return
 *   MWP_NEIGH_OK (REACHABLE, or STALE: still used while it is confirmed),
 *   MWP_NEIGH_WAIT (INCOMPLETE) or MWP_NEIGH_UNREACH (FAILED, or the table
 *   is full of entries it may not evict).
 */
enum mwp_neigh_res mwp_neigh_resolve(struct mwp_neigh_table *t, const uint8_t ip[16],
				     uint64_t now, struct rte_ether_addr *mac,
				     bool *probe, bool *unicast);

/**
 * What the control path heard about ip.
 *
 * @param solicited
 *   An answer to our probe (an ARP reply to us, a solicited NA): the
 *   entry is REACHABLE.  Otherwise news (an ARP request, a gratuitous ARP,
 *   an NS with a source address option, an unsolicited NA): an entry we
 *   asked for becomes REACHABLE; a known one is updated (STALE if its MAC
 *   changed and override is set); an unknown address gets a STALE entry
 *   only if a slot is free -- unsolicited news never evicts anything.
 * @param override
 *   The news may replace a known MAC (NA's O flag; ARP: always).
 */
void mwp_neigh_learn(struct mwp_neigh_table *t, const uint8_t ip[16],
		     const struct rte_ether_addr *mac, bool solicited, bool override,
		     uint64_t now);

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
