/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_RESP_CTX_H
#define ROCE_RESP_CTX_H

/* What the responder's stages pass each other: a burst's frames as its
 * first pass left them (roce_resp_burst.c), the burst's context, and the
 * calls between stages (roce_resp_priv.h lists them).  Private. */

#include <stdbool.h>

#include <rte_mbuf.h>

#include "mwp_port.h"
#include "mwp_stats.h"
#include "roce_parse.h"
#include "rkey_tbl.h"
#include "roce_tx.h"

struct mwp_qp;

/** One frame of a burst as the first pass left it (roce_resp_burst.c). */
struct mwp_resp_req {
	struct mwp_qp *qp;		/**< its QP, or NULL: none */
	const struct mwp_binding *b;	/**< the key's descriptor, NULL if unknown */
	uint64_t va;			/**< RETH or AtomicETH: the address */
	uint32_t rkey;			/**< ... the R_Key */
	uint32_t len;			/**< ... the DMA length (8 for atomics) */
	bool has_key;			/**< the frame names a key */
};

struct mwp_queue;

/* One burst's worth of context (or one mwp_queue_tx's). */
struct mwp_resp_ctx {
	struct mwp_tx tx;		/* the answers (and what others send) */
	struct mwp_queue *q;
	struct mwp_port *port;
	struct mwp_stats *st;
	uint16_t nb_dirty;
	uint64_t gen;			/* this burst's number */
	uint8_t dropped;		/* the current packet was counted as a drop */
	uint64_t taken;			/* frames handed to their QP's owner (bit i) */
	/* keys revoked by SEND_WITH_INV during this burst: descriptors
	 * resolved for the burst before that must not be used */
	uint16_t nb_revoked;
	uint32_t revoked[8];
	struct mwp_qp *dirty[64];	/* QPs owing a coalesced ACK */
};

/*
 * Each frame of a burst, in order (the answers of one QP must keep its PSN
 * order): those still without a drop reason in why[] go through their
 * QP's path and count as accepted or dropped there.  CNP and unknown-QP
 * verdicts are made here, for frames whose ICRC was good.
 */
void mwp_resp_run(struct mwp_resp_ctx *c, struct rte_mbuf *const *pkts,
		  const struct mwp_pkt *p, const enum mwp_drop *why,
		  const struct mwp_resp_req *rq, uint16_t n);
void mwp_resp_flush_ack(struct mwp_resp_ctx *c, struct mwp_qp *qp);
void mwp_resp_read_pump(struct mwp_resp_ctx *c, struct mwp_qp *qp);
/* READ responses the queue still owes (earlier bursts had no room). */
void mwp_resp_read_owed(struct mwp_resp_ctx *c);
/* mwp_resp_burst for frames another queue received and handed over (it
 * counted them received). */
uint16_t mwp_resp_burst_handed(struct mwp_queue *q, struct rte_mbuf **pkts,
			       uint16_t n, struct rte_mbuf **tx, uint16_t tx_room);
/* A context for tx_room frames into tx, on queue q. */
void mwp_resp_ctx_init(struct mwp_resp_ctx *c, struct mwp_queue *q,
		       struct rte_mbuf **tx, uint16_t tx_room);

#endif
