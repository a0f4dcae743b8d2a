/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_prefetch.h>

#include "mwp_engine_priv.h"
#include "mwp_mbuf.h"
#include "mwp_priv.h"
#include "roce_icrc_burst.h"
#include "roce_parse_inline.h"
#include "roce_resp.h"
#include "roce_resp_ctx.h"

/* A RoCE NIC answers only what is addressed to it.  A port with no IP
 * address configured accepts any destination (replays of foreign traffic).
 * A parsed frame (first byte at d, IP header at l3_off) has its headers in
 * its first segment, so its first eight bytes can be read as one. */
static __rte_always_inline enum mwp_drop
check_dest(const struct mwp_port *port, const uint8_t *d, uint32_t l3_off, bool ipv6)
{
	const struct mwp_port_conf *c = &port->conf;
	uint64_t dst;

	memcpy(&dst, d, sizeof(dst));
	if (((dst ^ port->dest_mac) & port->dest_mac_mask) != 0)
		return MWP_DROP_NOT_FOR_US;
	if (port->dest_any_ip)
		return MWP_DROP_NONE;
	if (ipv6) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(d + l3_off);

		if (!c->has_ipv6 || memcmp(ip6->dst_addr, c->ipv6, 16) != 0)
			return MWP_DROP_NOT_FOR_US;
	} else {
		const struct rte_ipv4_hdr *ip4 = (const struct rte_ipv4_hdr *)(d + l3_off);

		if (!c->has_ipv4 || ip4->dst_addr != c->ipv4)
			return MWP_DROP_NOT_FOR_US;
	}
	return MWP_DROP_NONE;
}

/* A WRITE's later packet names no key: it goes on with its first
 * packet's, which its QP carries (the message's next VA with it).  Read
 * only on the queue that runs the QP; if the first packet is in this
 * burst too, the key found for it serves (roce_resp_check.h). */
static __rte_always_inline bool
continued_rkey(const struct mwp_queue *self, const struct mwp_qp *qp, struct mwp_resp_req *q)
{
	if ((qp->owner != &self->own && qp->owner != NULL) || qp->resp.in_msg != ROCE_M_WRITE)
		return false;
	q->rkey = qp->resp.w_rkey;
	q->va = qp->resp.w_va;
	q->len = 0;
	return true;
}

/* The R_Key, address and length a request names in its RETH or
 * AtomicETH (bth: its BTH; op: its opcode's entry), or that a WRITE's
 * later packet goes on with (continued_rkey), if any. */
static __rte_always_inline bool
request_rkey(const struct mwp_queue *self, const uint8_t *bth,
	     const struct roce_opcode_info *op, struct mwp_resp_req *q)
{
	const struct roce_reth *reth = (const void *)roce_op_eh(bth, op, ROCE_EH_RETH);
	const struct roce_atmeth *atm;

	if (reth != NULL && (op->mask & ROCE_M_REQ)) {
		q->rkey = reth_rkey(reth);
		q->va = reth_va(reth);
		q->len = reth_dmalen(reth);
		return true;
	}
	atm = (const void *)roce_op_eh(bth, op, ROCE_EH_ATMETH);
	if (atm != NULL) {
		q->rkey = atmeth_rkey(atm);
		q->va = atmeth_va(atm);
		q->len = sizeof(uint64_t);
		return true;
	}
	return (op->mask & ROCE_M_WRITE) && q->qp != NULL && continued_rkey(self, q->qp, q);
}

/*
 * The rest of the first pass on queue self for a parsed frame (op: its
 * opcode's entry; its IP header at l3_off, its BTH at bth_off): its L2/L3
 * destination, its ICRC lane (*alone: the set cannot take it), its QP and
 * the R_Key it names.  Whether the QP exists and whether the frame is a CNP count only
 * for frames whose ICRC is good, so those verdicts wait (mwp_resp_run).
 * Inlined after each parser; after the fast one the layout arguments are
 * constants.
 */
static __rte_always_inline enum mwp_drop
admit(const struct mwp_queue *self, struct mwp_port *port, const struct rte_mbuf *m,
      const struct mwp_pkt *p, const struct roce_opcode_info *op, uint32_t l3_off, uint32_t bth_off, bool ipv6,
      struct mwp_icrc_set *ics, uint16_t i, struct mwp_resp_req *q, bool *alone)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	enum mwp_drop e = check_dest(port, d, l3_off, ipv6);

	if (unlikely(e != MWP_DROP_NONE)) {
		q->has_key = false;
		return e;
	}
	*alone = !mwp_icrc_set_add_at(ics, m, d, l3_off, p->icrc_off, ipv6, i);
	q->qp = mwp_port_qp(port, p->qpn);
	q->has_key = request_rkey(self, d + bth_off, op, q);
	return MWP_DROP_NONE;
}

/* Start loading the memory a request will touch, once its key b is
 * found (habit: prefetch across the burst).  The address is not checked
 * here: a prefetch of a bad one does nothing, and the access decision
 * comes later; it is computed in integers, as a pointer past its object
 * would be undefined (UBSan's pointer-overflow).  (A zero-based binding's va is 0.) */
static inline void
prefetch_target(const struct mwp_binding *b, uint64_t va, uint32_t mask)
{
	const void *host = (const void *)((uintptr_t)b->host + (uintptr_t)(va - b->va));

	if (mask & (ROCE_M_WRITE | ROCE_M_ATOMIC))
		rte_prefetch0_write(host);
	else
		rte_prefetch0(host);
}

/* The scalars of a burst's context; its arrays are written before they
 * are read (zeroing them all would cost more than some stages). */
void
mwp_resp_ctx_init(struct mwp_resp_ctx *c, struct mwp_queue *q, struct rte_mbuf **tx,
		  uint16_t tx_room)
{
	mwp_tx_init(&c->tx, tx, tx_room, q->port->mp, q->st);
	c->q = q;
	c->port = q->port;
	c->st = q->st;
	c->nb_dirty = 0;
	c->gen = 0;
	c->dropped = 0;
	c->taken = 0;
	c->nb_revoked = 0;
}

/* Free the frames of a burst, but for those handed to another queue. */
static void
free_burst(struct rte_mbuf **pkts, uint16_t n, uint64_t taken)
{
	struct rte_mbuf *rest[MWP_BURST_MAX];
	uint16_t k = 0;

	if (likely(taken == 0)) {
		mwp_mbuf_free_burst(pkts, n);
		return;
	}
	for (uint16_t i = 0; i < n; i++)
		if (!((taken >> i) & 1))
			rest[k++] = pkts[i];
	mwp_mbuf_free_burst(rest, k);
}

/* A burst received on q (handed: by another queue, which counted it
 * received). */
static uint16_t
burst(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n, struct rte_mbuf **tx,
      uint16_t tx_room, bool handed)
{
	struct mwp_port *port = q->port;
	struct mwp_stats *st = q->st;
	struct mwp_pkt p[MWP_BURST_MAX];
	enum mwp_drop why[MWP_BURST_MAX];
	struct mwp_resp_req rq[MWP_BURST_MAX];
	const struct mwp_binding *keyd[MWP_BURST_MAX];
	const void *keyp[MWP_BURST_MAX];
	uint32_t sig[MWP_BURST_MAX];
	struct mwp_icrc_set ics;
	struct mwp_resp_ctx c;
	uint64_t bytes = 0;
	uint16_t nb_keys = 0, alone[MWP_BURST_MAX], nb_alone = 0;
	/* wider than an R_Key, so that no key equals it before the first */
	uint64_t last_key = UINT64_MAX;
	bool shared = false;	/* a lookup slot serves a run of requests */

	RTE_BUILD_BUG_ON(MWP_BURST_MAX > RTE_HASH_LOOKUP_BULK_MAX);
	RTE_ASSERT(n <= MWP_BURST_MAX);
	if (unlikely(n == 0))
		return 0;
	mwp_resp_ctx_init(&c, q, tx, tx_room);
	c.gen = ++q->bursts;

	/* One pass over the frames: parse, the L2/L3 destination, the ICRC
	 * lane, the QP, and the R_Key the request names.  Whether the QP
	 * exists and whether the frame is a CNP count only for frames whose
	 * ICRC is good, so those verdicts wait until after it
	 * (mwp_resp_run). */
	mwp_icrc_set_init(&ics);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct roce_opcode_info *op;
		enum mwp_drop e;
		bool alone_crc = false;

		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		bytes += rte_pktmbuf_pkt_len(m);
		rq[i].b = NULL;
		op = mwp_parse_fast(m, &p[i]);
		if (likely(op != NULL)) {
			e = admit(q, port, m, &p[i], op, MWP_PARSE_FAST_L3, MWP_PARSE_FAST_BTH,
				  false, &ics, i, &rq[i], &alone_crc);
		} else {
			/* called, not inlined: rare, and inlined it left the
			 * fast path short of registers */
			e = mwp_parse(m, &p[i]);
			rq[i].has_key = false;	/* admit says, if it is called */
			if (e == MWP_DROP_NONE)
				e = admit(q, port, m, &p[i], &roce_opcode[p[i].opcode], p[i].l3_off,
					  p[i].bth_off, (p[i].flags & MWP_PKT_IPV6) != 0,
					  &ics, i, &rq[i], &alone_crc);
		}
		why[i] = e;
		/* a frame the set cannot take is checked alone, after the
		 * loop: keeping that call out of it lets the set's count
		 * stay in a register */
		if (unlikely(alone_crc))
			alone[nb_alone++] = i;
		/* a key the previous request named too (a stream to one
		 * window) is looked up once */
		if (rq[i].has_key) {
			if (rq[i].rkey != last_key) {
				last_key = rq[i].rkey;
				keyp[nb_keys] = &rq[i].rkey;
				sig[nb_keys++] = mwp_keys_sig(rq[i].rkey);
			} else {
				shared = true;
			}
		}
	}
	if (likely(!handed)) {
		st->rx_pkts += n;
		st->rx_bytes += bytes;
	}
	mwp_icrc_set_check(&ics, why);
	for (uint16_t j = 0; j < nb_alone; j++)
		if (!mwp_icrc_ok(pkts[alone[j]], &p[alone[j]]))
			why[alone[j]] = MWP_DROP_BAD_ICRC;

	/* every key of the burst in one bulk lookup (habit 7), then the
	 * memory the requests name on its way in */
	if (nb_keys != 0 && port->keys != NULL) {
		uint64_t hits = mwp_keys_lookup_bulk(port->keys, keyp, sig, nb_keys, keyd);

		if (likely(!shared)) {
			/* one lookup slot per request */
			for (uint16_t i = 0, k = 0; i < n; i++)
				if (rq[i].has_key) {
					if ((hits >> k) & 1) {
						rq[i].b = keyd[k];
						prefetch_target(rq[i].b, rq[i].va, p[i].mask);
					}
					k++;
				}
		} else {
			/* runs of one key share a slot, as they were made */
			for (uint16_t i = 0, k = 0; i < n; i++)
				if (rq[i].has_key) {
					if (keyp[k] != &rq[i].rkey &&
					    rq[i].rkey != *(const uint32_t *)keyp[k])
						k++;
					if ((hits >> k) & 1) {
						rq[i].b = keyd[k];
						prefetch_target(rq[i].b, rq[i].va, p[i].mask);
					}
				}
		}
	}
	mwp_resp_run(&c, pkts, p, why, rq, n);
	/* one coalesced ACK per QP that accepted requests in this burst */
	for (uint16_t i = 0; i < c.nb_dirty; i++)
		mwp_resp_flush_ack(&c, c.dirty[i]);
	free_burst(pkts, n, c.taken);
	mwp_tx_finish(&c.tx);
	return c.tx.n;
}

uint16_t
mwp_resp_burst(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n,
	       struct rte_mbuf **tx, uint16_t tx_room)
{
	return burst(q, pkts, n, tx, tx_room, false);
}

/* Frames another queue handed over (mwp_queue_tx). */
uint16_t
mwp_resp_burst_handed(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n,
		      struct rte_mbuf **tx, uint16_t tx_room)
{
	return burst(q, pkts, n, tx, tx_room, true);
}
