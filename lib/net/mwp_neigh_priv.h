/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_NEIGH_PRIV_H
#define MWP_NEIGH_PRIV_H

/*
 * A port's neighbour table as the library uses it (private; what a
 * program reads of it is mwp_neigh.h): made with the port, learned into
 * by the control path, asked by the requesters.
 */

#include "mwp_neigh.h"

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

struct mwp_port;

/**
 * Queue a probe of ip on the port's asks for mwp_port_neigh_asked's
 * caller (broadcast, or to unicast); a full queue drops it, and the table
 * asks again.  Any thread.
 */
void mwp_port_neigh_queue(struct mwp_port *port, const uint8_t ip[16],
			  const struct rte_ether_addr *unicast);

#endif /* MWP_NEIGH_PRIV_H */
