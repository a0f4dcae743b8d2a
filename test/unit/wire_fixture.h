/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_WIRE_FIXTURE_H
#define MWP_TEST_WIRE_FIXTURE_H

/*
 * A wire for the verbs fixture's QPs: a port (02:00:00:00:00:01,
 * 192.0.2.1, 2001:db8::1), an engine run by the test thread, and its
 * queue 0.  wire_pump() is one pass of the engine and the queue at a
 * clock the test moves (wire.now); every frame sent is parsed and kept in
 * wire.frames.  The peer is the test: it answers (wire_ack, wire_nak,
 * wire_read_resp, wire_atomic_ack) through mwp_queue_rx, or, with
 * wire.auto_answer, every request is acknowledged, READs answered with
 * zeros, ATOMICs with wire.atomic_orig and ATOMIC WRITEs with a
 * zero-length READ RESPONSE ONLY as soon as it is sent.
 */

#include <rte_cycles.h>

#include "verbs_fixture.h"
#include "mwp_engine_priv.h"
#include "roce_req.h"

#define WIRE_MAX_FRAMES 8192

/* A frame the QPs sent, as parsed. */
struct wire_frame {
	uint8_t opcode;
	uint32_t psn, dqpn, sqpn;	/* sqpn: from the UDP source port */
	bool ackreq;
	uint64_t va;			/* RETH or AtomicETH */
	uint32_t rkey, dmalen;
	uint64_t swap_add, compare;
	uint8_t syndrome;		/* AETH */
	uint64_t orig;			/* AtomicAckETH */
	uint32_t payload_len;
	uint8_t payload[64];		/* its first bytes */
	uint32_t qkey, deth_sqpn;	/* DETH */
	uint8_t dmac[6];
	uint8_t dip[16];		/* IPv6, or IPv4-mapped */
	uint8_t tos, ttl;		/* IPv4 TOS, TTL / traffic class, hop limit */
	uint32_t flow_label;		/* IPv6 */
	bool ipv6;
	uint64_t when;			/* wire.now when it was sent */
	uint32_t len;			/* frame bytes */
};

static struct {
	struct mwp_port *port;
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;
	uint64_t now;
	uint64_t hz;
	bool auto_answer;
	uint64_t atomic_orig;
	struct wire_frame frames[WIRE_MAX_FRAMES];
	unsigned int nb_frames;
	unsigned int answered;		/* frames auto_answer has seen */
	uint32_t msn;
} wire;

#define PEER_MAC "02:00:00:00:00:02"

static inline struct ibv_qp *
wire_qp_by_num(uint32_t qpn)
{
	struct mwp_qp *m = mwp_port_qp(wire.port, qpn);

	return m != NULL ? &m->ibqp : NULL;
}

/* Attach a QP (in RTS) to the wire, its peer's MAC set (no ARP). */
static inline void
wire_attach(struct ibv_qp *q)
{
	struct rte_ether_addr mac;

	rte_ether_unformat_addr(PEER_MAC, &mac);
	mwp_engine_stop(wire.eng);
	FIX_ASSERT(mwp_qp_set_peer_mac(q, &mac) == 0);
	FIX_ASSERT(mwp_port_attach_qp(wire.port, q) == 0);
	mwp_engine_start(wire.eng);
}

static inline void
wire_parse(const struct rte_mbuf *m, struct wire_frame *f)
{
	struct mwp_pkt p;
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *bth;
	const struct roce_opcode_info *op;

	memset(f, 0, sizeof(*f));
	f->len = rte_pktmbuf_pkt_len(m);
	f->when = wire.now;
	memcpy(f->dmac, d, 6);
	if (mwp_parse(m, &p) != MWP_DROP_NONE) {
		f->opcode = 0xff;	/* not RoCE: ARP, ND... */
		return;
	}
	bth = d + p.bth_off;
	op = &roce_opcode[p.opcode];
	f->opcode = p.opcode;
	f->psn = p.psn;
	f->dqpn = p.qpn;
	f->sqpn = ((uint32_t)d[p.l4_off] << 8 | d[p.l4_off + 1]) & 0x3fff;
	f->ackreq = bth_ackreq((const struct roce_bth *)bth);
	f->ipv6 = p.flags & MWP_PKT_IPV6;
	f->tos = p.tos;
	if (f->ipv6) {
		const uint8_t *l3 = d + p.l3_off;

		f->flow_label = ((uint32_t)(l3[1] & 0xf) << 16) | (uint32_t)l3[2] << 8 | l3[3];
		f->ttl = l3[7];
		memcpy(f->dip, l3 + 24, 16);
	} else {
		f->ttl = d[p.l3_off + 8];
		f->dip[10] = f->dip[11] = 0xff;
		memcpy(f->dip + 12, d + p.l3_off + 16, 4);
	}
	if (op->mask & ROCE_M_DETH) {
		const struct roce_deth *e = (const void *)roce_op_eh(bth, op, ROCE_EH_DETH);

		f->qkey = deth_qkey(e);
		f->deth_sqpn = deth_sqpn(e);
	}
	if (op->mask & ROCE_M_RETH) {
		const struct roce_reth *r = (const void *)roce_op_eh(bth, op, ROCE_EH_RETH);

		f->va = reth_va(r);
		f->rkey = reth_rkey(r);
		f->dmalen = reth_dmalen(r);
	}
	if (op->mask & ROCE_M_ATMETH) {
		const struct roce_atmeth *a = (const void *)roce_op_eh(bth, op, ROCE_EH_ATMETH);

		f->va = atmeth_va(a);
		f->rkey = atmeth_rkey(a);
		f->swap_add = atmeth_swap_add(a);
		f->compare = atmeth_compare(a);
	}
	if (op->mask & ROCE_M_AETH)
		f->syndrome = aeth_syndrome((const void *)roce_op_eh(bth, op, ROCE_EH_AETH));
	if (op->mask & ROCE_M_ATMACK)
		f->orig = atmack_orig((const void *)roce_op_eh(bth, op, ROCE_EH_ATMACK));
	f->payload_len = p.payload_len;
	memcpy(f->payload, d + p.payload_off, RTE_MIN((uint32_t)p.payload_len, 64u));
}

/* The flow from the peer to the QP that sent f. */
static inline void
wire_peer_flow(const struct wire_frame *f, struct mwp_flow *fl)
{
	memset(fl, 0, sizeof(*fl));
	rte_ether_unformat_addr(PEER_MAC, &fl->smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &fl->dmac);
	fl->ipv6 = f->ipv6;
	inet_pton(AF_INET, "192.0.2.2", &fl->sip4);
	inet_pton(AF_INET, "192.0.2.1", &fl->dip4);
	inet_pton(AF_INET6, "::ffff:192.0.2.2", fl->sip6);
	inet_pton(AF_INET6, "2001:db8::1", fl->dip6);
	fl->sport = 0xd000;
}

/* A request from the peer to the fixture's QP q, h's fields (dqpn set
 * here), with len bytes of fill: in an mbuf of the test pool. */
static inline struct rte_mbuf *
wire_request(const struct ibv_qp *q, struct mwp_hdrs h, uint8_t fill, uint32_t len)
{
	static uint8_t data[4096];
	struct wire_frame pf = { .sqpn = q->qp_num };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	FIX_ASSERT(m != NULL && len <= sizeof(data));
	memset(data, fill, len);
	wire_peer_flow(&pf, &fl);
	h.dqpn = q->qp_num;
	FIX_ASSERT(mwp_build(m, &fl, &h, data, len, NULL) == 0);
	return m;
}

static inline void wire_pump(void);

/* Hand frames from the peer to the queue; what it sends back is kept. */
static inline void
wire_feed(struct rte_mbuf **m, uint16_t n)
{
	struct rte_mbuf *tx[64];
	uint16_t k = mwp_queue_rx(wire.q, m, n, tx, 64);

	for (uint16_t i = 0; i < k; i++) {
		if (wire.nb_frames < WIRE_MAX_FRAMES)
			wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
}

/* An ACKNOWLEDGE (ACK, NAK or RNR NAK by syndrome) to QP qpn at psn. */
static inline void
wire_aeth(uint32_t qpn, uint32_t psn, uint8_t syndrome)
{
	struct wire_frame f = { .sqpn = qpn };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	FIX_ASSERT(m != NULL);
	wire_peer_flow(&f, &fl);
	FIX_ASSERT(mwp_build_ack(m, &fl, qpn, psn, syndrome, wire.msn++) == 0);
	wire_feed(&m, 1);
}

static inline void
wire_ack(uint32_t qpn, uint32_t psn)
{
	wire_aeth(qpn, psn, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID);
}

/* A READ response packet: opcode, its PSN and payload. */
static inline void
wire_read_resp(uint32_t qpn, uint8_t opcode, uint32_t psn, const void *data, uint32_t len)
{
	struct wire_frame f = { .sqpn = qpn };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	FIX_ASSERT(m != NULL);
	wire_peer_flow(&f, &fl);
	FIX_ASSERT(mwp_build_read_resp(m, &fl, opcode, qpn, psn,
				       ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
				       wire.msn++, data, len) == 0);
	wire_feed(&m, 1);
}

static inline void
wire_atomic_ack(uint32_t qpn, uint32_t psn, uint64_t orig)
{
	struct wire_frame f = { .sqpn = qpn };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	FIX_ASSERT(m != NULL);
	wire_peer_flow(&f, &fl);
	FIX_ASSERT(mwp_build_atomic_ack(m, &fl, qpn, psn, wire.msn++, orig) == 0);
	wire_feed(&m, 1);
}

/* Answer a READ request frame completely, with zeros. */
static inline void
wire_answer_read(const struct wire_frame *f, uint32_t mtu)
{
	static const uint8_t zeros[4096];
	uint32_t left = f->dmalen, psn = f->psn;
	bool first = true;

	do {
		uint32_t n = RTE_MIN(left, mtu);
		bool last = left <= mtu;
		uint8_t op = first ? (last ? ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
				      ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST) :
			     (last ? ROCE_OP_RC_RDMA_READ_RESPONSE_LAST :
			      ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);

		wire_read_resp(f->sqpn, op, psn, zeros, n);
		left -= n;
		psn = (psn + 1) & 0xffffff;
		first = false;
	} while (left != 0);
}

/* What auto_answer does for each request frame. */
static inline void
wire_auto(void)
{
	while (wire.answered < wire.nb_frames) {
		struct wire_frame f = wire.frames[wire.answered++];
		const uint32_t mask = roce_opcode[f.opcode].mask;

		if (f.opcode == 0xff || !(mask & ROCE_M_REQ) || f.opcode >= 0x20)
			continue;	/* not an RC request */
		if (mask & ROCE_M_READ)
			wire_answer_read(&f, 1024);
		else if (mask & ROCE_M_ATOMIC_WRITE)
			wire_read_resp(f.sqpn, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, f.psn, NULL, 0);
		else if (mask & ROCE_M_ATOMIC)
			wire_atomic_ack(f.sqpn, f.psn, wire.atomic_orig);
		else if (f.ackreq)
			wire_ack(f.sqpn, f.psn);
	}
}

/* One pass: the clock moves 1 us, the device's QPs without a running
 * engine (mwp_poll), the engine, the queue's frames. */
static inline void
wire_pump(void)
{
	struct rte_mbuf *tx[64];
	uint16_t n;

	wire.now += wire.hz / 1000000;
	mwp_poll(ctx);
	mwp_engine_run(wire.eng, wire.now);
	n = mwp_queue_tx(wire.q, tx, 64);
	for (uint16_t i = 0; i < n; i++) {
		if (wire.nb_frames < WIRE_MAX_FRAMES)
			wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
	if (wire.auto_answer)
		wire_auto();
}

/* Move the clock by us microseconds, pumping every 10 us of it. */
static inline void
wire_advance_us(uint64_t us)
{
	for (uint64_t t = 0; t < us; t += 10) {
		wire.now += wire.hz / 100000 - wire.hz / 1000000;
		wire_pump();
	}
}

static inline int
wire_poll_fn(void)
{
	wire_pump();
	return 0;
}

/* The port's guessing defence ([security] guess_*): off unless a test
 * sets these before wire_setup. */
static uint32_t wire_guess_threshold, wire_guess_block_ms;

/* The port's congestion control: all zeros (ECT(0), no CNPs, no DCQCN)
 * unless a test sets it before wire_setup. */
static struct mwp_port_cc wire_cc;

/* The host keeps the port's addresses (the exception path): off unless a
 * test sets it before wire_setup. */
static bool wire_host_path;

/* The kernel resolves the port's neighbours (net_af_xdp): off unless a
 * test sets it before wire_setup. */
static bool wire_kernel_neigh;

/* The verbs fixture, its two RC QPs on the wire. */
static inline void
wire_setup(void)
{
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true, .has_ipv6 = true,
				    .guess_threshold = wire_guess_threshold,
				    .guess_block_ms = wire_guess_block_ms, .cc = wire_cc,
				    .host_path = wire_host_path,
				    .kernel_neigh = wire_kernel_neigh };

	verbs_setup();
	memset(&wire, 0, sizeof(wire));
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	inet_pton(AF_INET6, "2001:db8::1", pc.ipv6);
	wire.port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	FIX_ASSERT(wire.port != NULL);
	mwp_port_set_mempool(wire.port, test_mp);
	wire.eng = mwp_engine_create(0, SOCKET_ID_ANY);
	FIX_ASSERT(wire.eng != NULL);
	wire.q = mwp_queue_create(wire.eng, wire.port, 0, &wire.st);
	FIX_ASSERT(wire.q != NULL);
	wire.hz = rte_get_tsc_hz();
	wire.now = rte_rdtsc();
	mwp_engine_start(wire.eng);
	wire_attach(qp);
	wire_attach(qp_b);
	fixture_poll = wire_poll_fn;
}

static inline void
wire_teardown(void)
{
	fixture_poll = NULL;
	mwp_engine_stop(wire.eng);
	mwp_close_device(ctx);
	mwp_queue_free(wire.q);
	FIX_ASSERT(mwp_engine_free(wire.eng) == 0);
	mwp_port_free(wire.port);
	free(buf);
	free(buf2);
}

#endif
