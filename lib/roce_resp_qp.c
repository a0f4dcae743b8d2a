/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's per-packet path for one QP, in the check order of IBA
 * 9.7 and Linux rxe's rxe_resp.c: QP state, transport, PSN (duplicates
 * re-answered, a PSN ahead of expected draws one sequence-error NAK),
 * opcode sequence, QP access flags, then per operation the decision of
 * memory-windows.md section 3 and the execution, and the answer.
 *
 * Runs on the lcore that owns the QP; no locks, no logging, no
 * allocation but response mbufs.  The one exception is a SEND with
 * invalidate, which tries the device lock to revoke a key (rare), and
 * never waits for it: held by a control thread, the packet is dropped
 * before anything changes (inv_busy) and the requester sends it again.
 */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ip.h>
#include <rte_memcpy.h>
#include <rte_ring_elem.h>
#include <rte_udp.h>

#include "mwp_engine.h"
#include "mwp_tsan.h"
#include "roce_icrc.h"
#include "roce_req.h"
#include "roce_resp_priv.h"

/* ---- execution ---- */

/* 16 to 64 bytes (most WRITE and SEND payloads at a high packet rate):
 * four 16-byte moves whose destinations may overlap. */
static __rte_always_inline void
copy_16_64(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	const uint32_t h = len > 32 ? 16 : 0;

	rte_mov16(dst, src);
	rte_mov16(dst + h, src + h);
	rte_mov16(dst + len - 16 - h, src + len - 16 - h);
	rte_mov16(dst + len - 16, src + len - 16);
}

/* Copy len payload bytes starting at off (may span segments) to dst. */
static __rte_noinline void
copy_payload_any(uint8_t *dst, const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	if (likely(off + len <= m->data_len)) {
		rte_memcpy(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), len);
		return;
	}
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t n = RTE_MIN(len, (uint32_t)m->data_len - off);

		memcpy(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		dst += n;
		len -= n;
		off = 0;
		m = m->next;
	}
}

/* The same, inline for a short payload in the first segment. */
static __rte_always_inline void
copy_payload(uint8_t *dst, const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	if (likely(len - 16 <= 64 - 16 && off + len <= m->data_len))	/* 16..64 */
		copy_16_64(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), len);
	else
		copy_payload_any(dst, m, off, len);
}

static void
exec_atomic(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	    const struct mwp_pkt *p, const struct mwp_binding *b)
{
	const struct roce_atmeth *a = mwp_pkt_eh(m, p, ROCE_EH_ATMETH);
	struct mwp_access_req q = {
		.rkey = atmeth_rkey(a), .access = IBV_ACCESS_REMOTE_ATOMIC,
		.va = atmeth_va(a), .len = 8, .pd = qp->ibqp.pd->handle,
		.qpn = qp->ibqp.qp_num,
	};
	struct mwp_resp *r = &qp->resp;
	enum mwp_deny d;
	uint64_t *word, orig;
	uint8_t *host;

	d = mwp_access_decide(b, &q, &host);
	if (d != MWP_DENY_NONE) {
		mwp_resp_deny(c, qp, p->psn, d, b);
		return;
	}
	allowed(b);
	word = (uint64_t *)(void *)host;
	if (p->opcode == ROCE_OP_RC_FETCH_ADD) {
		orig = __atomic_fetch_add(word, atmeth_swap_add(a), __ATOMIC_SEQ_CST);
	} else {
		orig = atmeth_compare(a);
		/* on failure orig receives the current value */
		__atomic_compare_exchange_n(word, &orig, atmeth_swap_add(a), false,
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

static void
exec_read(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct mwp_pkt *p,
	  const struct mwp_resp_req *rq, const struct mwp_binding *b)
{
	struct mwp_access_req q = {
		.rkey = rq->rkey, .access = IBV_ACCESS_REMOTE_READ,
		.va = rq->va, .len = rq->len, .pd = qp->ibqp.pd->handle,
		.qpn = qp->ibqp.qp_num,
	};
	const uint32_t mtu = mwp_qp_mtu_bytes(qp);
	struct mwp_resp *r = &qp->resp;
	enum mwp_deny d;
	uint8_t *host;
	uint32_t npkt;

	d = mwp_access_decide(b, &q, &host);
	if (d != MWP_DENY_NONE) {
		mwp_resp_deny(c, qp, p->psn, d, b);
		return;
	}
	if (q.len != 0)
		allowed(b);
	/* more READs outstanding than the QP allows: invalid request */
	if (r->rd_count >= RTE_MAX(qp->max_dest_rd_atomic, 1)) {
		mwp_resp_nak_fatal(c, qp, p->psn, ROCE_AETH_NAK_INV_REQ);
		return;
	}
	/* answers stay in PSN order: the ACK owed for what came before
	 * goes first (now, or from the queue behind earlier READs) */
	resp_flush_ack(c, qp);
	if (!mwp_resp_queue_read(qp, q.va, q.rkey, (uint32_t)q.len, p->psn, true, host, c->gen)) {
		mwp_resp_nak_fatal(c, qp, p->psn, ROCE_AETH_NAK_INV_REQ);
		return;
	}
	npkt = q.len == 0 ? 1 : (uint32_t)((q.len + mtu - 1) / mtu);
	r->epsn = (r->epsn + npkt) & ROCE_PSN_MASK;
	r->msn = (r->msn + 1) & ROCE_PSN_MASK;
	mwp_resp_read_pump(c, qp);
}

static void
exec_write(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	   const struct mwp_pkt *p, const struct mwp_resp_req *rq,
	   const struct mwp_binding *b)
{
	struct mwp_resp *r = &qp->resp;
	const bool first = p->mask & ROCE_M_START, last = p->mask & ROCE_M_END;
	struct mwp_access_req q = {
		.access = IBV_ACCESS_REMOTE_WRITE, .pd = qp->ibqp.pd->handle,
		.qpn = qp->ibqp.qp_num,
	};
	enum mwp_deny d;
	uint8_t *host;

	/* WITH_IMMEDIATE consumes a receive: none posted is RNR, before
	 * any other check (rxe's CHK_RESOURCE) and before any byte moves */
	if ((p->mask & ROCE_M_IMM) && rte_ring_count(qp->rq) == 0) {
		mwp_resp_rnr(c, qp, p->psn);
		return;
	}
	if (first) {
		q.rkey = rq->rkey;
		q.va = rq->va;
		q.len = rq->len;
	} else {
		/* every packet re-checks the key, with the VA and the
		 * remaining length carried from the first */
		q.rkey = r->w_rkey;
		q.va = r->w_va;
		q.len = r->w_left;
		b = mwp_keys_lookup(c->port->keys, q.rkey);
	}
	d = mwp_access_decide(b, &q, &host);
	if (d == MWP_DENY_NONE)
		d = mwp_write_len_check(first, last, p->payload_len, q.len,
					mwp_qp_mtu_bytes(qp));
	if (d != MWP_DENY_NONE) {
		mwp_resp_deny(c, qp, p->psn, d, b);
		return;
	}
	if (p->payload_len != 0) {
		allowed(b);
		copy_payload(host, m, p->payload_off, p->payload_len);
	}
	r->epsn = (r->epsn + 1) & ROCE_PSN_MASK;
	if (!last) {
		/* what the next packet of the message continues from */
		if (first)
			r->w_total = (uint32_t)q.len;
		r->w_rkey = q.rkey;
		r->w_va = q.va + p->payload_len;
		r->w_left = q.len - p->payload_len;
		r->in_msg = ROCE_M_WRITE;
	} else {
		r->in_msg = 0;
		r->msn = (r->msn + 1) & ROCE_PSN_MASK;
	}
	if (p->mask & ROCE_M_IMM) {
		struct mwp_rwqe rw;

		if (rte_ring_dequeue_elem(qp->rq, &rw, sizeof(rw)) == 0) {
			MWP_TSAN_ACQUIRE(qp->rq);
			mwp_qp_recv_done(qp, &rw, IBV_WC_RECV_RDMA_WITH_IMM,
				first ? (uint32_t)q.len : r->w_total,
				IBV_WC_WITH_IMM,
				((const struct roce_immdt *)mwp_pkt_eh(m, p, ROCE_EH_IMMDT))->imm,
				IBV_WC_SUCCESS);
		}
	}
	if (qp->ibqp.qp_type == IBV_QPT_RC)
		owe_ack(c, qp, p->psn);
}

/* ---- SEND and receives ---- */

/* Scatter a SEND packet's payload into the receive's SGEs, after what
 * earlier packets placed.  Each SGE must name a region of the QP's PD
 * with local write, and stay inside it. */
static bool
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
		return false;
	for (uint32_t i = 0; i < r->recv.num_sge && done < len; i++) {
		const struct ibv_sge *sg = &r->recv.sge[i];
		uint8_t *host;
		uint32_t n;

		if (skip >= sg->length) {
			skip -= sg->length;
			continue;
		}
		n = RTE_MIN(sg->length - skip, len - done);
		host = mwp_local_addr(mwp_keys_lookup(c->port->keys, sg->lkey),
				      qp->ibqp.pd->handle, sg->addr + skip, n, true);
		if (host == NULL)
			return false;
		copy_payload(host, m, p->payload_off + done, n);
		done += n;
		skip = 0;
	}
	if (done < len)
		return false;	/* the message is longer than the receive */
	r->recv_len += len;
	return true;
}

static void
exec_send_locked(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
		 const struct mwp_pkt *p)
{
	struct mwp_resp *r = &qp->resp;
	const bool rc = qp->ibqp.qp_type == IBV_QPT_RC, last = p->mask & ROCE_M_END;
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	unsigned int flags = 0;
	uint32_t imm_inv = 0;

	if (p->mask & ROCE_M_START) {
		/* a broken UC message left its receive for this one */
		if (!r->recv_held) {
			if (rte_ring_dequeue_elem(qp->rq, &r->recv, sizeof(r->recv)) != 0) {
				mwp_resp_rnr(c, qp, p->psn);
				return;
			}
			MWP_TSAN_ACQUIRE(qp->rq);
			r->recv_held = 1;
		}
		r->recv_len = 0;
	}
	if (!place_recv(c, qp, m, p)) {
		/* local length or protection error: the receive completes in
		 * error and the requester hears an invalid request */
		r->in_msg = 0;
		r->recv_held = 0;
		mwp_qp_recv_done(qp, &r->recv, IBV_WC_RECV, r->recv_len, 0, 0,
				 IBV_WC_LOC_LEN_ERR);
		if (rc)
			mwp_resp_nak_fatal(c, qp, p->psn, ROCE_AETH_NAK_INV_REQ);
		else
			drop(c, MWP_DROP_UC_DISCARD);
		return;
	}
	r->in_msg = last ? 0 : ROCE_M_SEND;
	r->epsn = (r->epsn + 1) & ROCE_PSN_MASK;
	if (!last) {
		if (rc)
			owe_ack(c, qp, p->psn);
		return;
	}
	if (p->mask & ROCE_M_IMM) {
		flags = IBV_WC_WITH_IMM;
		imm_inv = ((const struct roce_immdt *)mwp_pkt_eh(m, p, ROCE_EH_IMMDT))->imm;
	} else if (p->mask & ROCE_M_INV) {
		/* section 4: after placing the data */
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
	mwp_qp_recv_done(qp, &r->recv, IBV_WC_RECV, r->recv_len, flags, imm_inv, status);
	if (status != IBV_WC_SUCCESS)
		/* never "success" for a bad invalidation (rxe ACKs it) */
		mwp_resp_nak_fatal(c, qp, p->psn, ROCE_AETH_NAK_INV_REQ);
	else if (rc)
		owe_ack(c, qp, p->psn);
}

/* A SEND; the packet that invalidates (SEND LAST/ONLY with invalidate,
 * RC only) runs under the device lock, which the lcore only tries: a
 * control thread changing windows or regions holds it for microseconds,
 * and the lcore does not wait for it.  The packet is dropped unanswered
 * with nothing changed (no receive taken, no byte placed, the PSN still
 * expected), and the requester's retry brings it again. */
static void
exec_send(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	  const struct mwp_pkt *p)
{
	pthread_mutex_t *lock = &qp->dev->lock;

	if (likely(!(p->mask & ROCE_M_INV))) {
		exec_send_locked(c, qp, m, p);
		return;
	}
	if (pthread_mutex_trylock(lock) != 0) {
		drop(c, MWP_DROP_INV_BUSY);
		return;
	}
	exec_send_locked(c, qp, m, p);
	pthread_mutex_unlock(lock);
}

/* ---- duplicates (RC): re-answered, never re-executed (IBA 9.9.2) ---- */

static void
duplicate(struct mwp_resp_ctx *c, struct mwp_qp *qp, const struct rte_mbuf *m,
	  const struct mwp_pkt *p, const struct mwp_binding *b)
{
	struct mwp_resp *r = &qp->resp;

	r->st.duplicates++;
	c->st->duplicates++;
	if (p->mask & ROCE_M_READ) {
		const struct roce_reth *h = mwp_pkt_eh(m, p, ROCE_EH_RETH);
		struct mwp_access_req q = {
			.rkey = reth_rkey(h), .access = IBV_ACCESS_REMOTE_READ,
			.va = reth_va(h), .len = reth_dmalen(h),
			.pd = qp->ibqp.pd->handle, .qpn = qp->ibqp.qp_num,
		};
		uint8_t *host;

		/* re-read memory under a fresh key check */
		if (mwp_access_decide(b, &q, &host) == MWP_DENY_NONE) {
			resp_flush_ack(c, qp);
			mwp_resp_queue_read(qp, q.va, q.rkey, (uint32_t)q.len, p->psn, false,
					    host, c->gen);
			mwp_resp_read_pump(c, qp);
		} else {
			drop(c, MWP_DROP_DUPLICATE);
		}
		return;
	}
	if (p->mask & ROCE_M_ATOMIC) {
		for (unsigned int i = 0; i < MWP_ATOMIC_CACHE; i++)
			if (r->atom[i].valid && r->atom[i].psn == p->psn) {
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

/* A descriptor resolved at the start of the burst, unless its key was
 * revoked since (rare: look it up again). */
static inline const struct mwp_binding *
still_valid(const struct mwp_resp_ctx *c, const struct mwp_binding *b)
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

/* Returns true if the packet was accepted (executed or answered), false if
 * it was counted in st->drop.  rq: what the first pass found for it. */
static inline bool
resp_packet(struct mwp_resp_ctx *c, struct mwp_qp *qp, struct rte_mbuf *m,
	    const struct mwp_pkt *p, const struct mwp_resp_req *rq)
{
	const struct mwp_binding *b = rq->b;
	struct mwp_resp *r = &qp->resp;
	const bool rc = qp->ibqp.qp_type == IBV_QPT_RC;
	enum ibv_qp_state st = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE);
	uint32_t d, want;

	c->dropped = 0;
	r->st.rx_pkts++;
	r->st.rx_bytes += rte_pktmbuf_pkt_len(m);
	b = still_valid(c, b);
	/* The responder works from RTR on; after a fatal NAK it is silent. */
	if (unlikely((st != IBV_QPS_RTR && st != IBV_QPS_RTS) || r->err)) {
		drop(c, MWP_DROP_QP_STATE);
		return !c->dropped;
	}
	/* a request of the QP's transport; or, on RC, an answer to our own
	 * requests: the requester's (roce_req.c) */
	if (unlikely(roce_opcode_transport(p->opcode) != qp->transport ||
		     !(p->mask & ROCE_M_REQ))) {
		if (rc && (p->mask & ROCE_M_RESP) &&
		    roce_opcode_transport(p->opcode) == ROCE_TRANSPORT_RC) {
			enum mwp_drop e = mwp_req_rx(c, qp, m, p);

			r->st.acks_rx++;
			if (e != MWP_DROP_NONE)
				drop(c, e);
			return !c->dropped;
		}
		drop(c, MWP_DROP_WRONG_TRANSPORT);
		return !c->dropped;
	}

	/* Answers go where this QP's requests come from: mirrored once per
	 * QP per burst (UC sends none). */
	if (rc && r->flow_gen != c->gen) {
		struct mwp_flow f;

		/* the answers' headers are made again only when the peer's
		 * addresses or port change (mirror_flow zeroes the padding) */
		mwp_resp_mirror_flow(&f, m, p);
		if (unlikely(memcmp(&f, &r->flow, sizeof(f)) != 0 || !r->tmpl.len)) {
			r->flow = f;
			mwp_answer_tmpl_make(&r->tmpl, &r->flow);
		}
		r->flow_gen = c->gen;
	}

	/* PSN (RC: IBA 9.7.5.1.1; UC: 9.7.5.1.2) */
	d = (p->psn - r->epsn) & ROCE_PSN_MASK;
	if (rc) {
		if (unlikely(d != 0)) {
			if (d < (ROCE_PSN_MASK + 1) / 2) {
				/* ahead: one sequence-error NAK per gap */
				if (!r->nak_seq) {
					mwp_resp_answer(c, qp, ROCE_OP_RC_ACKNOWLEDGE,
							ROCE_AETH_NAK_PSN_SEQ, r->epsn, 0);
					r->nak_seq = 1;
				}
				drop(c, MWP_DROP_PSN_AHEAD);
			} else {
				duplicate(c, qp, m, p, b);
			}
			return !c->dropped;
		}
		r->nak_seq = 0;
	} else if (d != 0) {
		/* UC: a lost packet breaks the message; a new one may start
		 * at any PSN */
		r->in_msg = 0;
		if (!(p->mask & ROCE_M_START)) {
			drop(c, MWP_DROP_UC_DISCARD);
			return !c->dropped;
		}
		r->epsn = p->psn;
	}

	/* opcode sequence: inside a message only its MIDDLE/LAST may come;
	 * outside one, only a FIRST or ONLY */
	want = r->in_msg;
	if (unlikely(want ? !(p->mask & want) || (p->mask & ROCE_M_START) :
			   !(p->mask & ROCE_M_START))) {
		if (rc) {
			mwp_resp_nak_fatal(c, qp, p->psn, ROCE_AETH_NAK_INV_REQ);
		} else {
			r->in_msg = 0;
			drop(c, MWP_DROP_UC_DISCARD);
		}
		return !c->dropped;
	}

	/* step 1: the QP's own access flags, before any key work */
	want = p->mask & ROCE_M_WRITE ? IBV_ACCESS_REMOTE_WRITE :
	       p->mask & ROCE_M_READ ? IBV_ACCESS_REMOTE_READ :
	       p->mask & ROCE_M_ATOMIC ? IBV_ACCESS_REMOTE_ATOMIC : 0;
	if (want != 0 && mwp_qp_access_check(qp->access_flags, want) != MWP_DENY_NONE) {
		mwp_resp_deny(c, qp, p->psn, MWP_DENY_QP_ACCESS, NULL);
		return !c->dropped;
	}

	if (p->mask & ROCE_M_WRITE) {
		exec_write(c, qp, m, p, rq, b);
	} else if (p->mask & ROCE_M_READ) {
		exec_read(c, qp, p, rq, b);
	} else if (p->mask & ROCE_M_ATOMIC) {
		exec_atomic(c, qp, m, p, b);
	} else {
		exec_send(c, qp, m, p);
	}
	return !c->dropped;
}

/* A frame the parser rejected as not IP or not UDP: the control path's
 * (ARP, ND, ICMP echo), answered here off the RoCE path.  true: taken. */
static __rte_noinline bool
ctrl_frame(struct mwp_resp_ctx *c, const struct rte_mbuf *m)
{
	struct mwp_ctrl_ctx *cx = &c->q->ctrl;
	struct rte_mbuf *r;

	cx->mp = c->port->mp;
	if (!mwp_ctrl_input(cx, m, c->q->eng->now, &r))
		return false;
	c->st->ctrl++;
	if (r != NULL) {
		if (c->nb_tx < c->tx_room) {
			mwp_resp_queue_frame(c, r, 0);
		} else {
			rte_pktmbuf_free(r);
			c->st->drop[MWP_DROP_TX_FULL]++;
		}
	}
	return true;
}

void
mwp_resp_run(struct mwp_resp_ctx *c, struct rte_mbuf *const *pkts,
	     const struct mwp_pkt *p, const enum mwp_drop *why,
	     const struct mwp_resp_req *rq, uint16_t n)
{
	struct mwp_stats *st = c->st;
	uint64_t accepted = 0;

	for (uint16_t i = 0; i < n; i++) {
		enum mwp_drop e = why[i];

		if (likely(e == MWP_DROP_NONE)) {
			if (unlikely(p[i].opcode == ROCE_OP_CNP))
				e = MWP_DROP_CNP;
			else if (unlikely(rq[i].qp == NULL))
				e = MWP_DROP_UNKNOWN_QP;
		}
		if (unlikely(e != MWP_DROP_NONE)) {
			if ((e == MWP_DROP_NOT_IP || e == MWP_DROP_NOT_UDP) &&
			    ctrl_frame(c, pkts[i]))
				continue;
			st->drop[e]++;
			continue;
		}
		/* a QP another queue's engine owns is run there alone */
		if (unlikely(rq[i].qp->owner != c->q && rq[i].qp->owner != NULL)) {
			MWP_TSAN_RELEASE(rq[i].qp->owner->handoff);
			if (rte_ring_mp_enqueue(rq[i].qp->owner->handoff, pkts[i]) == 0) {
				c->taken |= UINT64_C(1) << i;
				c->q->handoff_out++;
			} else {
				st->drop[MWP_DROP_HANDOFF_FULL]++;
			}
			continue;
		}
		/* accepted: acted on (executed or answered), not dropped */
		accepted += resp_packet(c, rq[i].qp, pkts[i], &p[i], &rq[i]);
	}
	st->accepted += accepted;
}
