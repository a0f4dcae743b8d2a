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

/** Largest burst mwp_resp_burst takes. */
#define MWP_BURST_MAX 64

struct mwp_queue;

/**
 * Process a burst received on a queue: classify, verify ICRCs, check the
 * destination, find each frame's QP, and run it -- requests through the
 * responder, responses to the QP's own requests through the requester --
 * producing the frames to send back.  A frame whose QP another queue's
 * engine owns is handed to that queue (mwp_queue_tx processes it there).
 *
 * Every input mbuf is consumed: freed, or handed over.  Dropped frames
 * are counted in the queue's counters by reason.  No allocation except
 * response mbufs, no locks, no logging.  From the queue's engine's
 * thread only.
 *
 * @param q
 *   The queue the burst arrived on (mwp_queue_create).
 * @param pkts
 *   The frames, at most MWP_BURST_MAX.
 * @param n
 *   How many.
 * @param tx
 *   Where to put the frames to send.
 * @param tx_room
 *   Room in tx (up to 64 is used).  READ responses that do not fit wait
 *   for mwp_queue_tx.
 * @return
 *   The number of frames placed in tx.
 */
uint16_t mwp_resp_burst(struct mwp_queue *q, struct rte_mbuf **pkts,
			uint16_t n, struct rte_mbuf **tx, uint16_t tx_room);

#endif /* ROCE_RESP_H */
