/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_GUARD_PRIV_H
#define MWP_GUARD_PRIV_H

/*
 * The guessing defence as a queue runs it (private; what a program reads
 * of a guard is mwp_guard.h): its sorter and its responder count
 * refusals against sources, and drop the frames of one that is blocked.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "mwp_guard.h"
#include "roce_parse.h"

/** Set g up: threshold refusals block a source for block_ms. */
void mwp_guard_init(struct mwp_guard *g, uint32_t threshold, uint32_t block_ms,
		    uint64_t tsc_hz);

/** A request from ip was refused for key, bounds or access, or named a
 *  QP that does not exist, at now. */
void mwp_guard_refused(struct mwp_guard *g, const uint8_t ip[16], uint64_t now);

/**
 * Is ip blocked at now?  If so the frame is counted against it.  Cheap
 * when nothing is blocked: callers test g->nb_blocked first.
 */
bool mwp_guard_blocked(struct mwp_guard *g, const uint8_t ip[16], uint64_t now);

/** Is the source of a parsed RoCE frame blocked at now (counted against
 *  it if so)?  One test when nothing is blocked. */
static inline bool
mwp_guard_blocked_frame(struct mwp_guard *g, const struct rte_mbuf *m, const struct mwp_pkt *p,
			uint64_t now)
{
	uint8_t ip[16];

	return unlikely(g->nb_blocked != 0) &&
	       mwp_guard_blocked(g, mwp_pkt_src_ip(m, p, ip), now);
}

#endif /* MWP_GUARD_PRIV_H */
