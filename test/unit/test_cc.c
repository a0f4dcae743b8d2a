/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control on the test wire (wire_fixture.h, its port's
 * congestion control set by each test through wire_cc):
 *
 *   - what the port's frames carry in their IP TOS: the AV's DSCP (or the
 *     request's, for an answer) and the port's ECN codepoint (ECT(0),
 *     ECT(1) or none), in requests, ACKs and READ responses;
 *   - the notification point (lib/cc/mwp_cc.c): a frame for a QP marked
 *     CE is counted and answered with a CNP to its sender's QP (opcode
 *     0x81, BECN, 16 zero bytes, a good ICRC, the port's CNP DSCP, not
 *     ECN-capable), at most one per QP per min_time_between_cnps; the
 *     frame itself is served as ever; no CNP without notify, for a frame
 *     with a bad ICRC or for a CNP;
 *   - the reaction point: a CNP for a QP is counted and cuts its DCQCN
 *     rate (about half the line rate with the defaults), a CNP for no QP
 *     is dropped as MWP_DROP_CNP, and the pacer spaces the QP's requests
 *     at its rate; without react the QP keeps sending back to back.
 */
#include <math.h>

#include "wire_fixture.h"
#include "mwp_cc.h"
#include "roce_icrc.h"

#define REMOTE_VA	UINT64_C(0x7000000)
#define REMOTE_RKEY	0x4242
#define PEER_QPN	0x99		/* the fixture QPs' dest_qp_num */
#define CNP_DSCP	48

/* Every test sets wire_cc, then calls cc_setup: the suite has no .init. */
static void
cc_setup(void)
{
	wire_setup();
	wire_pump();	/* the engine's clock is the wire's from here */
}

TestSuite(cc, .fini = wire_teardown, .timeout = 60);

/* ---- frames the queue sends back, kept with what wire_frame leaves out ---- */

struct sent_raw {
	bool parsed;		/* mwp_parse took it */
	bool icrc_ok;		/* its ICRC is the one computed */
	uint16_t bth_off;
	uint32_t len;
	uint8_t b[160];		/* its first bytes */
};

static struct sent_raw sent[WIRE_MAX_FRAMES];

/* As wire_feed, but each frame sent back also has its ICRC checked and
 * its first bytes kept (sent[i] for wire.frames[i]) before it is freed. */
static void
feed_n(struct rte_mbuf **m, uint16_t n)
{
	struct rte_mbuf *tx[64];
	uint16_t k = mwp_queue_rx(wire.q, m, n, tx, 64);

	for (uint16_t i = 0; i < k; i++) {
		const unsigned int at = wire.nb_frames;
		struct sent_raw *s = &sent[at];
		struct mwp_pkt p;

		cr_assert_lt(at, WIRE_MAX_FRAMES);
		wire_parse(tx[i], &wire.frames[at]);
		wire.nb_frames++;
		memset(s, 0, sizeof(*s));
		s->len = rte_pktmbuf_pkt_len(tx[i]);
		memcpy(s->b, rte_pktmbuf_mtod(tx[i], const void *),
		       RTE_MIN(s->len, (uint32_t)sizeof(s->b)));
		if (mwp_parse(tx[i], &p) == MWP_DROP_NONE) {
			s->parsed = true;
			s->bth_off = p.bth_off;
			s->icrc_ok = mwp_icrc_ok(tx[i], &p);
		}
		rte_pktmbuf_free(tx[i]);
	}
}

static void
feed(struct rte_mbuf *m)
{
	feed_n(&m, 1);
}

static void
pump(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		wire_pump();
}

/* Frames of opcode sent from index from on: how many, the first in *first. */
static unsigned int
count_op(unsigned int from, uint8_t opcode, unsigned int *first)
{
	unsigned int k = 0;

	for (unsigned int i = from; i < wire.nb_frames; i++)
		if (wire.frames[i].opcode == opcode) {
			if (k == 0 && first != NULL)
				*first = i;
			k++;
		}
	return k;
}

static struct mwp_qp_info
info_of(struct ibv_qp *q)
{
	struct mwp_qp_info in;

	cr_assert_eq(mwp_qp_query_info(q, &in), 0);
	return in;
}

/* Frames the queue dropped, for any reason. */
static uint64_t
drops(void)
{
	uint64_t n = 0;

	for (int d = 0; d < MWP_DROP__MAX; d++)
		n += wire.st.drop[d];
	return n;
}

/* ---- frames from the peer ---- */

/* An RC WRITE ONLY (AckReq) of 8 bytes of v to buf + off for QP q, PSN
 * psn, with IP TOS tos, over IPv4 or IPv6. */
static struct rte_mbuf *
write_req(struct ibv_qp *q, uint32_t psn, uint8_t tos, bool ipv6, uint32_t off, uint8_t v)
{
	uint8_t data[8];
	struct wire_frame pf = { .sqpn = q->qp_num, .ipv6 = ipv6 };
	struct mwp_hdrs h = { .opcode = ROCE_OP_RC_RDMA_WRITE_ONLY, .dqpn = q->qp_num,
			      .psn = psn, .ackreq = true };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memset(data, v, sizeof(data));
	wire_peer_flow(&pf, &fl);
	fl.tos = tos;
	h.reth.va = (uintptr_t)buf + off;
	h.reth.rkey = mr->rkey;
	h.reth.dmalen = sizeof(data);
	cr_assert_eq(mwp_build(m, &fl, &h, data, sizeof(data), NULL), 0);
	return m;
}

/* An RC READ REQUEST of len bytes at buf + off for QP q, PSN psn, TOS tos. */
static struct rte_mbuf *
read_req(struct ibv_qp *q, uint32_t psn, uint8_t tos, uint32_t off, uint32_t len)
{
	struct wire_frame pf = { .sqpn = q->qp_num };
	struct mwp_hdrs h = { .opcode = ROCE_OP_RC_RDMA_READ_REQUEST, .dqpn = q->qp_num,
			      .psn = psn };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	wire_peer_flow(&pf, &fl);
	fl.tos = tos;
	h.reth.va = (uintptr_t)buf + off;
	h.reth.rkey = mr->rkey;
	h.reth.dmalen = len;
	cr_assert_eq(mwp_build(m, &fl, &h, NULL, 0, NULL), 0);
	return m;
}

/* A CNP (opcode 0x81, BECN, 16 zero bytes) for QP qpn, with IP TOS tos. */
static struct rte_mbuf *
cnp_to(uint32_t qpn, uint8_t tos)
{
	struct wire_frame pf = { 0 };
	struct mwp_hdrs h = { .opcode = ROCE_OP_CNP, .dqpn = qpn, .becn = true };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);
	struct mwp_pkt p;

	cr_assert_not_null(m);
	wire_peer_flow(&pf, &fl);
	fl.tos = tos;
	cr_assert_eq(mwp_build(m, &fl, &h, NULL, 0, &p), 0);
	/* 14 + 20 + 8 + 12 (BTH) + 16 (reserved) + 4 (ICRC) */
	cr_assert_eq(rte_pktmbuf_pkt_len(m), 74u, "a CNP over IPv4 is %u bytes",
		     rte_pktmbuf_pkt_len(m));
	return m;
}

/* ---- the QPs' requests ---- */

/* An RC QP on the wire in RTS, its AV's traffic class tclass. */
static struct ibv_qp *
rc_qp_tclass(uint8_t tclass)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	struct ibv_qp *q = mwp_create_qp(pd, &ia);
	struct ibv_qp_attr a = { 0 };

	cr_assert_not_null(q);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = REMOTE_ALL | IBV_ACCESS_LOCAL_WRITE;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.traffic_class = tclass;
	inet_pton(AF_INET6, "::ffff:192.0.2.2", a.ah_attr.grh.dgid.raw);
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = PEER_QPN;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC), 0);
	wire_attach(q);
	return q;
}

/* Post one signaled RDMA WRITE of len bytes from buf. */
static void
post_write(struct ibv_qp *q, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	wr.wr.rdma.remote_addr = REMOTE_VA;
	wr.wr.rdma.rkey = REMOTE_RKEY;
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
}

/* The TOS of the one WRITE ONLY q sends for a 100-byte WRITE. */
static uint8_t
write_tos(struct ibv_qp *q)
{
	const unsigned int from = wire.nb_frames;
	unsigned int at = 0;

	post_write(q, 1, 100);
	pump(3);
	cr_assert_eq(count_op(from, ROCE_OP_RC_RDMA_WRITE_ONLY, &at), 1,
		     "QP 0x%x sent no WRITE ONLY", q->qp_num);
	cr_assert_eq(wire.frames[at].sqpn, q->qp_num & 0x3fff);
	return wire.frames[at].tos;
}

/* The TOS of the ACK the fixture's qp sends for a WRITE (PSN psn) sent
 * with tos; the WRITE is executed. */
static uint8_t
ack_tos(uint32_t psn, uint8_t tos)
{
	const unsigned int from = wire.nb_frames;
	unsigned int at = 0;
	uint8_t v = (uint8_t)(0x30 + psn);

	feed(write_req(qp, psn, tos, false, 64 * psn, v));
	cr_assert_eq(count_op(from, ROCE_OP_RC_ACKNOWLEDGE, &at), 1, "no ACK for PSN %u", psn);
	cr_expect_eq(wire.frames[at].psn, psn);
	cr_expect_eq(wire.frames[at].dqpn, PEER_QPN);
	cr_expect_eq(wire.frames[at].syndrome & 0xe0, 0, "syndrome 0x%02x: not an ACK",
		     wire.frames[at].syndrome);
	cr_expect_eq(buf[64 * psn], v, "the WRITE of PSN %u was not executed", psn);
	return wire.frames[at].tos;
}

/* ---- 1. what the port's frames carry: DSCP and ECN ---- */

Test(cc, requests_carry_ect0_by_default_and_the_avs_dscp)
{
	struct ibv_qp *q68, *q6b;

	memset(&wire_cc, 0, sizeof(wire_cc));	/* ECT(0) */
	cc_setup();
	q68 = rc_qp_tclass(0x68);
	q6b = rc_qp_tclass(0x6b);	/* ECN bits in the AV: the port's win */
	cr_expect_eq(write_tos(qp), ROCE_ECN_ECT0, "the fixture QP (traffic class 0)");
	cr_expect_eq(write_tos(q68), 0x6a, "traffic class 0x68 with ECT(0)");
	cr_expect_eq(write_tos(q6b), 0x6a, "traffic class 0x6b: its ECN bits replaced");
}

Test(cc, answers_carry_the_requests_dscp_and_the_ports_ect0)
{
	unsigned int at = 0, from;

	memset(&wire_cc, 0, sizeof(wire_cc));
	cc_setup();
	memset(buf, 0, 4096);
	cr_expect_eq(ack_tos(0, 0x00), ROCE_ECN_ECT0, "request not ECN-capable, DSCP 0");
	cr_expect_eq(ack_tos(1, 0x69), 0x6a, "request ECT(1), DSCP 26");
	cr_expect_eq(ack_tos(2, 0x6a), 0x6a, "request ECT(0), DSCP 26");
	cr_expect_eq(ack_tos(3, 0xb8 | ROCE_ECN_CE), 0xba, "request CE: the answer is not CE");
	/* a READ response too */
	from = wire.nb_frames;
	feed(read_req(qp, 4, 0x28, 0, 64));
	cr_assert_eq(count_op(from, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, &at), 1);
	cr_expect_eq(wire.frames[at].tos, 0x2a, "READ response tos 0x%02x",
		     wire.frames[at].tos);
	cr_expect_eq(wire.frames[at].payload_len, 64);
}

Test(cc, with_ecn_off_requests_and_answers_are_not_ecn_capable)
{
	struct ibv_qp *q68, *q6b;

	memset(&wire_cc, 0, sizeof(wire_cc));
	wire_cc.ecn = MWP_ECN_MODE_OFF;
	cc_setup();
	q68 = rc_qp_tclass(0x68);
	q6b = rc_qp_tclass(0x6b);
	cr_expect_eq(write_tos(qp), 0x00);
	cr_expect_eq(write_tos(q68), 0x68);
	cr_expect_eq(write_tos(q6b), 0x68, "the AV's ECN bits sent with ECN off");
	memset(buf, 0, 4096);
	cr_expect_eq(ack_tos(0, 0x6a), 0x68);
	cr_expect_eq(ack_tos(1, 0x6b), 0x68);
}

Test(cc, with_ect1_requests_and_answers_carry_ect1)
{
	struct ibv_qp *q68;

	memset(&wire_cc, 0, sizeof(wire_cc));
	wire_cc.ecn = MWP_ECN_MODE_ECT1;
	cc_setup();
	q68 = rc_qp_tclass(0x68);
	cr_expect_eq(write_tos(qp), ROCE_ECN_ECT1);
	cr_expect_eq(write_tos(q68), 0x69);
	memset(buf, 0, 4096);
	cr_expect_eq(ack_tos(0, 0x6a), 0x69);
	cr_expect_eq(ack_tos(1, 0x00), 0x01);
}

/* ---- 2. the notification point ---- */

static void
notify_cc(uint32_t min_time_us)
{
	memset(&wire_cc, 0, sizeof(wire_cc));
	wire_cc.notify = true;
	wire_cc.cnp_dscp = CNP_DSCP;
	wire_cc.min_time_between_cnps = min_time_us;
}

/* Check that wire.frames[at] is a well-formed CNP to QP dqpn at the peer. */
static void
expect_cnp(unsigned int at, uint32_t dqpn, bool ipv6)
{
	const struct wire_frame *f = &wire.frames[at];
	const struct sent_raw *s = &sent[at];
	const uint8_t *bth = s->b + s->bth_off;
	static const uint8_t zeros[16];
	uint8_t peer_ip[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 2 };

	cr_expect_eq(f->opcode, ROCE_OP_CNP);
	cr_expect_eq(f->dqpn, dqpn, "CNP to QP 0x%x, want 0x%x", f->dqpn, dqpn);
	cr_expect_eq(f->tos, CNP_DSCP << 2, "CNP tos 0x%02x, want 0x%02x (DSCP %u, not ECT)",
		     f->tos, CNP_DSCP << 2, CNP_DSCP);
	cr_expect_eq(f->ipv6, ipv6);
	cr_expect_eq(memcmp(f->dmac, "\x02\x00\x00\x00\x00\x02", 6), 0, "CNP not to the peer's MAC");
	cr_expect_eq(memcmp(f->dip, peer_ip, 16), 0, "CNP not to the request's source IP");
	cr_expect_eq(f->psn, 0);
	cr_expect_eq(f->payload_len, 0);
	cr_expect_eq(f->len, ipv6 ? 94u : 74u, "CNP of %u bytes", f->len);
	cr_assert(s->parsed, "the CNP does not parse");
	cr_expect(s->icrc_ok, "the CNP's ICRC is wrong");
	cr_assert_leq(s->bth_off + 12u + 16u, sizeof(s->b));
	cr_expect_eq(bth[4] & ROCE_BTH_BECN, ROCE_BTH_BECN, "BECN not set (byte 0x%02x)", bth[4]);
	cr_expect_eq(bth[4] & ROCE_BTH_FECN, 0, "FECN set");
	cr_expect_eq((bth[2] << 8) | bth[3], 0xffff, "P_Key 0x%04x", (bth[2] << 8) | bth[3]);
	cr_expect_eq(memcmp(bth + 12, zeros, 16), 0, "the 16 reserved bytes are not zero");
}

Test(cc, a_request_marked_ce_gets_a_cnp_to_its_senders_qp_and_is_still_executed)
{
	struct mwp_qp_info in;
	unsigned int at = 0, from;

	notify_cc(0);
	cc_setup();
	memset(buf, 0, 4096);
	cr_assert_eq(info_of(qp).dest_qpn, PEER_QPN);
	from = wire.nb_frames;
	feed(write_req(qp, 0, 0x68 | ROCE_ECN_CE, false, 0, 0x5a));
	cr_assert_eq(count_op(from, ROCE_OP_CNP, &at), 1, "CNPs sent for a CE request");
	expect_cnp(at, PEER_QPN, false);
	/* the request was served as ever, its ACK not CE nor at the CNP DSCP */
	cr_assert_eq(count_op(from, ROCE_OP_RC_ACKNOWLEDGE, &at), 1);
	cr_expect_eq(wire.frames[at].psn, 0);
	cr_expect_eq(wire.frames[at].tos, 0x6a);
	cr_expect(sent[at].icrc_ok);
	cr_expect_eq(buf[0], 0x5a, "the CE request was not executed");
	cr_expect_eq(buf[7], 0x5a);
	cr_expect_eq(wire.st.ce, 1);
	cr_expect_eq(wire.st.cnp_tx, 1);
	cr_expect_eq(wire.st.cnp_rx, 0);
	in = info_of(qp);
	cr_expect_eq(in.cc.st.ce, 1);
	cr_expect_eq(in.cc.st.cnp_sent, 1);
	cr_expect_eq(in.cc.st.cnp_received, 0);
	cr_expect_eq(in.expected_psn, 1);
	cr_expect_eq(info_of(qp_b).cc.st.ce, 0, "another QP counted the CE");

	/* a request not marked CE: no CNP */
	from = wire.nb_frames;
	feed(write_req(qp, 1, 0x6a, false, 64, 0x5b));
	cr_expect_eq(count_op(from, ROCE_OP_CNP, NULL), 0, "a CNP for a request not marked CE");
	cr_expect_eq(count_op(from, ROCE_OP_RC_ACKNOWLEDGE, NULL), 1);
	cr_expect_eq(buf[64], 0x5b);
	cr_expect_eq(wire.st.ce, 1);
	cr_expect_eq(wire.st.cnp_tx, 1);
	in = info_of(qp);
	cr_expect_eq(in.cc.st.ce, 1);
	cr_expect_eq(in.cc.st.cnp_sent, 1);

	/* min_time_between_cnps 0: every CE frame gets one, also in one burst */
	{
		struct rte_mbuf *m[2] = {
			write_req(qp, 2, 0x6b, false, 128, 0x5c),
			write_req(qp, 3, 0x6b, false, 192, 0x5d),
		};

		from = wire.nb_frames;
		feed_n(m, 2);
	}
	cr_expect_eq(count_op(from, ROCE_OP_CNP, NULL), 2, "two CE requests, gap 0");
	cr_expect_eq(wire.st.ce, 3);
	cr_expect_eq(wire.st.cnp_tx, 3);
	cr_expect_eq(buf[192], 0x5d);
}

Test(cc, a_ce_request_over_ipv6_gets_a_cnp_over_ipv6)
{
	unsigned int at = 0, from;

	notify_cc(0);
	cc_setup();
	memset(buf, 0, 4096);
	from = wire.nb_frames;
	feed(write_req(qp, 0, 0x03, true, 0, 0x61));
	cr_assert_eq(count_op(from, ROCE_OP_CNP, &at), 1);
	expect_cnp(at, PEER_QPN, true);
	cr_expect_eq(buf[0], 0x61);
	cr_expect_eq(wire.st.ce, 1);
	cr_expect_eq(wire.st.cnp_tx, 1);
}

Test(cc, a_ud_send_marked_ce_gets_a_cnp_to_its_deths_source_qp)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,	/* its CQ: after cc_setup */
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	struct ibv_sge sge = { .length = 1024 };	/* buf and mr: after cc_setup */
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct mwp_hdrs h = { .opcode = ROCE_OP_UD_SEND_ONLY,
			      .deth = { .qkey = FIXTURE_QKEY, .sqpn = 0x777 } };
	struct wire_frame pf = { 0 };
	struct ibv_qp *ud;
	struct mwp_flow fl;
	struct rte_mbuf *m;
	uint8_t data[32];
	unsigned int at = 0, from;

	notify_cc(0);
	cc_setup();
	ia.send_cq = ia.recv_cq = cq;
	ud = make_qp_ia(pd, &ia, true);
	wire_attach(ud);
	wire_pump();
	sge.addr = (uintptr_t)buf;
	sge.lkey = mr->lkey;
	cr_assert_eq(ibv_post_recv(ud, &rwr, &bad), 0);
	m = rte_pktmbuf_alloc(test_mp);
	cr_assert_not_null(m);
	memset(data, 0x44, sizeof(data));
	wire_peer_flow(&pf, &fl);
	fl.tos = 0x20 | ROCE_ECN_CE;
	h.dqpn = ud->qp_num;
	cr_assert_eq(mwp_build(m, &fl, &h, data, sizeof(data), NULL), 0);
	from = wire.nb_frames;
	feed(m);
	cr_assert_eq(count_op(from, ROCE_OP_CNP, &at), 1, "no CNP for a CE UD SEND");
	expect_cnp(at, 0x777, false);
	cr_expect_eq(info_of(ud).cc.st.ce, 1);
	cr_expect_eq(info_of(ud).cc.st.cnp_sent, 1);
	cr_expect_eq(wire.st.cnp_tx, 1);
	expect_wc(5, IBV_WC_SUCCESS, IBV_WC_RECV);
}

Test(cc, cnps_to_one_qp_are_at_least_min_time_between_cnps_apart)
{
	unsigned int at = 0, from, first_cnp = 0;
	uint64_t t_first;

	notify_cc(50);
	cc_setup();
	memset(buf, 0, 4096);
	/* two CE requests in one burst: one CNP */
	{
		struct rte_mbuf *m[2] = {
			write_req(qp, 0, 0x6b, false, 0, 1),
			write_req(qp, 1, 0x6b, false, 64, 2),
		};

		from = wire.nb_frames;
		feed_n(m, 2);
	}
	cr_expect_eq(count_op(from, ROCE_OP_CNP, &first_cnp), 1, "two CE requests in a burst");
	t_first = wire.frames[first_cnp].when;
	cr_expect_eq(wire.st.ce, 2);
	cr_expect_eq(wire.st.cnp_tx, 1);
	cr_expect_eq(buf[64], 2);
	/* another QP's sender is another QP: it gets its own at once */
	from = wire.nb_frames;
	feed(write_req(qp_b, 0, 0x6b, false, 1024, 3));
	cr_expect_eq(count_op(from, ROCE_OP_CNP, NULL), 1, "the gap is not per QP");
	cr_expect_eq(info_of(qp_b).cc.st.cnp_sent, 1);
	/* 30 us later: still within 50 us of the first */
	pump(30);
	from = wire.nb_frames;
	feed(write_req(qp, 2, 0x6b, false, 128, 4));
	cr_expect_eq(count_op(from, ROCE_OP_CNP, NULL), 0, "a CNP 30 us after the last");
	cr_expect_eq(wire.st.ce, 4);
	cr_expect_eq(wire.st.cnp_tx, 2);
	cr_expect_eq(info_of(qp).cc.st.ce, 3);
	cr_expect_eq(info_of(qp).cc.st.cnp_sent, 1);
	cr_expect_eq(buf[128], 4, "a CE request within the gap was not executed");
	/* 55 us after the first: a second one */
	pump(25);
	from = wire.nb_frames;
	feed(write_req(qp, 3, 0x6b, false, 192, 5));
	cr_assert_eq(count_op(from, ROCE_OP_CNP, &at), 1, "no CNP 55 us after the last");
	cr_expect_geq(wire.frames[at].when - t_first, 50 * (wire.hz / 1000000));
	expect_cnp(at, PEER_QPN, false);
	cr_expect_eq(wire.st.ce, 5);
	cr_expect_eq(wire.st.cnp_tx, 3);
	cr_expect_eq(info_of(qp).cc.st.ce, 4);
	cr_expect_eq(info_of(qp).cc.st.cnp_sent, 2);
}

Test(cc, without_notify_a_ce_request_is_counted_and_gets_no_cnp)
{
	unsigned int from;

	notify_cc(0);
	wire_cc.notify = false;
	cc_setup();
	memset(buf, 0, 4096);
	from = wire.nb_frames;
	feed(write_req(qp, 0, 0x6b, false, 0, 0x71));
	cr_expect_eq(count_op(from, ROCE_OP_CNP, NULL), 0, "a CNP without notify");
	cr_expect_eq(count_op(from, ROCE_OP_RC_ACKNOWLEDGE, NULL), 1);
	cr_expect_eq(buf[0], 0x71);
	cr_expect_eq(wire.st.ce, 1);
	cr_expect_eq(wire.st.cnp_tx, 0);
	cr_expect_eq(info_of(qp).cc.st.ce, 1);
	cr_expect_eq(info_of(qp).cc.st.cnp_sent, 0);
}

Test(cc, a_ce_frame_with_a_bad_icrc_gets_no_cnp_and_is_not_counted_as_ce)
{
	struct rte_mbuf *m;
	uint8_t *last;
	unsigned int from;

	notify_cc(0);
	cc_setup();
	memset(buf, 0, 4096);
	m = write_req(qp, 0, 0x6b, false, 0, 0x72);
	last = rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_pkt_len(m) - 1);
	*last ^= 0x01;		/* the ICRC's last byte */
	from = wire.nb_frames;
	feed(m);
	cr_expect_eq(wire.nb_frames, from, "%u frames sent for a bad frame",
		     wire.nb_frames - from);
	cr_expect_eq(wire.st.drop[MWP_DROP_BAD_ICRC], 1);
	cr_expect_eq(wire.st.ce, 0);
	cr_expect_eq(wire.st.cnp_tx, 0);
	cr_expect_eq(info_of(qp).cc.st.ce, 0);
	cr_expect_eq(buf[0], 0);
	/* the same frame with its ICRC good does get one */
	from = wire.nb_frames;
	feed(write_req(qp, 0, 0x6b, false, 0, 0x73));
	cr_expect_eq(count_op(from, ROCE_OP_CNP, NULL), 1);
	cr_expect_eq(wire.st.ce, 1);
}

Test(cc, a_cnp_marked_ce_gets_no_cnp)
{
	unsigned int from;

	notify_cc(0);
	cc_setup();
	from = wire.nb_frames;
	feed(cnp_to(qp->qp_num, (CNP_DSCP << 2) | ROCE_ECN_CE));
	cr_expect_eq(wire.nb_frames, from, "a CNP was answered");
	cr_expect_eq(wire.st.cnp_rx, 1);
	cr_expect_eq(wire.st.ce, 0);
	cr_expect_eq(wire.st.cnp_tx, 0);
	cr_expect_eq(info_of(qp).cc.st.cnp_received, 1);
}

/* ---- 3. the reaction point ---- */

static void
react_cc(bool react)
{
	memset(&wire_cc, 0, sizeof(wire_cc));
	wire_cc.react = react;
	wire_cc.line_rate = 10000;
	mwp_dcqcn_defaults(&wire_cc.dcqcn);
}

/* mwp_qp_query_info reads DCQCN at the TSC: bring the fake clock to it
 * so that the reading comes a few us after the events the test makes
 * (the default rpg_time_reset, 300 us, would otherwise raise the rate). */
static void
clock_to_tsc(void)
{
	wire.now = RTE_MAX(wire.now, rte_rdtsc());
	wire_pump();
}

Test(cc, before_any_cnp_a_qp_is_unlimited_at_the_line_rate)
{
	struct mwp_qp_info in;

	react_cc(true);
	cc_setup();
	in = info_of(qp);
	cr_expect_not(in.cc.limited);
	cr_expect_eq(in.cc.cuts, 0);
	cr_expect(fabs(in.cc.rate - 10000) < 1, "rate %.3f Mb/s, want the line rate 10000",
		  in.cc.rate);
	cr_expect(fabs(in.cc.target - 10000) < 1, "target %.3f Mb/s, want 10000",
		  in.cc.target);
}

Test(cc, a_cnp_for_a_qp_is_counted_and_cuts_its_rate_to_about_half)
{
	/* R_C = 10000 * (1 - (1023/1024) / 2), alpha's cut with rpg_gd 11 */
	const double want = 10000 * (1 - 1023.0 / 1024 / 2);
	/* alpha after it: (1 - g) * 1023/1024 + g, g = 5/1024; then it
	 * decays by 1 - g every us (dce_tcp_rtt) until the reading */
	const double alpha_cnp = 1019.0 / 1024 * 1023.0 / 1024 + 5.0 / 1024;
	struct mwp_qp_info in;
	unsigned int from;
	uint64_t t_read;
	double us_read, alpha_lo;

	react_cc(true);
	/* no rate increase before the reading, however late it comes (the
	 * reading is at the TSC: under qemu, milliseconds later) */
	wire_cc.dcqcn.rpg_time_reset = 100000000;
	wire_cc.dcqcn.rpg_byte_reset = UINT32_MAX;
	cc_setup();
	clock_to_tsc();
	from = wire.nb_frames;
	feed(cnp_to(qp->qp_num, CNP_DSCP << 2));
	in = info_of(qp);
	t_read = rte_rdtsc();	/* no earlier than the reading's own */
	us_read = t_read > wire.now ? (double)(t_read - wire.now) * 1e6 / (double)wire.hz : 0;
	alpha_lo = alpha_cnp * pow(1019.0 / 1024, ceil(us_read) + 1);
	cr_expect_eq(wire.nb_frames, from, "a CNP was answered");
	cr_expect_eq(wire.st.drop[MWP_DROP_WRONG_TRANSPORT], 0,
		     "the CNP went to the responder, which refused it as wrong_transport");
	cr_expect_eq(drops(), 0, "the CNP was dropped");
	cr_expect_eq(wire.st.accepted, 1, "the CNP was not accepted");
	cr_expect_eq(wire.st.cnp_rx, 1);
	cr_expect_eq(wire.st.drop[MWP_DROP_CNP], 0);
	cr_expect_eq(in.cc.st.cnp_received, 1);
	cr_expect(in.cc.limited, "a CNP did not limit the QP");
	cr_expect_eq(in.cc.cuts, 1);
	cr_expect(fabs(in.cc.rate - want) < 10, "rate %.3f Mb/s %.0f us after the cut, want %.3f",
		  in.cc.rate, us_read, want);
	cr_expect(fabs(in.cc.target - 10000) < 1, "target %.3f Mb/s, want 10000",
		  in.cc.target);
	cr_expect(in.cc.alpha >= alpha_lo - 1e-9 && in.cc.alpha <= alpha_cnp + 1e-9,
		  "alpha %.4f, want %.4f decayed for at most %.1f us (>= %.4f)", in.cc.alpha,
		  alpha_cnp, us_read, alpha_lo);
	cr_expect_not(info_of(qp_b).cc.limited, "another QP was limited");
	cr_expect_eq(info_of(qp_b).cc.st.cnp_received, 0);
}

Test(cc, a_cnp_for_no_qp_is_dropped_and_counted)
{
	react_cc(true);
	cc_setup();
	feed(cnp_to(0x4444, CNP_DSCP << 2));
	cr_expect_eq(wire.st.drop[MWP_DROP_CNP], 1);
	cr_expect_eq(wire.st.drop[MWP_DROP_UNKNOWN_QP], 0, "counted as a QPN guess");
	cr_expect_eq(wire.st.cnp_rx, 0);
	cr_expect_eq(info_of(qp).cc.st.cnp_received, 0);
	cr_expect_not(info_of(qp).cc.limited);
}

#define PACED_WRITES	6
#define PACED_RATE	100	/* Mb/s */
#define PACED_BURST	64	/* bytes */

/* The WRITE ONLY frames sent from from on, into f (at most max). */
static unsigned int
writes_from(unsigned int from, const struct wire_frame **f, unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = from; i < wire.nb_frames && k < max; i++)
		if (wire.frames[i].opcode == ROCE_OP_RC_RDMA_WRITE_ONLY)
			f[k++] = &wire.frames[i];
	return k;
}

/* The fixture's qp limited to PACED_RATE by a CNP -- through the queue's
 * rx (via_rx), or handed to the reaction point (mwp_cc_cnp) directly, as
 * the rx sorter does, so that the pacer is tested on its own too -- then
 * PACED_WRITES WRITEs of 1024 bytes: each frame leaves its predecessor's
 * time at the rate after it, less the burst allowance. */
static void
paced_writes(bool via_rx)
{
	const struct wire_frame *f[PACED_WRITES + 1];
	struct mwp_qp_info in;
	double tick_us, pump_us;	/* a TSC tick, a pump of the wire, in us */
	unsigned int from, n;
	uint64_t t_cnp;

	react_cc(true);
	wire_cc.dcqcn.rate_to_set_on_first_cnp = PACED_RATE;
	wire_cc.dcqcn.rpg_time_reset = 100000000;	/* no timer increase */
	wire_cc.dcqcn.rpg_byte_reset = UINT32_MAX;	/* no byte counter one */
	wire_cc.dcqcn.burst = PACED_BURST;
	cc_setup();
	tick_us = 1e6 / (double)wire.hz;
	pump_us = (double)(wire.hz / 1000000) * tick_us;
	wire.auto_answer = true;
	clock_to_tsc();
	if (via_rx)
		feed(cnp_to(qp->qp_num, CNP_DSCP << 2));
	else
		mwp_cc_cnp(wire.port, to_mqp(qp), wire.now, &wire.st);
	t_cnp = wire.now;
	in = info_of(qp);
	cr_expect_eq(wire.st.cnp_rx, 1);
	cr_assert(in.cc.limited, "the CNP did not limit the QP");
	cr_expect(fabs(in.cc.rate - PACED_RATE) < 0.01, "rate %.3f Mb/s after the first CNP",
		  in.cc.rate);
	from = wire.nb_frames;
	for (unsigned int i = 0; i < PACED_WRITES; i++)
		post_write(qp, 100 + i, 1024);
	/* 6 frames of 1098 bytes at 100 Mb/s: 87.84 us each */
	pump(PACED_WRITES * 100);
	n = writes_from(from, f, PACED_WRITES + 1);
	cr_assert_eq(n, PACED_WRITES, "%u WRITEs sent", n);
	cr_expect_geq(f[0]->when, t_cnp);
	for (unsigned int i = 1; i < n; i++) {
		const double gap = (double)(f[i]->when - f[i - 1]->when) * tick_us;
		/* the previous frame's time at the rate, less what the burst
		 * lets through, less one pump of the clock; and no slower
		 * than its time and one pump (it leaves once it may) */
		const double full = f[i - 1]->len * 8.0 / PACED_RATE;
		const double lo = (f[i - 1]->len - (double)PACED_BURST) * 8.0 / PACED_RATE -
				  pump_us;
		const double hi = full + pump_us + 0.01;

		cr_expect_eq(f[i - 1]->len, 14u + 20 + 8 + 12 + 16 + 1024 + 4);
		cr_expect(gap >= lo, "frames %u and %u %.2f us apart, want >= %.2f "
			  "(%u bytes at %u Mb/s)", i - 1, i, gap, lo, f[i - 1]->len, PACED_RATE);
		cr_expect(gap <= hi, "frames %u and %u %.2f us apart, want <= %.2f",
			  i - 1, i, gap, hi);
	}
	/* all of them: 5 gaps of 87.84 us at least less the burst's 5.12 */
	cr_expect_geq((double)(f[n - 1]->when - f[0]->when) * tick_us,
		      (n - 1) * (1098 * 8.0 / PACED_RATE) - PACED_BURST * 8.0 / PACED_RATE - pump_us);
	in = info_of(qp);
	cr_expect_gt(in.cc.paced, 0, "the pacer held nothing back");
	cr_expect(in.cc.limited);
	for (unsigned int i = 0; i < PACED_WRITES; i++)
		expect_wc(100 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
}

Test(cc, the_pacer_spaces_a_limited_qps_requests_at_its_rate)
{
	paced_writes(true);
}

Test(cc, the_pacer_spaces_requests_at_the_rate_the_reaction_point_set)
{
	paced_writes(false);
}

Test(cc, without_react_a_cnp_is_counted_and_the_qp_sends_back_to_back)
{
	const struct wire_frame *f[PACED_WRITES + 1];
	struct mwp_qp_info in;
	unsigned int from, n;

	react_cc(false);
	wire_cc.dcqcn.rate_to_set_on_first_cnp = PACED_RATE;
	wire_cc.dcqcn.burst = PACED_BURST;
	cc_setup();
	wire.auto_answer = true;
	feed(cnp_to(qp->qp_num, CNP_DSCP << 2));
	cr_expect_eq(wire.st.cnp_rx, 1);
	in = info_of(qp);
	cr_expect_eq(in.cc.st.cnp_received, 1);
	cr_expect_not(in.cc.limited, "a CNP limited a QP of a port that does not react");
	cr_expect_eq(in.cc.cuts, 0);
	from = wire.nb_frames;
	for (unsigned int i = 0; i < PACED_WRITES; i++)
		post_write(qp, 100 + i, 1024);
	pump(3);
	n = writes_from(from, f, PACED_WRITES + 1);
	cr_assert_eq(n, PACED_WRITES, "%u WRITEs sent in 3 us", n);
	cr_expect_eq(f[n - 1]->when, f[0]->when, "not sent in one pass: %.2f us apart",
		     (double)(f[n - 1]->when - f[0]->when) * 1e6 / (double)wire.hz);
	cr_expect_eq(info_of(qp).cc.paced, 0);
	for (unsigned int i = 0; i < PACED_WRITES; i++)
		expect_wc(100 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
}
