/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A queue's rx (mwp_queue_rx): every burst a queue receives comes in here
 * and is sorted by kind, each kind to its one home --
 *
 *   malformed, not for this port, bad ICRC   counted by reason, dropped
 *   not IP or not UDP (ARP, ND, ICMP echo)    the control path (mwp_ctrl)
 *   not RoCE, on a port whose host keeps      the host's kernel (the
 *     its addresses                           exception path: mwp_queue_
 *                                             host_take), after the
 *                                             control path learnt from it
 *   for no QP of the port                     the guessing defence
 *                                             (mwp_guard), then dropped
 *   CNP for a QP                              its congestion control
 *                                             (cc/mwp_cc.c: DCQCN)
 *   CNP for no QP                             counted
 *   for a QP another queue runs               that queue's hand-off ring
 *   RoCE request                              the responder (resp/)
 *   UD SEND (with a DETH)                     the responder's UD home
 *                                             (resp/roce_resp_ud.c)
 *   RoCE response or ACK, RC                  the requester's completer
 *                                             (req/roce_comp.c)
 *
 * One pass over the burst parses each frame, checks that it is for this
 * port, adds it to the ICRC set and finds its QP; the responder notes the
 * R_Key a request names, while the frame is in cache.  Then every ICRC at
 * once, every noted key in one lookup, and the frames to their homes in
 * burst order: a run of consecutive requests goes to the responder in
 * one call, any other frame is taken between runs.  The usual burst --
 * requests only, for QPs this queue runs, all of them good -- is known
 * so from the pass, and goes to the responder whole.  A new kind of
 * frame gets its home here.
 *
 * A frame for a QP of this queue that came marked CE (a switch on the way
 * was congested) is also congestion control's, after its home has taken
 * it: a CNP to its sender joins the answers.
 *
 * Every frame is counted once: accepted (handed to its QP, executed or
 * answered), taken by the control path, passed to the host, or dropped by
 * reason.  Every mbuf is freed here, but for those handed over or set
 * aside for the host.
 */
#include <string.h>

#include <rte_ip.h>
#include <rte_prefetch.h>

#include "mwp_cc.h"
#include "mwp_engine_priv.h"
#include "mwp_mbuf.h"
#include "roce_icrc_burst.h"
#include "roce_parse_inline.h"
#include "roce_req.h"
#include "roce_resp.h"

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

/*
 * The rest of the pass for a parsed frame (op: its opcode's entry; its IP
 * header at l3_off, its BTH at bth_off): its L2/L3 destination, its ICRC
 * lane (*alone: the set cannot take it), its QP and the R_Key a request
 * names; *plain: it is a request for a QP this queue runs, the
 * responder's if its ICRC is good; bit i of *ce: it came marked CE.
 * Whether the QP exists and whether the frame is a CNP count only for
 * frames whose ICRC is good, so those verdicts wait (sort).  Inlined
 * after each parser; after the fast one the layout arguments are
 * constants.
 */
static __rte_always_inline enum mwp_drop
admit(const struct mwp_queue *q, const struct rte_mbuf *m, const struct mwp_pkt *p,
      const struct roce_opcode_info *op, uint32_t l3_off, uint32_t bth_off, bool ipv6,
      struct mwp_icrc_set *ics, uint16_t i, struct mwp_resp_req *rq,
      struct mwp_resp_keys *keys, struct mwp_resp_noted *nt, bool *alone, bool *plain,
      uint64_t *ce)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	enum mwp_drop e = check_dest(q->port, d, l3_off, ipv6);
	struct mwp_qp *qp;

	if (unlikely(e != MWP_DROP_NONE)) {
		rq->has_key = false;
		return e;
	}
	*alone = !mwp_icrc_set_add_at(ics, m, d, l3_off, p->icrc_off, ipv6, i);
	*ce |= (uint64_t)((p->tos & ROCE_ECN_MASK) == ROCE_ECN_CE) << i;
	rq->qp = qp = mwp_port_qp(q->port, p->qpn);
	mwp_resp_note(&q->own, d + bth_off, op, rq, keys, nt);
	/* an RC or UC request (a UD SEND has a home of its own) */
	*plain = likely(qp != NULL) && likely(op->mask & ROCE_M_CONN) &&
		 likely(qp->owner == &q->own || qp->owner == NULL);
	return MWP_DROP_NONE;
}

/* A frame the parser rejected as not IP or not UDP: the control path's
 * (ARP, ND, ICMP echo), answered off the RoCE path.  true: taken. */
static __rte_noinline bool
ctrl_frame(struct mwp_queue *q, struct mwp_tx *tx, const struct rte_mbuf *m)
{
	struct rte_mbuf *r;

	q->ctrl.mp = q->port->mp;
	if (!mwp_ctrl_input(&q->ctrl, m, q->eng->s.now, &r))
		return false;
	q->st->ctrl++;
	if (r != NULL)
		mwp_tx_queue_made(tx, r);
	return true;
}

/* Is a frame the parser refused as e one for the host's kernel, on a port
 * whose host keeps its addresses: not RoCE (ARP, ND, TCP, ICMP, other
 * UDP), to the port's MAC or a group address? */
static inline bool
for_host(const struct mwp_port *port, const struct rte_mbuf *m, enum mwp_drop e)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint64_t dst;

	if (!port->conf.host_path || rte_pktmbuf_data_len(m) < sizeof(dst))
		return false;
	if (e != MWP_DROP_NOT_IP && e != MWP_DROP_NOT_UDP && e != MWP_DROP_NOT_ROCE_PORT &&
	    e != MWP_DROP_IP_FRAGMENT && e != MWP_DROP_IPV4_OPTIONS)
		return false;
	memcpy(&dst, d, sizeof(dst));
	return (d[0] & 1) != 0 || ((dst ^ port->dest_mac) & port->dest_mac_mask) == 0;
}

/* A frame for the host's kernel: the control path learns who is where
 * from it (ARP, ND), and it waits in the queue's host buffer for the
 * poller to pass it to the kernel.  true: taken (not freed here). */
static __rte_noinline bool
host_frame(struct mwp_queue *q, struct rte_mbuf *m)
{
	struct rte_mbuf *r;

	q->ctrl.mp = q->port->mp;
	mwp_ctrl_input(&q->ctrl, m, q->eng->s.now, &r);
	rte_pktmbuf_free(r);	/* learn_only: none is made */
	if (unlikely(q->nb_host == RTE_DIM(q->host))) {
		q->st->drop[MWP_DROP_HOST_FULL]++;
		return false;
	}
	q->host[q->nb_host++] = m;
	q->st->host++;
	return true;
}

/* A frame for a QP that does not exist: a QPN guess, counted against its
 * source as a refusal is (a scan of QPNs reaches the threshold as a scan
 * of keys does); from a blocked source it is one of its drops. */
static __rte_noinline enum mwp_drop
unknown_qp(struct mwp_queue *q, const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const uint64_t now = q->eng->s.now;
	uint8_t ip[16];

	if (mwp_guard_blocked_frame(&q->guard, m, p, now))
		return MWP_DROP_GUESSING;
	mwp_guard_refused(&q->guard, mwp_pkt_src_ip(m, p, ip), now);
	return MWP_DROP_UNKNOWN_QP;
}

/* A frame for a QP another queue's engine runs: to that queue, which
 * processes it alone (mwp_queue_tx).  true: handed over. */
static __rte_noinline bool
hand_over(struct mwp_queue *q, const struct mwp_owner *to, struct rte_mbuf *m)
{
	struct mwp_queue *dst = mwp_queue_of(to);

	MWP_TSAN_RELEASE(dst->handoff);
	if (rte_ring_mp_enqueue(dst->handoff, m) != 0) {
		q->st->drop[MWP_DROP_HANDOFF_FULL]++;
		return false;
	}
	q->handoff_out++;
	return true;
}

/* An RC QP's answer to its own requests (an ACK, a NAK, a READ response,
 * an ATOMIC ACK): the completer's.  A response to a UC QP, like a request
 * of the wrong transport, is the responder's to refuse. */
static __rte_always_inline bool
is_response(const struct mwp_qp *qp, const struct mwp_pkt *p)
{
	return unlikely(p->mask & ROCE_M_RESP) && qp->transport == ROCE_TRANSPORT_RC &&
	       roce_opcode_transport(p->opcode) == ROCE_TRANSPORT_RC;
}

/* A response, to the completer: true if accepted.  A blocked source's
 * frames are dropped here as its requests are by the responder. */
static __rte_noinline bool
response(struct mwp_queue *q, struct mwp_qp *qp, const struct rte_mbuf *m,
	 const struct mwp_pkt *p)
{
	enum mwp_drop e;

	if (mwp_guard_blocked_frame(&q->guard, m, p, q->eng->s.now))
		e = MWP_DROP_GUESSING;
	else
		e = mwp_comp_rx(qp, m, p);
	if (e == MWP_DROP_NONE)
		return true;
	q->st->drop[e]++;
	return false;
}

/* The run of requests that ends before frame end, to the responder. */
static inline unsigned int
run_out(struct mwp_resp_ctx *c, struct rte_mbuf *const *pkts, const struct mwp_pkt *p,
	const struct mwp_resp_req *rq, uint16_t *start, uint16_t end)
{
	const uint16_t first = *start;

	*start = end + 1;
	if (first == end)
		return 0;
	return mwp_resp_requests(c, pkts + first, p + first, rq + first, end - first);
}

/*
 * Each frame of the burst to its home, in burst order: the responder
 * takes a run of consecutive requests at a time (the usual burst, all
 * requests, in one call), and the run ends at any other frame -- before
 * its home answers (a control path reply leaves after the answers to the
 * requests before it) or changes what the requests see (the completer;
 * the guard, which a frame for no QP may make block its source).
 * Returns the frames accepted; *taken: those handed over (bit i).
 */
static unsigned int
sort(struct mwp_queue *q, struct mwp_resp_ctx *c, struct rte_mbuf *const *pkts,
     const struct mwp_pkt *p, const enum mwp_drop *why, const struct mwp_resp_req *rq,
     uint16_t n, uint64_t *taken)
{
	struct mwp_stats *st = q->st;
	unsigned int accepted = 0;
	uint16_t start = 0;	/* the run: frames start .. i - 1 */

	for (uint16_t i = 0; i < n; i++) {
		struct mwp_qp *qp = rq[i].qp;
		enum mwp_drop e = why[i];

		if (likely(e == MWP_DROP_NONE)) {
			if (unlikely(p[i].opcode == ROCE_OP_CNP) && qp == NULL)
				e = MWP_DROP_CNP;
			else if (unlikely(qp == NULL))
				e = MWP_DROP_UNKNOWN_QP;
			else if (likely(qp->owner == &q->own || qp->owner == NULL) &&
				 likely(!is_response(qp, &p[i])) &&
				 likely(!(p[i].mask & (ROCE_M_DETH | ROCE_M_CNP))))
				continue;	/* a request: the run goes on */
		}
		accepted += run_out(c, pkts, p, rq, &start, i);
		if (unlikely(e != MWP_DROP_NONE)) {
			if (for_host(q->port, pkts[i], e)) {
				if (host_frame(q, pkts[i]))
					*taken |= UINT64_C(1) << i;
				continue;
			}
			if ((e == MWP_DROP_NOT_IP || e == MWP_DROP_NOT_UDP) &&
			    ctrl_frame(q, &c->tx, pkts[i]))
				continue;
			if (e == MWP_DROP_UNKNOWN_QP)
				e = unknown_qp(q, pkts[i], &p[i]);
			st->drop[e]++;
		} else if (qp->owner != &q->own && qp->owner != NULL) {
			if (hand_over(q, qp->owner, pkts[i]))
				*taken |= UINT64_C(1) << i;
		} else if (unlikely(p[i].opcode == ROCE_OP_CNP)) {
			mwp_cc_cnp(q->port, qp, q->eng->s.now, st);
			accepted++;
		} else if (p[i].mask & ROCE_M_DETH) {
			accepted += mwp_resp_ud(c, qp, pkts[i], &p[i]);
		} else {
			accepted += response(q, qp, pkts[i], &p[i]);
		}
	}
	return accepted + run_out(c, pkts, p, rq, &start, n);
}

/* The frames of the burst marked CE (bit i of ce), their homes done: for
 * each one that was for a QP of this queue, with its ICRC good, a CNP to
 * its sender (those handed over are the other queue's to answer). */
static __rte_noinline void
congested(struct mwp_queue *q, struct mwp_tx *tx, struct rte_mbuf *const *pkts,
	  const struct mwp_pkt *p, const enum mwp_drop *why, const struct mwp_resp_req *rq,
	  uint64_t ce, uint64_t taken)
{
	for (ce &= ~taken; ce != 0; ce &= ce - 1) {
		const unsigned int i = (unsigned int)__builtin_ctzll(ce);
		struct mwp_qp *qp = rq[i].qp;

		if (why[i] != MWP_DROP_NONE || qp == NULL || p[i].opcode == ROCE_OP_CNP ||
		    (qp->owner != &q->own && qp->owner != NULL))
			continue;
		mwp_cc_ce(tx, q->port, qp, pkts[i], &p[i], q->eng->s.now, q->st);
	}
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

/* Where a burst comes from: what rx counts and checks of it. */
enum rx_from {
	RX_WIRE,	/* the port's rx queue: counted received, ICRCs checked */
	RX_OWN,		/* the port's frames to itself (the polling thread's
			 * loop): counted received; their ICRCs were made in
			 * this process and nothing touched them since */
	RX_HANDED,	/* another queue's, which counted them received and
			 * checked their ICRCs before it handed them over */
};

/* A burst received on q, from where `from' says. */
static uint16_t
rx(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n, struct rte_mbuf **txm,
   uint16_t tx_room, enum rx_from from)
{
	struct mwp_stats *st = q->st;
	struct mwp_pkt p[MWP_BURST_MAX];
	enum mwp_drop why[MWP_BURST_MAX];
	struct mwp_resp_req rq[MWP_BURST_MAX];
	struct mwp_resp_keys keys;
	struct mwp_resp_noted nt = MWP_RESP_NOTED_INIT;
	struct mwp_icrc_set ics;
	struct mwp_resp_ctx c;
	uint64_t bytes = 0, taken = 0, ce = 0;
	uint16_t alone[MWP_BURST_MAX], nb_alone = 0, nb_plain = 0, bad;

	RTE_BUILD_BUG_ON(MWP_BURST_MAX > MWP_RESP_BURST_MAX);
	RTE_BUILD_BUG_ON(MWP_BURST_MAX > 64);	/* taken is a 64-bit set */
	RTE_ASSERT(n <= MWP_BURST_MAX);
	if (unlikely(n == 0))
		return 0;

	/* One pass over the frames: parse, the L2/L3 destination, the ICRC
	 * lane, the QP, and the R_Key a request names. */
	mwp_icrc_set_init(&ics);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct roce_opcode_info *op;
		enum mwp_drop e;
		bool alone_crc = false, req = false;

		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		bytes += rte_pktmbuf_pkt_len(m);
		rq[i].b = NULL;
		op = mwp_parse_fast(m, &p[i]);
		if (likely(op != NULL)) {
			e = admit(q, m, &p[i], op, MWP_PARSE_FAST_L3, MWP_PARSE_FAST_BTH, false,
				  &ics, i, &rq[i], &keys, &nt, &alone_crc, &req, &ce);
		} else {
			/* called, not inlined: rare, and inlined it left the
			 * fast path short of registers */
			e = mwp_parse(m, &p[i]);
			rq[i].has_key = false;	/* admit says, if it is called */
			if (e == MWP_DROP_NONE)
				e = admit(q, m, &p[i], &roce_opcode[p[i].opcode], p[i].l3_off,
					  p[i].bth_off, (p[i].flags & MWP_PKT_IPV6) != 0,
					  &ics, i, &rq[i], &keys, &nt, &alone_crc, &req, &ce);
		}
		why[i] = e;
		nb_plain += req;
		/* a frame the set cannot take is checked alone, after the
		 * loop: keeping that call out of it lets the set's count
		 * stay in a register */
		if (unlikely(alone_crc))
			alone[nb_alone++] = i;
	}
	if (likely(from != RX_HANDED)) {
		st->rx_pkts += n;
		st->rx_bytes += bytes;
	}
	bad = 0;
	if (likely(from == RX_WIRE)) {
		bad = mwp_icrc_set_check(&ics, why);
		for (uint16_t j = 0; j < nb_alone; j++)
			if (!mwp_icrc_ok(pkts[alone[j]], &p[alone[j]])) {
				why[alone[j]] = MWP_DROP_BAD_ICRC;
				bad++;
			}
	}

	mwp_resp_ctx_init(&c, &q->resp, txm, tx_room, true);
	mwp_resp_keys(&c, &keys, nt, p, rq, n);
	/* the usual burst: requests only, for QPs this queue runs, every
	 * ICRC good -- all to the responder at once */
	if (likely(bad == 0 && nb_plain == n))
		st->accepted += mwp_resp_requests(&c, pkts, p, rq, n);
	else
		st->accepted += sort(q, &c, pkts, p, why, rq, n, &taken);
	mwp_resp_flush(&c);
	/* after the answers: a CNP says something about the path, not
	 * about the requests */
	if (unlikely(ce != 0))
		congested(q, &c.tx, pkts, p, why, rq, ce, taken);
	free_burst(pkts, n, taken);
	mwp_tx_finish(&c.tx);
	return c.tx.n;
}

uint16_t
mwp_queue_rx(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n, struct rte_mbuf **tx,
	     uint16_t tx_room)
{
	return rx(q, pkts, n, tx, tx_room, RX_WIRE);
}

uint16_t
mwp_queue_rx_own(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n, struct rte_mbuf **tx,
		 uint16_t tx_room)
{
	return rx(q, pkts, n, tx, tx_room, RX_OWN);
}

uint16_t
mwp_queue_rx_handed(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n,
		    struct rte_mbuf **tx, uint16_t tx_room)
{
	return rx(q, pkts, n, tx, tx_room, RX_HANDED);
}
