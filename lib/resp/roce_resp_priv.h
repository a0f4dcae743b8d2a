/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_RESP_PRIV_H
#define ROCE_RESP_PRIV_H

/*
 * What the responder's stages share (private to resp/):
 *   roce_resp_keys.c   the burst's keys: every key its requests name in
 *                      one lookup, the memory they name prefetched
 *   roce_resp_check.h  each packet's checks, in the order of
 *                      memory-windows.md section 3, each returning one
 *                      verdict
 *   roce_resp_exec.c   each packet through its QP: the checks, then what
 *                      they accept executed (WRITE, READ, ATOMIC, SEND),
 *                      every other verdict dispatched once (duplicates
 *                      re-answered)
 *   roce_resp_answer.c answers (roce_resp_answer.h): ACKs (coalesced),
 *                      NAKs, RNR NAKs, atomic ACKs, in PSN order; a
 *                      refusal made an RC NAK or a UC discard
 *                      (mwp_resp_refuse)
 *   roce_resp_read.c   READ responses: queued, re-checked, sent as room
 *                      allows, behind them the answers owed after them
 *   roce_resp_ud.c     UD SENDs: the Q_Key, the receive with its GRH
 *                      area, the completion; no answers
 */

#include "mwp_priv.h"
#include "roce_resp.h"

#define ACK_SYNDROME		(ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID)

/* What the checks, and then the execution, decide for one packet. */
enum mwp_vkind {
	MWP_V_GO = 0,		/* accepted: execute (or executed) */
	MWP_V_DROP,		/* dropped, unanswered; code: enum mwp_drop */
	MWP_V_DENY,		/* access refused; code: enum mwp_deny */
	MWP_V_INVALID,		/* invalid request (NAK 0x61) */
	MWP_V_OPERR,		/* remote operational error (NAK 0x63): the
				 * responder's own fault (a receive SGE it
				 * may not write) */
	MWP_V_RNR,		/* no receive posted */
	MWP_V_DUPLICATE,	/* RC: an earlier PSN, re-answered */
	MWP_V_AHEAD,		/* RC: a later PSN, one sequence NAK per gap */
};

struct mwp_verdict {
	uint8_t kind;		/* enum mwp_vkind */
	uint8_t code;		/* DROP: enum mwp_drop; DENY: enum mwp_deny */
};

static inline struct mwp_verdict
mwp_verdict(enum mwp_vkind kind, unsigned int code)
{
	return (struct mwp_verdict){ .kind = kind, .code = code };
}

#define MWP_VERDICT_GO	((struct mwp_verdict){ .kind = MWP_V_GO })

/* Count a drop of the current packet (it is then not "accepted"); once
 * per packet. */
static inline void
drop(struct mwp_resp_ctx *c, enum mwp_drop why)
{
	c->tx.st->drop[why]++;
	c->nb_dropped++;
}

static inline void
owe_ack(struct mwp_resp_ctx *c, struct mwp_qp *qp, uint32_t psn)
{
	if (!qp->resp.ack_pending && c->nb_dirty < RTE_DIM(c->dirty))
		c->dirty[c->nb_dirty++] = qp;
	qp->resp.ack_pending = 1;
	qp->resp.ack_psn = psn;
	qp->resp.ack_msn = qp->resp.msn;
}

/* The accesses counted for c->allow_b, added to its counter. */
static inline void
allowed_flush(struct mwp_resp_ctx *c)
{
	if (c->allow_n != 0)
		__atomic_fetch_add(&((struct mwp_binding *)(uintptr_t)c->allow_b)->allowed,
				   c->allow_n, __ATOMIC_RELAXED);
	c->allow_n = 0;
}

/* An access allowed through b.  Counted in the burst while its requests
 * go through one descriptor, added to the descriptor's counter when
 * another comes or the burst ends (mwp_resp_flush): one atomic add a
 * run of requests, not one each.  Two lcores answering through one
 * region (pcap_rate's two-lcore run) otherwise passed the counter's line
 * between them on every request.  The descriptor lives until the burst's
 * end (the queue is a reader of the key table throughout). */
static inline void
allowed(struct mwp_resp_ctx *c, const struct mwp_binding *b)
{
	if (b == NULL)
		return;
	if (b != c->allow_b) {
		allowed_flush(c);
		c->allow_b = b;
	}
	c->allow_n++;
}

/* The next entry of the answer queue, or NULL if it is full: of kind
 * (MWP_RD_READ or MWP_RD_ANSWER) for the request at psn, with what every
 * kind carries, va (a READ's address, an answer's atomic result) and left
 * (a READ's bytes, none for an answer); the caller fills in its kind's
 * own.  An ACK owed for requests since the entry before goes out just
 * before this one's answers (with nothing waiting it has gone already). */
static inline struct mwp_rd *
rd_push(struct mwp_resp *r, uint8_t kind, uint32_t psn, uint64_t va, uint32_t left)
{
	struct mwp_rd *rd;

	if (r->rd_count == MWP_MAX_RD)
		return NULL;
	rd = &r->rd[(r->rd_head + r->rd_count) % MWP_MAX_RD];
	rd->pre_ack = r->ack_pending;
	if (r->ack_pending) {
		rd->pre_ack_psn = r->ack_psn;
		rd->pre_ack_msn = r->ack_msn;
		r->ack_pending = 0;
	}
	r->rd_count++;
	/* last, in one block with the caller's own stores, which GCC then
	 * merges with them (set before the test above: READ +1 instruction) */
	rd->kind = kind;
	rd->psn = psn;
	rd->va = va;
	rd->left = left;
	return rd;
}

/* ---- roce_resp_read.c ---- */

/* Send the QP's READ responses, and the answers queued behind them, while
 * the batch has room; list it with the queue if some must wait. */
void mwp_resp_read_pump(struct mwp_resp_ctx *c, struct mwp_qp *qp);

bool mwp_resp_queue_read(struct mwp_qp *qp, uint64_t va, uint32_t rkey, uint32_t len,
			 uint32_t psn, bool nak_on_fail, const uint8_t *src, uint64_t gen);

#endif /* ROCE_RESP_PRIV_H */
