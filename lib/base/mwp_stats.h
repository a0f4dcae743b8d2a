/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_STATS_H
#define MWP_STATS_H

/**
 * @file
 * Packet counters.  Each lcore owns one struct per port it polls and is its
 * only writer; readers sum them (mwp_stats_add) and may see a count a burst
 * old, never a torn one on 64-bit targets.
 */

#include <stdint.h>

#include <rte_common.h>

#include "mwp_deny.h"
#include "mwp_drop.h"

/** Counters of one port as seen by one lcore. */
struct mwp_stats {
	uint64_t rx_pkts;		/**< frames received */
	uint64_t rx_bytes;		/**< bytes received */
	uint64_t accepted;		/**< frames handed to a QP */
	uint64_t ctrl;			/**< frames the control path took (ARP,
					 *   ND, ICMP echo: mwp_ctrl.h) */
	uint64_t host;			/**< frames that are not RoCE, passed
					 *   to the host's kernel (the exception
					 *   path: mwp_queue_host_take) */
	uint64_t host_out;		/**< frames the host's kernel sent to
					 *   the wire (also in tx_pkts) */
	uint64_t host_lost;		/**< of host, frames its tap did not
					 *   take (full, or gone) */
	uint64_t tx_pkts;		/**< frames sent */
	uint64_t tx_bytes;		/**< bytes sent */
	uint64_t drop[MWP_DROP__MAX];	/**< frames dropped, by reason */
	uint64_t acks;			/**< ACKs sent */
	uint64_t naks[4];		/**< NAKs sent, syndromes 0x60..0x63 */
	uint64_t rnr_naks;		/**< RNR NAKs sent */
	uint64_t duplicates;		/**< duplicate requests */
	uint64_t ce;			/**< RoCE frames for a QP marked CE */
	uint64_t cnp_tx;		/**< CNPs sent for them */
	uint64_t cnp_rx;		/**< CNPs taken by a QP */
	uint64_t retrans;		/**< request packets sent again */
	uint64_t denied[MWP_DENY__MAX];	/**< accesses denied, by reason */
} __rte_cache_aligned;

/**
 * Add one set of counters to another.
 *
 * @param sum
 *   The total.
 * @param s
 *   The counters to add.
 */
void mwp_stats_add(struct mwp_stats *sum, const struct mwp_stats *s);

/** Total frames dropped, all reasons. */
uint64_t mwp_stats_dropped(const struct mwp_stats *s);

#endif /* MWP_STATS_H */
