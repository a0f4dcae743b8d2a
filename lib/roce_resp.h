/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_RESP_H
#define ROCE_RESP_H

/**
 * @file
 * The responder: what an lcore hands every received burst to.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "mwp_port.h"
#include "mwp_stats.h"

/** Largest burst mwp_resp_burst takes. */
#define MWP_BURST_MAX 64

/**
 * Process a received burst: classify, verify ICRCs, check the destination,
 * find the QP, and produce the frames to send back.
 *
 * Every input mbuf is consumed: freed, or reused as a response.  Dropped
 * frames are counted in st->drop by reason.  No allocation except response
 * mbufs, no locks, no logging.
 *
 * @param port
 *   The port the burst arrived on.
 * @param pkts
 *   The frames, at most MWP_BURST_MAX.
 * @param n
 *   How many.
 * @param tx
 *   Where to put the frames to send.
 * @param tx_room
 *   Room in tx (up to 64 is used).  READ responses that do not fit wait
 *   for mwp_resp_poll.
 * @param st
 *   The calling lcore's counters for this port.
 * @return
 *   The number of frames placed in tx.
 */
uint16_t mwp_resp_burst(struct mwp_port *port, struct rte_mbuf **pkts,
			uint16_t n, struct rte_mbuf **tx, uint16_t tx_room,
			struct mwp_stats *st);

/**
 * Send what the responder still owes without new input: READ responses
 * that did not fit earlier bursts.  Call once per poll-loop iteration.
 *
 * @return
 *   The number of frames placed in tx.
 */
uint16_t mwp_resp_poll(struct mwp_port *port, struct rte_mbuf **tx,
		       uint16_t tx_room, struct mwp_stats *st);

#endif /* ROCE_RESP_H */
