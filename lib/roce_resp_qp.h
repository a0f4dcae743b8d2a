/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_RESP_QP_H
#define ROCE_RESP_QP_H

/* The responder's per-QP path (roce_resp_qp.c), driven by roce_resp.c.
 * Private. */

#include <stdbool.h>

#include <rte_mbuf.h>

#include "mwp_port.h"
#include "mwp_stats.h"
#include "roce_parse.h"
#include "rkey_tbl.h"

struct mwp_qp;

/* One burst's worth of context. */
/* Answers one mwp_resp_burst or mwp_resp_poll call makes at most. */
#define MWP_RESP_TX_MAX 64

struct mwp_resp_ctx {
	struct mwp_port *port;
	struct mwp_stats *st;
	struct rte_mbuf **tx;
	uint16_t nb_tx;
	uint16_t tx_room;		/* at most MWP_RESP_TX_MAX */
	/* each answer's parsed view, and whether its ICRC is still to do
	 * (mwp_resp_finish computes them together) */
	struct mwp_pkt txp[MWP_RESP_TX_MAX];
	uint8_t icrc_todo[MWP_RESP_TX_MAX];
	uint16_t nb_dirty;
	uint64_t gen;			/* this burst's number */
	uint8_t dropped;		/* the current packet was counted as a drop */
	/* keys revoked by SEND_WITH_INV during this burst: descriptors
	 * resolved for the burst before that must not be used */
	uint16_t nb_revoked;
	uint32_t revoked[8];
	struct mwp_qp *dirty[64];	/* QPs owing a coalesced ACK */
	/* the current packet's RETH or AtomicETH, as classification read it
	 * (valid when the packet carries one) */
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t len;
	} cur;
};

/* Returns true if the packet was accepted (executed or answered), false if
 * it was counted in st->drop. */
bool mwp_resp_packet(struct mwp_resp_ctx *c, struct mwp_qp *qp,
		     struct rte_mbuf *m, const struct mwp_pkt *p,
		     const struct mwp_binding *b);
void mwp_resp_flush_ack(struct mwp_resp_ctx *c, struct mwp_qp *qp);
void mwp_resp_read_pump(struct mwp_resp_ctx *c, struct mwp_qp *qp);
/* The answers' ICRCs, all at once: call before handing c->tx out. */
void mwp_resp_finish(struct mwp_resp_ctx *c);

#endif
