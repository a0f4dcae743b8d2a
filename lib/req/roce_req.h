/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_REQ_H
#define ROCE_REQ_H

/*
 * The requester (private): a QP's data WQEs leave as packets (roce_req.c),
 * are acknowledged or answered by the peer, and are sent again when the
 * peer says so or stays silent (roce_comp.c, the completer; IBA
 * 9.7.4-9.7.6).  Everything here runs on the thread of the QP's engine.
 */

#include <stdint.h>

#include "mwp_ctrl_priv.h"
#include "mwp_drop.h"
#include "mwp_priv.h"
#include "roce_tx.h"

/** Unacknowledged PSNs an RC requester may have out at once. */
#define MWP_REQ_WINDOW 512

/**
 * Send what the QPs on the owner's list of senders have to send (new
 * requests, retransmissions; address probes through ctrl, the queue's
 * control path) while tx has room.
 */
void mwp_req_send_all(struct mwp_owner *o, struct mwp_tx *tx, struct mwp_ctrl_ctx *ctrl);

/**
 * A response to this QP's requests arrived (ACKNOWLEDGE, ATOMIC
 * ACKNOWLEDGE, RDMA READ response): acknowledge, complete, place READ
 * data and ATOMIC results, retransmit on NAKs and implicit NAKs.
 *
 * @return
 *   MWP_DROP_NONE if the response was acted on, else why it was not.
 */
enum mwp_drop mwp_comp_rx(struct mwp_qp *qp, const struct rte_mbuf *m,
			  const struct mwp_pkt *p);

/** The QP has an owner now (mwp_sched.h), whose engine runs its
 * requester: its timer's callback is the requester's. */
void mwp_req_attach(struct mwp_qp *qp);

/**
 * The RNR NAK timer of an AETH timer code (IBA table 45), in
 * microseconds.
 */
uint32_t mwp_rnr_timer_us(uint8_t code);

/** The local ACK timeout of a QP's timeout attribute, in nanoseconds
 * (4.096 us << timeout); 0 for 0: no timeout. */
uint64_t mwp_ack_timeout_ns(uint8_t timeout);

#endif
