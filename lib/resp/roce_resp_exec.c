/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's per-packet path for one QP, on the lcore that owns it:
 * the checks (roce_resp_check.h, in the order of IBA 9.7 and
 * memory-windows.md section 3), then what they accept executed -- bytes
 * written, READ responses queued, an atomic done (an ATOMIC WRITE's one
 * 64-bit store among them), a SEND placed into its receive -- and any
 * other verdict dispatched once (resp_verdict): a drop, a refusal made an
 * RC NAK or a UC discard (roce_resp_answer.c), a duplicate re-answered,
 * or a PSN gap's sequence NAK.
 *
 * No locks, no logging, no allocation but answer mbufs.  The one
 * exception is a SEND with invalidate, which tries the device lock to
 * revoke a key (rare), and never waits for it: held by a control thread,
 * the packet is dropped before anything changes (inv_busy) and the
 * requester sends it again.
 */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ring_elem.h>

#include "mwp_place.h"
#include "mwp_tsan.h"
#include "roce_resp_answer.h"
#include "roce_resp_check.h"

/* ---- execution ---- */

/* Copy len payload bytes starting at off (may span segments) to dst:
 * placed, every byte stored once (mwp_place.h). */
static __rte_noinline void
copy_payload_any(uint8_t *dst, const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	if (likely(off + len <= m->data_len)) {
		mwp_place(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), len);
		return;
	}
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t n = RTE_MIN(len, (uint32_t)m->data_len - off);

		mwp_place(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		dst += n;
		len -= n;
		off = 0;
		m = m->next;
	}
}

/* The same, inline for a payload of up to 64 bytes in the first segment
 * (most WRITE and SEND payloads at a high packet rate). */
static __rte_always_inline void
copy_payload(uint8_t *dst, const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	if (likely(len <= 64 && off + len <= m->data_len))
		mwp_place(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), len);
	else
		copy_payload_any(dst, m, off, len);
}

/* ATOMIC at the address the checks found (8-byte aligned); its result is
 * kept for a duplicate (never executed twice) and answered. */
static void
exec_atomic(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	    const struct mwp_pkt *p, const struct mwp_resp_access *a)
{
	const struct roce_atmeth *h = mwp_pkt_eh(m, p, ROCE_EH_ATMETH);
	uint64_t *word = (uint64_t *)(void *)a->host, orig;
	struct mwp_resp *r = &qp->resp;

	allowed(c, a->b);
	if (p->opcode == ROCE_OP_RC_FETCH_ADD) {
		orig = __atomic_fetch_add(word, atmeth_swap_add(h), __ATOMIC_SEQ_CST);
	} else {
		orig = atmeth_compare(h);
		/* on failure orig receives the current value */
		__atomic_compare_exchange_n(word, &orig, atmeth_swap_add(h), false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	}
	r->atom[r->atom_next].psn = p->psn;
	r->atom[r->atom_next].orig = orig;
	r->atom[r->atom_next].valid = 1;
	r->atom_next = (r->atom_next + 1) % MWP_ATOMIC_CACHE;
	r->epsn = (r->epsn + 1) & ROCE_PSN_MASK;
	r->msn = (r->msn + 1) & ROCE_PSN_MASK;
	r->st.atomics++;
	atomic_answer(c, qp, p->psn, orig);
}

/* ATOMIC WRITE (IBA 1.5), its checks passed: the 8 bytes as they came
 * stored at the address the checks found (8-byte aligned) in one 64-bit
 * atomic store -- no reader on any lcore or CPU sees half of them -- that
 * release-orders every earlier write of this QP before it (rxe's
 * smp_store_release).  Its PSN is kept with the atomics' so that a
 * duplicate is answered, never stored again; its answer, as rxe's, is a
 * zero-length READ RESPONSE ONLY with an ACK AETH, in PSN order. */
static void
exec_atomic_write(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
		  const struct mwp_pkt *p, const struct mwp_resp_access *a)
{
	struct mwp_resp *r = &qp->resp;
	uint64_t v;

	allowed(c, a->b);
	if (likely(p->payload_off + sizeof(v) <= m->data_len))
		memcpy(&v, rte_pktmbuf_mtod_offset(m, const uint8_t *, p->payload_off),
		       sizeof(v));
	else
		copy_payload_any((uint8_t *)&v, m, p->payload_off, sizeof(v));
	__atomic_store_n((uint64_t *)(void *)a->host, v, __ATOMIC_RELEASE);
	r->atom[r->atom_next].psn = p->psn;
	r->atom[r->atom_next].orig = 0;
	r->atom[r->atom_next].valid = 1;
	r->atom_next = (r->atom_next + 1) % MWP_ATOMIC_CACHE;
	r->epsn = (r->epsn + 1) & ROCE_PSN_MASK;
	r->msn = (r->msn + 1) & ROCE_PSN_MASK;
	r->st.atomics++;
	atomic_write_answer(c, qp, p->psn);
}

/* An ATOMIC WRITE: its checks (roce_resp_check.h), then its execution;
 * out of line, and with an access of its own (the caller's is never
 * handed out, so that it stays in registers on every other path). */
static __rte_noinline struct mwp_verdict
resp_atomic_write(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
		  const struct mwp_pkt *p, const struct mwp_resp_req *rq,
		  const struct mwp_binding *b)
{
	struct mwp_resp_access a = { .b = NULL, .host = NULL };
	const struct mwp_verdict v = check_atomic_write(qp, p, rq, b, &a);

	if (v.kind == MWP_V_GO)
		exec_atomic_write(c, qp, m, p, &a);
	return v;
}

/* READ: its responses queued behind the answers owed before it, and
 * sent as room allows (roce_resp_read.c); a full queue is an invalid
 * request. */
static struct mwp_verdict
exec_read(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct mwp_pkt *p,
	  const struct mwp_resp_access *a)
{
	const uint32_t mtu = mwp_qp_mtu_bytes(qp), len = (uint32_t)a->q.len;
	struct mwp_resp *r = &qp->resp;

	if (len != 0)
		allowed(c, a->b);
	/* answers stay in PSN order: the ACK owed for what came before
	 * goes first (now, or from the queue behind earlier READs) */
	resp_flush_ack(c, qp);
	if (!mwp_resp_queue_read(qp, a->q.va, a->q.rkey, len, p->psn, true, a->host, c->gen))
		return mwp_verdict(MWP_V_INVALID, 0);
	r->epsn = (r->epsn + (len == 0 ? 1 : (len + mtu - 1) / mtu)) & ROCE_PSN_MASK;
	r->msn = (r->msn + 1) & ROCE_PSN_MASK;
	mwp_resp_read_pump(c, qp);
	return MWP_VERDICT_GO;
}

/* WRITE: the payload copied; a message that goes on carries its key, the
 * next VA and the remaining length; with immediate, its receive
 * completes. */
static void
exec_write(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	   const struct mwp_pkt *p, const struct mwp_resp_access *a)
{
	struct mwp_resp *r = &qp->resp;
	const bool first = p->mask & ROCE_M_START, last = p->mask & ROCE_M_END;

	if (p->payload_len != 0) {
		allowed(c, a->b);
		copy_payload(a->host, m, p->payload_off, p->payload_len);
	}
	r->epsn = (r->epsn + 1) & ROCE_PSN_MASK;
	if (!last) {
		/* what the next packet of the message continues from */
		if (first)
			r->w_total = (uint32_t)a->q.len;
		r->w_rkey = a->q.rkey;
		r->w_va = a->q.va + p->payload_len;
		r->w_left = a->q.len - p->payload_len;
		r->w_b = a->b;
		r->w_queue = c->rq->self;
		r->w_gen = c->gen;
		r->in_msg = ROCE_M_WRITE;
	} else {
		r->in_msg = 0;
		r->msn = (r->msn + 1) & ROCE_PSN_MASK;
	}
	/* the receive it consumes, taken and completed in one call (no
	 * receive on this function's stack: the WRITE path's frame stays
	 * small) */
	if (p->mask & ROCE_M_IMM)
		mwp_rq_complete(&qp->ibqp, IBV_WC_RECV_RDMA_WITH_IMM,
				first ? (uint32_t)a->q.len : r->w_total, IBV_WC_WITH_IMM,
				((const struct roce_immdt *)mwp_pkt_eh(m, p, ROCE_EH_IMMDT))->imm,
				IBV_WC_SUCCESS, NULL);
	if (qp->ibqp.qp_type == IBV_QPT_RC)
		owe_ack(c, qp, p->psn);
}

/* ---- SEND and receives ---- */

/* Scatter a SEND packet's payload into the receive's SGEs, after what
 * earlier packets placed.  Each SGE must name a region of the QP's PD
 * with local write, and stay inside it.  IBV_WC_SUCCESS, or the
 * receive's error: IBV_WC_LOC_LEN_ERR (the message is longer than the
 * receive: nothing placed), IBV_WC_LOC_PROT_ERR (an SGE refused). */
static enum ibv_wc_status
place_recv(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	   const struct mwp_pkt *p)
{
	struct mwp_resp *r = &qp->resp;
	uint32_t skip = r->recv_len, done = 0;
	const uint32_t len = p->payload_len;
	uint64_t room = 0;

	/* too long for the receive: refuse before placing a byte */
	for (uint32_t i = 0; i < r->recv.num_sge; i++)
		room += r->recv.sge[i].length;
	if ((uint64_t)r->recv_len + len > room)
		return IBV_WC_LOC_LEN_ERR;
	for (uint32_t i = 0; i < r->recv.num_sge && done < len; i++) {
		const struct ibv_sge *sg = &r->recv.sge[i];
		uint8_t *host;
		uint32_t n;

		if (skip >= sg->length) {
			skip -= sg->length;
			continue;
		}
		n = RTE_MIN(sg->length - skip, len - done);
		/* the region found for this key last time while no
		 * descriptor has left the table since: a program's receives
		 * come from one buffer or a few */
		host = mwp_local_addr(mwp_keys_lookup_memo(c->port->keys, &r->recv_key, sg->lkey,
							   mwp_keys_gen(c->port->keys)),
				      qp->ibqp.pd->handle, sg->addr + skip, n, true);
		if (host == NULL)
			return IBV_WC_LOC_PROT_ERR;
		copy_payload(host, m, p->payload_off + done, n);
		done += n;
		skip = 0;
	}
	if (done < len)
		return IBV_WC_LOC_LEN_ERR;	/* longer than the receive */
	r->recv_len += len;
	return IBV_WC_SUCCESS;
}

/* SEND, under the device lock when it invalidates: its payload placed
 * into the receive (taken at the message's first packet); a receive too
 * short or an SGE refused completes in error, and the request is invalid.
 * At the last packet, the invalidation the packet carries (section 4:
 * after the data is placed) and the receive's completion. */
static struct mwp_verdict
exec_send_locked(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
		 const struct mwp_pkt *p)
{
	struct mwp_resp *r = &qp->resp;
	const bool rc = qp->ibqp.qp_type == IBV_QPT_RC, last = p->mask & ROCE_M_END;
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	unsigned int flags = 0;
	uint32_t imm_inv = 0;

	if (p->mask & ROCE_M_START) {
		/* a broken UC message left its receive for this one; the
		 * checks saw one posted (only this lcore takes them) */
		if (!r->recv_held) {
			if (mwp_rq_take(qp, &r->recv) != 0)
				return mwp_verdict(MWP_V_RNR, 0);
			r->recv_held = 1;
		}
		r->recv_len = 0;
	}
	status = place_recv(c, qp, m, p);
	if (status != IBV_WC_SUCCESS) {
		/* the receive completes in error; a message too long is the
		 * requester's fault (invalid request), a receive whose
		 * memory may not be written ours (remote operational error,
		 * as rxe and the IBA answer an L_Key violation) */
		r->in_msg = 0;
		r->recv_held = 0;
		mwp_rq_done(qp, &r->recv, IBV_WC_RECV, r->recv_len, 0, 0, status);
		return mwp_verdict(status == IBV_WC_LOC_LEN_ERR ? MWP_V_INVALID : MWP_V_OPERR, 0);
	}
	r->in_msg = last ? 0 : ROCE_M_SEND;
	r->epsn = (r->epsn + 1) & ROCE_PSN_MASK;
	if (!last) {
		if (rc)
			owe_ack(c, qp, p->psn);
		return MWP_VERDICT_GO;
	}
	if (p->mask & ROCE_M_IMM) {
		flags = IBV_WC_WITH_IMM;
		imm_inv = ((const struct roce_immdt *)mwp_pkt_eh(m, p, ROCE_EH_IMMDT))->imm;
	} else if (p->mask & ROCE_M_INV) {
		imm_inv = ieth_rkey(mwp_pkt_eh(m, p, ROCE_EH_IETH));
		if (mwp_mw_remote_invalidate_locked(qp, imm_inv) == 0) {
			flags = IBV_WC_WITH_INV;
			/* later packets of this burst must not use it */
			if (c->nb_revoked < RTE_DIM(c->revoked))
				c->revoked[c->nb_revoked] = imm_inv;
			c->nb_revoked++;
		} else {
			status = IBV_WC_REM_INV_REQ_ERR;
		}
	}
	if (status == IBV_WC_SUCCESS)
		r->msn = (r->msn + 1) & ROCE_PSN_MASK;
	r->recv_held = 0;
	mwp_rq_done(qp, &r->recv, IBV_WC_RECV, r->recv_len, flags, imm_inv, status);
	if (status != IBV_WC_SUCCESS)
		/* never "success" for a bad invalidation (rxe ACKs it) */
		return mwp_verdict(MWP_V_INVALID, 0);
	if (rc)
		owe_ack(c, qp, p->psn);
	return MWP_VERDICT_GO;
}

/* A SEND; the packet that invalidates (SEND LAST/ONLY with invalidate,
 * RC only) runs under the device lock, which the lcore only tries: a
 * control thread changing windows or regions holds it for microseconds,
 * and the lcore does not wait for it.  The packet is dropped unanswered
 * with nothing changed (no receive taken, no byte placed, the PSN still
 * expected), and the requester's retry brings it again. */
static struct mwp_verdict
exec_send(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	  const struct mwp_pkt *p)
{
	pthread_mutex_t *lock = &qp->dev->lock;
	struct mwp_verdict v;

	if (likely(!(p->mask & ROCE_M_INV)))
		return exec_send_locked(c, qp, m, p);
	if (pthread_mutex_trylock(lock) != 0)
		return mwp_verdict(MWP_V_DROP, MWP_DROP_INV_BUSY);
	v = exec_send_locked(c, qp, m, p);
	pthread_mutex_unlock(lock);
	return v;
}

/* ---- duplicates (RC): re-answered, never re-executed (IBA 9.9.2) ---- */

static void
duplicate(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct mwp_pkt *p,
	  const struct mwp_resp_req *rq, const struct mwp_binding *b)
{
	struct mwp_resp *r = &qp->resp;

	r->st.duplicates++;
	c->tx.st->duplicates++;
	if (p->mask & ROCE_M_READ) {
		struct mwp_resp_access a = {
			.q = {
				.rkey = rq->rkey, .access = IBV_ACCESS_REMOTE_READ,
				.va = rq->va, .len = rq->len,
			},
			.b = b,
		};

		/* memory read again, under a fresh key check */
		if (check_key(qp, &a).kind == MWP_V_GO) {
			resp_flush_ack(c, qp);
			mwp_resp_queue_read(qp, a.q.va, a.q.rkey, rq->len, p->psn, false,
					    a.host, c->gen);
			mwp_resp_read_pump(c, qp);
		} else {
			drop(c, MWP_DROP_DUPLICATE);
		}
		return;
	}
	if (p->mask & ROCE_M_ATOMIC) {
		for (unsigned int i = 0; i < MWP_ATOMIC_CACHE; i++)
			if (r->atom[i].valid && r->atom[i].psn == p->psn) {
				if (p->mask & ROCE_M_ATOMIC_WRITE)
					atomic_write_answer(c, qp, p->psn);
				else
					atomic_answer(c, qp, p->psn, r->atom[i].orig);
				return;
			}
		drop(c, MWP_DROP_DUPLICATE);	/* too old to replay */
		return;
	}
	/* SEND, WRITE: acknowledge everything received so far */
	owe_ack(c, qp, (r->epsn - 1) & ROCE_PSN_MASK);
}

/* ---- the per-packet path ---- */

/* Every verdict but GO, once: rq, b: what the burst found for the packet
 * (its key's descriptor, still valid); checked: the descriptor the checks
 * used, which a denial counts against. */
static __rte_noinline void
resp_verdict(struct mwp_resp_ctx *c, struct mwp_qp *qp, struct rte_mbuf *m,
	     const struct mwp_pkt *p, const struct mwp_resp_req *rq,
	     const struct mwp_binding *b, const struct mwp_binding *checked,
	     struct mwp_verdict v)
{
	struct mwp_resp *r = &qp->resp;

	switch (v.kind) {
	case MWP_V_DROP:
		drop(c, v.code);
		break;
	case MWP_V_AHEAD:
		/* one sequence-error NAK per gap */
		if (!r->nak_seq) {
			mwp_resp_answer(c, qp, ROCE_OP_RC_ACKNOWLEDGE, ROCE_AETH_NAK_PSN_SEQ,
					r->epsn, 0);
			r->nak_seq = 1;
		}
		drop(c, MWP_DROP_PSN_AHEAD);
		break;
	case MWP_V_DUPLICATE:
		duplicate(c, qp, p, rq, b);
		break;
	default:	/* DENY, INVALID, RNR */
		mwp_resp_refuse(c, qp, p->psn, v, checked, m, p);
		break;
	}
}

/* The first request of a burst on an RC QP says where its answers go:
 * the request's addresses mirrored.  The headers of the answers are made
 * again only when the peer's addresses or port change (mwp_flow_mirror zeroes
 * the padding).  UC sends no answers. */
static inline void
resp_flow(struct mwp_resp_ctx *c, struct mwp_resp *r, const struct rte_mbuf *m,
	  const struct mwp_pkt *p)
{
	struct mwp_flow f;

	mwp_flow_mirror(&f, m, p, c->port->ecn);
	if (unlikely(memcmp(&f, &r->flow, sizeof(f)) != 0 || !r->tmpl.len)) {
		r->flow = f;
		mwp_flow_tmpl_make(&r->tmpl, &r->flow);
	}
	r->flow_gen = c->gen;
}

/* A request the checks so far accept: its operation's checks
 * (roce_resp_check.h), then its execution.  rq, b: what the burst found
 * for it; a: what the checks find. */
static __rte_always_inline struct mwp_verdict
resp_request(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	     const struct mwp_pkt *p, const struct mwp_resp_req *rq,
	     const struct mwp_binding *b, struct mwp_resp_access *a)
{
	struct mwp_verdict v;

	if (p->mask & ROCE_M_WRITE) {
		v = check_write(c, qp, p, rq, b, a);
		if (likely(v.kind == MWP_V_GO))
			exec_write(c, qp, m, p, a);
		return v;
	}
	if (p->mask & ROCE_M_READ) {
		v = check_read(qp, rq, b, a);
		return v.kind == MWP_V_GO ? exec_read(c, qp, p, a) : v;
	}
	if (p->mask & ROCE_M_ATOMIC) {
		if (unlikely(p->mask & ROCE_M_ATOMIC_WRITE)) {
			a->b = b;	/* what a refusal counts against */
			return resp_atomic_write(c, qp, m, p, rq, b);
		}
		v = check_atomic(qp, rq, b, a);
		if (v.kind == MWP_V_GO)
			exec_atomic(c, qp, m, p, a);
		return v;
	}
	v = check_send(qp, p);
	return v.kind == MWP_V_GO ? exec_send(c, qp, m, p) : v;
}

/* One packet of a QP this lcore runs: checked and executed, or its
 * verdict dispatched: accepted (executed or answered), or counted once
 * by drop().  rq: what the burst found for it. */
static inline void
resp_packet(struct mwp_resp_ctx *c, struct mwp_qp *qp, struct rte_mbuf *m,
	    const struct mwp_pkt *p, const struct mwp_resp_req *rq)
{
	const struct mwp_binding *b = mwp_resp_still_valid(c, rq->b);
	const bool rc = qp->ibqp.qp_type == IBV_QPT_RC;
	struct mwp_resp *r = &qp->resp;
	struct mwp_resp_access a;
	struct mwp_verdict v;

	r->st.rx_pkts++;
	r->st.rx_bytes += rte_pktmbuf_pkt_len(m);
	a.b = NULL;
	a.host = NULL;
	v = check_qp(qp, p);
	if (likely(v.kind == MWP_V_GO)) {
		if (rc && r->flow_gen != c->gen)
			resp_flow(c, r, m, p);
		v = mwp_resp_check(qp, p, rc);
	}
	if (likely(v.kind == MWP_V_GO))
		v = resp_request(c, qp, m, p, rq, b, &a);
	if (unlikely(v.kind != MWP_V_GO))
		resp_verdict(c, qp, m, p, rq, b, a.b, v);
}

unsigned int
mwp_resp_requests(struct mwp_resp_ctx *c, struct rte_mbuf *const *pkts,
		  const struct mwp_pkt *p, const struct mwp_resp_req *rq, uint16_t n)
{
	const uint16_t dropped = c->nb_dropped;

	for (uint16_t i = 0; i < n; i++) {
		/* a source that guessed too often, on the queue that saw it
		 * refused (the QP's owner): nothing of it is looked at */
		if (unlikely(c->guard->nb_blocked != 0) &&
		    mwp_guard_blocked_frame(c->guard, pkts[i], &p[i], mwp_resp_now(c))) {
			drop(c, MWP_DROP_GUESSING);
			continue;
		}
		resp_packet(c, rq[i].qp, pkts[i], &p[i], &rq[i]);
	}
	/* accepted: acted on (executed or answered), not dropped */
	return n - (uint16_t)(c->nb_dropped - dropped);
}
