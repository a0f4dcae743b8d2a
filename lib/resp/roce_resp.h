/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_RESP_H
#define ROCE_RESP_H

/*
 * The responder, as the queue's rx sorter (engine/mwp_rx.c) and its tx
 * (engine/mwp_queue.c) see it: RoCE requests in, answers out.
 *
 * A burst reaches it in four steps.  In the sorter's one pass over the
 * frames, mwp_resp_note() notes the R_Key each request names; once the
 * ICRCs are checked, mwp_resp_keys() looks every noted key up at once and
 * starts loading the memory the requests name; mwp_resp_requests() runs
 * each run of consecutive requests, in order, through its QP (the checks, then the
 * execution, or the one dispatch of any other verdict); mwp_resp_flush()
 * sends the ACKs the burst made owed, one per QP.  Between bursts,
 * mwp_resp_read_owed() sends the READ responses that had no room.
 *
 * Everything runs on the thread of the queue's engine, with no lock, no
 * logging and no allocation but answer mbufs.  Private.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "mwp_guard_priv.h"
#include "mwp_port.h"
#include "mwp_priv.h"
#include "mwp_stats.h"
#include "roce_parse.h"
#include "roce_tx.h"
#include "rkey_tbl.h"

/* Requests one burst holds at most (the sorter's burst). */
#define MWP_RESP_BURST_MAX	64

/** One frame of a burst as the sorter's pass left it. */
struct mwp_resp_req {
	struct mwp_qp *qp;		/**< its QP, or NULL: none */
	const struct mwp_binding *b;	/**< the key's descriptor, NULL if unknown */
	uint64_t va;			/**< RETH or AtomicETH: the address */
	uint32_t rkey;			/**< ... the R_Key */
	uint32_t len;			/**< ... the DMA length (8 for atomics) */
	bool has_key;			/**< the frame names a key */
};

/* The keys a burst's requests name, for one bulk lookup: a key the
 * request before named too (a stream to one window) is looked up once. */
struct mwp_resp_keys {
	const void *key[MWP_RESP_BURST_MAX];	/* &rq[i].rkey of the first of a run */
	uint32_t sig[MWP_RESP_BURST_MAX];	/* its hash */
};

/* How many keys are noted, and the last: a small struct the sorter keeps
 * by value (never its address), so that its fields stay in registers
 * through the pass. */
struct mwp_resp_noted {
	uint64_t last;			/* the key noted last; wider than any */
	uint16_t n;			/* keys in mwp_resp_keys */
	bool shared;			/* a slot serves a run of requests */
};

#define MWP_RESP_NOTED_INIT	((struct mwp_resp_noted){ .last = UINT64_MAX })

/* A WRITE's later packet names no key: it goes on with its first
 * packet's, which its QP carries (the message's next VA with it).  Read
 * only on the queue that runs the QP (self, its owner); if the first
 * packet is in this burst too, the key found for it serves
 * (roce_resp_check.h). */
static __rte_always_inline bool
mwp_resp_continued_rkey(const struct mwp_owner *self, const struct mwp_qp *qp,
			struct mwp_resp_req *q)
{
	if ((qp->owner != self && qp->owner != NULL) || qp->resp.in_msg != ROCE_M_WRITE)
		return false;
	q->rkey = qp->resp.w_rkey;
	q->va = qp->resp.w_va;
	q->len = 0;
	return true;
}

/*
 * The sorter's pass, for a frame for this port (bth: its BTH; op: its
 * opcode's entry; q->qp: its QP, or NULL): the R_Key, address and length
 * a request names in its RETH or AtomicETH, or that a WRITE's later
 * packet goes on with, noted in q and in k (nt counts them).  Inlined
 * into the sorter's loop, whose frames are in cache.
 */
static __rte_always_inline void
mwp_resp_note(const struct mwp_owner *self, const uint8_t *bth,
	      const struct roce_opcode_info *op, struct mwp_resp_req *q,
	      struct mwp_resp_keys *k, struct mwp_resp_noted *nt)
{
	const struct roce_reth *reth = (const void *)roce_op_eh(bth, op, ROCE_EH_RETH);
	const struct roce_atmeth *atm;

	if (reth != NULL && (op->mask & ROCE_M_REQ)) {
		q->rkey = reth_rkey(reth);
		q->va = reth_va(reth);
		q->len = reth_dmalen(reth);
	} else if ((atm = (const void *)roce_op_eh(bth, op, ROCE_EH_ATMETH)) != NULL) {
		q->rkey = atmeth_rkey(atm);
		q->va = atmeth_va(atm);
		q->len = sizeof(uint64_t);
	} else if (!(op->mask & ROCE_M_WRITE) || q->qp == NULL ||
		   !mwp_resp_continued_rkey(self, q->qp, q)) {
		q->has_key = false;
		return;
	}
	q->has_key = true;
	if (q->rkey != nt->last) {
		nt->last = q->rkey;
		k->key[nt->n] = &q->rkey;
		k->sig[nt->n++] = mwp_keys_sig(q->rkey);
	} else {
		nt->shared = true;
	}
}

/* QPs with READ responses pending that a queue lists by name. */
#define MWP_RESP_RD_PENDING	64

/* The responder's state on one queue: what its bursts share. */
struct mwp_resp_queue {
	const struct mwp_owner *self;	/* the owner its QPs have */
	struct mwp_port *port;
	struct mwp_stats *st;		/* its thread's counters for the port */
	struct mwp_guard *guard;	/* refusals count against their source */
	uint64_t bursts;		/* bursts run: a burst's number */
	/* QPs with READ responses still to send, so that a pass does not
	 * scan the QP table; past the end, a full scan until none is left */
	struct {
		uint32_t qpn;
		struct mwp_qp *qp;
	} rd_pending[MWP_RESP_RD_PENDING];
	uint16_t nb_rd_pending;
	bool rd_pending_overflow;
};

void mwp_resp_queue_init(struct mwp_resp_queue *rq, const struct mwp_owner *self,
			 struct mwp_port *port, struct mwp_stats *st, struct mwp_guard *guard);

/* Does the queue owe READ responses (mwp_resp_read_owed has work)? */
static inline bool
mwp_resp_owes(const struct mwp_resp_queue *rq)
{
	return rq->nb_rd_pending != 0 || rq->rd_pending_overflow;
}

/* The QP leaves the queue's lists (it is destroyed, or reset). */
void mwp_resp_forget(struct mwp_resp_queue *rq, struct mwp_qp *qp);

/* One burst's context (or one pass of the queue's tx). */
struct mwp_resp_ctx {
	struct mwp_tx tx;		/* where the answers go (and what the
					 * queue's other homes send) */
	struct mwp_resp_queue *rq;
	struct mwp_guard *guard;	/* rq's */
	struct mwp_port *port;		/* (its counters: tx.st) */
	uint64_t gen;			/* the burst's number; 0: no burst */
	uint16_t nb_dropped;		/* frames it counted as drops */
	uint16_t nb_dirty;
	/* keys revoked by SEND_WITH_INV during this burst: descriptors
	 * resolved for the burst before that must not be used */
	uint16_t nb_revoked;
	uint32_t revoked[8];
	/* accesses allowed through one descriptor in a row, not yet added
	 * to its counter (allowed(), roce_resp_priv.h) */
	uint32_t allow_n;
	const struct mwp_binding *allow_b;
	struct mwp_qp *dirty[64];	/* QPs owing a coalesced ACK */
};

/* The time of the engine's pass (TSC), for the rare paths that need it
 * (the guessing defence). */
static inline uint64_t
mwp_resp_now(const struct mwp_resp_ctx *c)
{
	return c->rq->self->sched->now;
}

/* A context on rq, its batch the room frames of txm; burst: a new burst
 * (its frames' keys are looked up for it), not the queue's tx.
 * The scalars only: the arrays are written before they are read
 * (zeroing them all would cost more than some stages). */
static inline void
mwp_resp_ctx_init(struct mwp_resp_ctx *c, struct mwp_resp_queue *rq,
		  struct rte_mbuf **txm, uint16_t room, bool burst)
{
	mwp_tx_init(&c->tx, txm, room, rq->port->mp, rq->st);
	c->rq = rq;
	c->guard = rq->guard;
	c->port = rq->port;
	c->gen = burst ? ++rq->bursts : 0;
	c->nb_dropped = 0;
	c->nb_dirty = 0;
	c->nb_revoked = 0;
	c->allow_n = 0;
	c->allow_b = NULL;
}

/* Every key noted for the burst's frames (rq[0..n); k, nt) in one bulk
 * lookup, each descriptor into its frame's rq[i].b, and the memory each
 * request names on its way in. */
void mwp_resp_keys(struct mwp_resp_ctx *c, struct mwp_resp_keys *k, struct mwp_resp_noted nt,
		   const struct mwp_pkt *p, struct mwp_resp_req *rq, uint16_t n);

/*
 * n requests of the burst that follow each other in it (pkts, p and rq
 * at the first), in order, each through its QP, which this queue runs:
 * checked, then executed or answered (or dropped and counted).  Returns
 * how many were accepted (executed or answered).
 */
unsigned int mwp_resp_requests(struct mwp_resp_ctx *c, struct rte_mbuf *const *pkts,
			       const struct mwp_pkt *p, const struct mwp_resp_req *rq,
			       uint16_t n);

/*
 * A UD SEND (a frame with a DETH) for a QP this queue runs, its ICRC
 * good: received into the QP's next receive (its own or its SRQ's) and
 * completed, or dropped and counted (roce_resp_ud.c).  Returns true if
 * accepted.
 */
bool mwp_resp_ud(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
		 const struct mwp_pkt *p);

/* The coalesced ACK of every QP that accepted requests in the burst, and
 * the burst's allowed accesses added to their descriptors' counters. */
void mwp_resp_flush(struct mwp_resp_ctx *c);

/* READ responses the queue still owes (earlier bursts had no room). */
void mwp_resp_read_owed(struct mwp_resp_ctx *c);

#endif /* ROCE_RESP_H */
