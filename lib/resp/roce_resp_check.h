/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_RESP_CHECK_H
#define ROCE_RESP_CHECK_H

/*
 * The responder's checks for one packet on the lcore that owns its QP,
 * top to bottom in the order they run: the transport's (QP state,
 * transport, PSN, opcode sequence; IBA 9.7 and rxe_resp.c's order), then
 * memory-windows.md section 3 step by step.  Each returns one verdict
 * (roce_resp_priv.h); roce_resp_exec.c executes what they all accept and
 * dispatches any other verdict once.  They change nothing but the PSN
 * stage's own state (a UC message restarting at a new PSN, the sequence
 * NAK re-armed).  Private; inline, because every packet takes them all.
 */

#include <rte_ring.h>

#include "roce_resp_priv.h"

/* What the checks found for an accepted request: the access it makes,
 * its key's descriptor and where its address lands. */
struct mwp_resp_access {
	struct mwp_access_req q;	/* key, address, (remaining) length */
	const struct mwp_binding *b;	/* the key's descriptor; NULL: none */
	uint8_t *host;			/* q.va in memory; NULL for length 0 */
};

/* A descriptor the burst's lookup found, unless a SEND with invalidate
 * of this burst revoked its key since (past eight such keys in one
 * burst, which is rare, looked up again). */
static __rte_always_inline const struct mwp_binding *
mwp_resp_still_valid(const struct mwp_resp_ctx *c, const struct mwp_binding *b)
{
	if (likely(c->nb_revoked == 0) || b == NULL)
		return b;
	if (c->nb_revoked > RTE_DIM(c->revoked))
		return mwp_keys_lookup(c->port->keys, b->rkey);
	for (unsigned int i = 0; i < c->nb_revoked; i++)
		if (c->revoked[i] == b->rkey)
			return NULL;
	return b;
}

/* The QP: it answers from RTR on, and is silent after a fatal NAK; a
 * request of its own transport. */
static __rte_always_inline struct mwp_verdict
check_qp(const struct mwp_qp *qp, const struct mwp_pkt *p)
{
	enum ibv_qp_state st = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE);

	if (unlikely((st != IBV_QPS_RTR && st != IBV_QPS_RTS) || qp->resp.err))
		return mwp_verdict(MWP_V_DROP, MWP_DROP_QP_STATE);
	/* an RC QP's responses went to its completer (engine/mwp_rx.c) */
	if (unlikely(roce_opcode_transport(p->opcode) != qp->transport ||
		     !(p->mask & ROCE_M_REQ)))
		return mwp_verdict(MWP_V_DROP, MWP_DROP_WRONG_TRANSPORT);
	return MWP_VERDICT_GO;
}

/* The PSN.  RC (IBA 9.7.5.1.1): the expected one, an earlier one (a
 * duplicate) or a later one (a gap).  UC (9.7.5.1.2): a lost packet
 * breaks the message, and a new one may start at any PSN. */
static __rte_always_inline struct mwp_verdict
check_psn(struct mwp_resp *r, const struct mwp_pkt *p, bool rc)
{
	const uint32_t d = (p->psn - r->epsn) & ROCE_PSN_MASK;

	if (rc) {
		if (unlikely(d != 0))
			return mwp_verdict(d < (ROCE_PSN_MASK + 1) / 2 ? MWP_V_AHEAD :
					   MWP_V_DUPLICATE, 0);
		r->nak_seq = 0;
		return MWP_VERDICT_GO;
	}
	if (d != 0) {
		r->in_msg = 0;
		if (!(p->mask & ROCE_M_START))
			return mwp_verdict(MWP_V_DROP, MWP_DROP_UC_DISCARD);
		r->epsn = p->psn;
	}
	return MWP_VERDICT_GO;
}

/* The opcode sequence: inside a message only its MIDDLE or LAST may come;
 * outside one, only a FIRST or ONLY. */
static __rte_always_inline struct mwp_verdict
check_sequence(const struct mwp_resp *r, const struct mwp_pkt *p)
{
	const uint32_t want = r->in_msg;

	if (unlikely(want ? !(p->mask & want) || (p->mask & ROCE_M_START) :
			   !(p->mask & ROCE_M_START)))
		return mwp_verdict(MWP_V_INVALID, 0);
	return MWP_VERDICT_GO;
}

/* Step 1: the QP's own access flags, before any key work. */
static __rte_always_inline struct mwp_verdict
check_qp_access(const struct mwp_qp *qp, const struct mwp_pkt *p)
{
	/* an ATOMIC WRITE asks for remote write, as rxe's check_op_valid
	 * (tested inside the atomics' arm: the WRITE and READ tests stay the
	 * ones the dispatch after them repeats, which GCC then merges) */
	const uint32_t want = p->mask & ROCE_M_WRITE ? IBV_ACCESS_REMOTE_WRITE :
			      p->mask & ROCE_M_READ ? IBV_ACCESS_REMOTE_READ :
			      p->mask & ROCE_M_ATOMIC ?
			      (p->mask & ROCE_M_ATOMIC_WRITE ? IBV_ACCESS_REMOTE_WRITE :
			       IBV_ACCESS_REMOTE_ATOMIC) : 0;

	if (want != 0 && mwp_qp_access_check(qp->access_flags, want) != MWP_DENY_NONE)
		return mwp_verdict(MWP_V_DENY, MWP_DENY_QP_ACCESS);
	return MWP_VERDICT_GO;
}

/* Steps 2-5 and 7 for the access in a->q through a->b. */
static __rte_always_inline struct mwp_verdict
check_key(const struct mwp_qp *qp, struct mwp_resp_access *a)
{
	enum mwp_deny d;

	a->q.pd = qp->resp.own_pd;
	a->q.qpn = qp->resp.own_qpn;
	d = mwp_access_decide(a->b, &a->q, &a->host);
	return d == MWP_DENY_NONE ? MWP_VERDICT_GO : mwp_verdict(MWP_V_DENY, d);
}

/* The key a WRITE's later packet goes on with: its first packet's.  The
 * burst found it (its first pass named the QP's key in progress for the
 * packet), or an earlier packet of this burst did (when the first packet
 * is in this burst too).  Looked up here only if the QP changed hands
 * in between (rare). */
static __rte_always_inline const struct mwp_binding *
write_key(const struct mwp_resp_ctx *c, const struct mwp_resp *r,
	  const struct mwp_resp_req *rq, const struct mwp_binding *b)
{
	if (r->w_gen == c->gen && r->w_queue == c->rq->self)
		return mwp_resp_still_valid(c, r->w_b);
	if (likely(rq->has_key && rq->rkey == r->w_rkey))
		return b;
	return mwp_keys_lookup(c->port->keys, r->w_rkey);
}

/* WRITE: with immediate it consumes a receive, and none posted is RNR
 * before any other check (rxe's CHK_RESOURCE) and before any byte moves;
 * every packet checks the key (steps 2-5), with the VA and the remaining
 * length carried from the first; then its payload against the remaining
 * DMA length (step 6). */
static __rte_always_inline struct mwp_verdict
check_write(const struct mwp_resp_ctx *c, const struct mwp_qp *qp, const struct mwp_pkt *p,
	    const struct mwp_resp_req *rq, const struct mwp_binding *b,
	    struct mwp_resp_access *a)
{
	const struct mwp_resp *r = &qp->resp;
	const bool first = p->mask & ROCE_M_START;
	struct mwp_verdict v;
	enum mwp_deny d;

	if ((p->mask & ROCE_M_IMM) && !mwp_rq_posted(qp))
		return mwp_verdict(MWP_V_RNR, 0);
	a->q.access = IBV_ACCESS_REMOTE_WRITE;
	if (first) {
		a->q.rkey = rq->rkey;
		a->q.va = rq->va;
		a->q.len = rq->len;
		a->b = b;
	} else {
		a->q.rkey = r->w_rkey;
		a->q.va = r->w_va;
		a->q.len = r->w_left;
		a->b = write_key(c, r, rq, b);
	}
	v = check_key(qp, a);
	if (v.kind != MWP_V_GO)
		return v;
	d = mwp_write_len_check(first, p->mask & ROCE_M_END, p->payload_len, a->q.len,
				mwp_qp_mtu_bytes(qp));
	return d == MWP_DENY_NONE ? MWP_VERDICT_GO : mwp_verdict(MWP_V_DENY, d);
}

/* READ: the key (steps 2-5); then room among the READs the QP lets be
 * outstanding (max_dest_rd_atomic), else an invalid request. */
static __rte_always_inline struct mwp_verdict
check_read(const struct mwp_qp *qp, const struct mwp_resp_req *rq,
	   const struct mwp_binding *b, struct mwp_resp_access *a)
{
	struct mwp_verdict v;

	a->q.access = IBV_ACCESS_REMOTE_READ;
	a->q.rkey = rq->rkey;
	a->q.va = rq->va;
	a->q.len = rq->len;
	a->b = b;
	v = check_key(qp, a);
	if (v.kind != MWP_V_GO)
		return v;
	/* at least one may be, even with max_dest_rd_atomic 0: "waiting,
	 * and as many as allowed" is one test for an empty queue (the usual
	 * case), where GCC gave RTE_MAX(max_dest_rd_atomic, 1) seven */
	if (qp->resp.rd_count != 0 && qp->resp.rd_count >= qp->max_dest_rd_atomic)
		return mwp_verdict(MWP_V_INVALID, 0);
	return MWP_VERDICT_GO;
}

/* ATOMIC: the key and its bounds (steps 4-5), then the 8-byte alignment
 * (step 7), in mwp_access_decide. */
static __rte_always_inline struct mwp_verdict
check_atomic(const struct mwp_qp *qp, const struct mwp_resp_req *rq,
	     const struct mwp_binding *b, struct mwp_resp_access *a)
{
	a->q.access = IBV_ACCESS_REMOTE_ATOMIC;
	a->q.rkey = rq->rkey;
	a->q.va = rq->va;
	a->q.len = sizeof(uint64_t);
	a->b = b;
	return check_key(qp, a);
}

/* ATOMIC WRITE (IBA 1.5): the key for the 8 bytes at the RETH's address
 * (steps 4-5) with remote write -- the right rxe's check_rkey and mlx5 ask
 * for, not remote atomic; its DMA length is not the RETH's, so a length
 * 0 never skips the key (step 2 is a READ's and a WRITE's); then the
 * RETH's DMA length and the payload, both exactly 8 (step 6, as a
 * WRITE's length); then the 8-byte alignment of the address (step 7, as
 * an atomic's).  A denial is the existing one of its step. */
static __rte_always_inline struct mwp_verdict
check_atomic_write(const struct mwp_qp *qp, const struct mwp_pkt *p,
		   const struct mwp_resp_req *rq, const struct mwp_binding *b,
		   struct mwp_resp_access *a)
{
	struct mwp_verdict v;

	a->q.access = IBV_ACCESS_REMOTE_WRITE;
	a->q.rkey = rq->rkey;
	a->q.va = rq->va;
	a->q.len = ROCE_ATOMIC_WRITE_BYTES;
	a->b = b;
	v = check_key(qp, a);
	if (v.kind != MWP_V_GO)
		return v;
	if (rq->len != ROCE_ATOMIC_WRITE_BYTES || p->payload_len != ROCE_ATOMIC_WRITE_BYTES)
		return mwp_verdict(MWP_V_DENY, MWP_DENY_WRITE_LENGTH);
	if (((uintptr_t)a->host & (ROCE_ATOMIC_WRITE_BYTES - 1)) != 0)
		return mwp_verdict(MWP_V_DENY, MWP_DENY_UNALIGNED);
	return MWP_VERDICT_GO;
}

/* SEND: a new message needs a receive (one that a broken UC message left
 * held will do), else RNR; the receive's own checks come as the payload
 * is placed. */
static __rte_always_inline struct mwp_verdict
check_send(const struct mwp_qp *qp, const struct mwp_pkt *p)
{
	if ((p->mask & ROCE_M_START) && !qp->resp.recv_held && !mwp_rq_posted(qp))
		return mwp_verdict(MWP_V_RNR, 0);
	return MWP_VERDICT_GO;
}

/*
 * The checks every request packet takes after the QP's (check_qp), in
 * order: PSN, opcode sequence, the QP's access flags.  Its operation's
 * own follow (check_write, check_read, check_atomic, check_atomic_write,
 * check_send), each
 * just before its execution (roce_resp_exec.c: resp_request).  rc: the QP
 * is RC.
 */
static __rte_always_inline struct mwp_verdict
mwp_resp_check(struct mwp_qp *qp, const struct mwp_pkt *p, bool rc)
{
	struct mwp_verdict v;

	v = check_psn(&qp->resp, p, rc);
	if (v.kind != MWP_V_GO)
		return v;
	v = check_sequence(&qp->resp, p);
	if (v.kind != MWP_V_GO)
		return v;
	return check_qp_access(qp, p);
}

#endif /* ROCE_RESP_CHECK_H */
