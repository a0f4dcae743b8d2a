/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CTRL_PRIV_H
#define MWP_CTRL_PRIV_H

/*
 * A port's control path (private; its counters are mwp_ctrl.h): ARP,
 * neighbour discovery and ICMP echo answered, probes for address
 * resolution built.  Never on the RoCE fast path: a queue's sorter hands
 * it only frames the parser rejected (not IP, or IP but not UDP).
 * Replies are new mbufs (the caller frees what it was given),
 * rate-limited by a token bucket; what the frames say about their
 * senders goes to the port's neighbour table.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "mwp_ctrl.h"
#include "mwp_neigh.h"
#include "mwp_port.h"

/** One polling thread's control path for one port: no sharing. */
struct mwp_ctrl_ctx {
	struct rte_ether_addr mac;	/**< ours; zero: no control path */
	bool has_ipv4;			/**< ipv4 is ours */
	bool has_ipv6;			/**< ipv6 is ours */
	rte_be32_t ipv4;		/**< our IPv4 address */
	uint8_t ipv6[16];		/**< our IPv6 address */
	struct mwp_neigh_table *neigh;	/**< what we learn goes here; may be NULL */
	struct rte_mempool *mp;		/**< replies and probes come from here */
	uint64_t tsc_hz;		/**< TSC cycles a second */
	uint64_t rate;			/**< replies a second; 0: unlimited */
	uint64_t burst;			/**< the bucket's depth, in replies */
	uint64_t tokens;		/**< the bucket, in replies x tsc_hz */
	uint64_t last;			/**< TSC of the bucket's last refill */
	bool learn_only;		/**< the host answers (an exception
					 *   path): learn, reply to nothing */
	struct mwp_ctrl_stats st;	/**< counters */
};

/**
 * Set up a context.
 *
 * @param conf
 *   The port's addresses.
 * @param neigh
 *   The port's neighbour table, or NULL.
 * @param mp
 *   Where replies and probes come from (may be set later, in cx->mp).
 * @param rate
 *   Replies a second (token bucket); 0: unlimited.
 * @param burst
 *   The bucket's depth; 0: rate / 100, at least 16.
 * @param tsc_hz
 *   TSC cycles a second.
 */
void mwp_ctrl_ctx_init(struct mwp_ctrl_ctx *cx, const struct mwp_port_conf *conf,
		       struct mwp_neigh_table *neigh, struct rte_mempool *mp,
		       uint32_t rate, uint32_t burst, uint64_t tsc_hz);

/**
 * A frame the RoCE parser rejected.  ARP, ICMP and ICMPv6 addressed to
 * the port are answered and learned from; other ARP, ND and ICMP for the
 * link are counted.
 *
 * @param m
 *   The frame (first segment); not freed, not kept.
 * @param now
 *   The current TSC.
 * @param reply
 *   Receives a reply to send (a new mbuf), or NULL.
 * @return
 *   true if the frame was the control path's (counted in cx->st), false
 *   if it was not, or malformed (counted MALFORMED), or ICMP for another
 *   host: the caller counts its own drop reason.
 */
bool mwp_ctrl_input(struct mwp_ctrl_ctx *cx, const struct rte_mbuf *m, uint64_t now,
		    struct rte_mbuf **reply);

/**
 * A probe for ip: an ARP request (IPv4-mapped) or a neighbour
 * solicitation (IPv6), broadcast / to the solicited-node multicast
 * address, or unicast to *dmac.  Not rate-limited.
 *
 * @return
 *   The frame (a new mbuf), or NULL: no mbuf (counted), or the port has no
 *   address of that family.
 */
struct rte_mbuf *mwp_ctrl_probe(struct mwp_ctrl_ctx *cx, const uint8_t ip[16],
				const struct rte_ether_addr *dmac);

#endif /* MWP_CTRL_PRIV_H */
