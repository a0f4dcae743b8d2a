/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_REQ_H
#define ROCE_REQ_H

/*
 * The requester (private): a QP's data WQEs leave as packets, are
 * acknowledged or answered by the peer, and are sent again when the peer
 * says so or stays silent (IBA 9.7.4-9.7.6).  Everything here runs on the
 * thread of the QP's engine; mwp_req_prepare also under mwp_poll.
 */

#include <stdint.h>

#include "mwp_drop.h"
#include "mwp_priv.h"
#include "roce_resp_ctx.h"

/** Unacknowledged PSNs an RC requester may have out at once. */
#define MWP_REQ_WINDOW 512

/**
 * A data WQE is about to join the send queue's window: check its local
 * buffers (each SGE a region of the QP's PD, inside it, with local write
 * for READ and ATOMIC results) and length, and count its PSNs.
 *
 * @return
 *   IBV_WC_SUCCESS, IBV_WC_LOC_PROT_ERR or IBV_WC_LOC_LEN_ERR.
 */
enum ibv_wc_status mwp_req_prepare(struct mwp_qp *qp, struct mwp_swqe *e);

/**
 * Send what the QPs on the queue's list have to send (new requests,
 * retransmissions, address probes) while c has room.
 */
void mwp_req_send_all(struct mwp_resp_ctx *c);

/**
 * A response to this QP's requests arrived (ACKNOWLEDGE, ATOMIC
 * ACKNOWLEDGE, RDMA READ response): acknowledge, complete, place READ
 * data and ATOMIC results, retransmit on NAKs and implicit NAKs.
 *
 * @return
 *   MWP_DROP_NONE if the response was acted on, else why it was not.
 */
enum mwp_drop mwp_req_rx(struct mwp_resp_ctx *c, struct mwp_qp *qp,
			 const struct rte_mbuf *m, const struct mwp_pkt *p);

/** RTR -> RTS: the first PSN, the retry counts (control thread, before
 * anything is posted). */
void mwp_req_start(struct mwp_qp *qp);

/** The QP is in ERR: its timer stops, it leaves its queue's list. */
void mwp_req_stop(struct mwp_qp *qp);

/** RESET: forget everything (its timer is cancelled already). */
void mwp_req_reset(struct mwp_qp *qp);

/** Set up a new QP's requester (its timer). */
void mwp_req_init(struct mwp_qp *qp);

/**
 * The RNR NAK timer of an AETH timer code (IBA table 45), in
 * microseconds.
 */
uint32_t mwp_rnr_timer_us(uint8_t code);

/** The local ACK timeout of a QP's timeout attribute, in nanoseconds
 * (4.096 us << timeout); 0 for 0: no timeout. */
uint64_t mwp_ack_timeout_ns(uint8_t timeout);

#endif
