/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The guessing defence of one queue (docs/security.md): per source IP
 * address, the requests refused for key, bounds or access reasons (RC
 * NAKs and UC silent drops alike) and the frames sent to QPs that do not
 * exist; with a threshold, a source that reaches it is blocked -- its
 * RoCE frames dropped as MWP_DROP_GUESSING -- for a configured time.
 *
 * A queue's engine alone writes its guard (refusals happen on the queue
 * that owns the QP; a frame for no QP counts on the queue that received
 * it), so there is no lock; readers (telemetry) see
 * counters that may be a moment old.  A guard has MWP_GUARD_SOURCES
 * entries: a new source takes the least suspect unblocked entry of its
 * probe run when the run is full (counted as evicted).
 */
#ifndef MWP_GUARD_H
#define MWP_GUARD_H

#include <stdbool.h>
#include <stdint.h>

/** Sources a queue's guard tracks at once. */
#define MWP_GUARD_SOURCES	256

/** What a guard knows of one source. */
struct mwp_guard_source {
	uint8_t ip[16];		/**< IPv4-mapped or IPv6 */
	uint64_t refused;	/**< requests refused, all told */
	uint64_t dropped;	/**< frames dropped while it was blocked */
	uint64_t blocked_until;	/**< TSC; 0: not blocked */
	uint32_t strikes;	/**< refusals since it was last blocked */
	uint32_t blocks;	/**< times it was blocked */
	bool used;
};

/** One queue's guard. */
struct mwp_guard {
	uint32_t threshold;	/**< refusals that block; 0: never block */
	uint64_t block_tsc;	/**< how long a block lasts */
	uint16_t nb_blocked;	/**< sources blocked now (or until looked at) */
	uint64_t evicted;	/**< sources forgotten for room */
	struct mwp_guard_source src[MWP_GUARD_SOURCES];
};

#endif /* MWP_GUARD_H */
