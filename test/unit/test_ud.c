/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD QPs, address handles and shared receive queues (issue 37) on the
 * test wire (wire_fixture.h, port MTU 1024): what a UD send puts on the
 * wire (DETH, the Q_Key rule, the address handle's IP fields), what a UD
 * receive holds (the 40-byte GRH area as rxe and mlx5 fill it, then the
 * payload) and its completion; every UD frame that cannot be received --
 * wrong Q_Key, too long for the MTU or for the receive, no receive, QP
 * not ready -- counted by reason with nothing written and the receive
 * kept; SRQs shared by RC, UC and UD QPs, their limit event, RNR when
 * empty, LAST_WQE_REACHED, and the verbs' refusals (errnos as rxe).
 */
#include <arpa/inet.h>

#include "wire_fixture.h"
#include "mwp_ah.h"
#include "mwp_srq.h"
#include "mwp_neigh_priv.h"

#define MTU	1024
#define GRH	40

static void
setup(void)
{
	wire_setup();
}

TestSuite(ud, .init = setup, .fini = wire_teardown, .timeout = 60);

/* A UD QP on the wire, in RTS (Q_Key FIXTURE_QKEY), receiving from srq
 * if not NULL. */
static struct ibv_qp *
ud_qp(struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .srq = srq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 6,
			 .max_recv_sge = 6 },
	};
	struct ibv_qp *q = make_qp_ia(pd, &ia, true);

	wire_attach(q);
	wire_pump();
	return q;
}

static struct ibv_ah *
ah_to(const char *gid, uint8_t tclass, uint8_t hop_limit, uint32_t flow_label)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	inet_pton(AF_INET6, gid, a.grh.dgid.raw);
	a.grh.traffic_class = tclass;
	a.grh.hop_limit = hop_limit;
	a.grh.flow_label = flow_label;
	return mwp_create_ah(pd, &a);
}

static void
post_ud(struct ibv_qp *q, struct ibv_ah *ah, enum ibv_wr_opcode op, uint32_t rqpn,
	uint32_t qkey, uint32_t off, uint32_t len, int expect)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = rqpn;
	wr.wr.ud.remote_qkey = qkey;
	wr.imm_data = htonl(0xabcd);
	cr_assert_eq(ibv_post_send(q, &wr, &bad), expect);
}

/* Post one receive of len bytes at buf + off to q (or to srq). */
static void
post_recv_at(struct ibv_qp *q, struct ibv_srq *srq, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (srq != NULL)
		cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	else
		cr_assert_eq(ibv_post_recv(q, &wr, &bad), 0);
}

/* A frame from the peer (192.0.2.2, or ::ffff... over IPv6 to
 * 2001:db8::1) to QP dqpn: opcode with a DETH of qkey and source QP
 * 0x99, len payload bytes of value v. */
static struct rte_mbuf *
frame(uint8_t opcode, uint32_t dqpn, uint32_t qkey, uint32_t psn, uint32_t len, uint8_t v,
      bool ipv6)
{
	static uint8_t data[2048];
	struct wire_frame pf = { .ipv6 = ipv6 };
	struct mwp_hdrs h = { .opcode = opcode, .dqpn = dqpn, .psn = psn,
			      .deth = { .qkey = qkey, .sqpn = 0x99 }, .imm = htonl(0x5151) };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memset(data, v, len);
	wire_peer_flow(&pf, &fl);
	fl.tos = 0x68;
	fl.ttl = 17;
	cr_assert_eq(mwp_build(m, &fl, &h, data, len, NULL), 0);
	return m;
}

static void
feed(struct rte_mbuf *m)
{
	wire_feed(&m, 1);
}

static struct rte_mbuf *
ud_frame(struct ibv_qp *q, uint32_t qkey, uint32_t len, uint8_t v)
{
	return frame(ROCE_OP_UD_SEND_ONLY, q->qp_num, qkey, 0, len, v, false);
}

static bool
all(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* ---- sending ---- */

Test(ud, a_send_carries_a_deth_with_the_qkey_and_the_address_handles_fields)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct ibv_ah *ah = ah_to("::ffff:192.0.2.2", 0x60, 9, 0);
	const unsigned int from = wire.nb_frames;
	struct ibv_wc wc;

	cr_assert_not_null(ah);
	memset(buf, 0x3c, 300);
	post_ud(q, ah, IBV_WR_SEND, 0x1234, 0x2222, 0, 300, 0);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
	cr_expect_eq(wc.wr_id, 7);
	cr_assert_eq(wire.nb_frames, from + 1);
	const struct wire_frame *f = &wire.frames[from];

	cr_expect_eq(f->opcode, ROCE_OP_UD_SEND_ONLY);
	cr_expect_eq(f->dqpn, 0x1234);
	cr_expect_eq(f->qkey, 0x2222);
	cr_expect_eq(f->deth_sqpn, q->qp_num);
	cr_expect_eq(f->payload_len, 300);
	cr_expect(all(f->payload, 64, 0x3c));
	/* the AH's DSCP, and the port's ECN codepoint (ECT(0) by default) */
	cr_expect_eq(f->tos, 0x60 | ROCE_ECN_ECT0);
	cr_expect_eq(f->ttl, 9);
	cr_expect_not(f->ipv6);
	cr_expect_not(f->ackreq);
	/* with immediate */
	post_ud(q, ah, IBV_WR_SEND_WITH_IMM, 0x1234, 0x2222, 0, 8, 0);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wire.frames[from + 1].opcode, ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE);
	cr_expect_eq(mwp_destroy_ah(ah), 0);
}

Test(ud, a_qkey_with_the_high_bit_set_sends_the_qps_own)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct ibv_ah *ah = ah_to("::ffff:192.0.2.2", 0, 0, 0);
	const unsigned int from = wire.nb_frames;
	struct ibv_wc wc;

	post_ud(q, ah, IBV_WR_SEND, 0x55, 0x80000001, 0, 8, 0);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wire.frames[from].qkey, FIXTURE_QKEY);
	cr_expect_eq(wire.frames[from].ttl, 64, "hop limit 0 means 64");
}

Test(ud, sends_go_to_each_address_handles_destination_ipv6_included)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct ibv_ah *a4 = ah_to("::ffff:192.0.2.2", 0, 0, 0);
	struct ibv_ah *a6 = ah_to("2001:db8::2", 0, 0, 0x12345);
	const unsigned int from = wire.nb_frames;
	uint8_t want6[16];
	struct ibv_wc wc;

	inet_pton(AF_INET6, "2001:db8::2", want6);
	post_ud(q, a6, IBV_WR_SEND, 0x55, 1, 0, 8, 0);
	post_ud(q, a4, IBV_WR_SEND, 0x56, 1, 0, 8, 0);
	/* the handle may go while its sends wait: they keep a copy */
	cr_assert_eq(mwp_destroy_ah(a6), 0);
	cr_assert(next_wc(&wc));
	cr_assert(next_wc(&wc));
	cr_assert_eq(wire.nb_frames, from + 2);
	cr_expect(wire.frames[from].ipv6);
	cr_expect_arr_eq(wire.frames[from].dip, want6, 16);
	cr_expect_eq(wire.frames[from].flow_label, 0x12345);
	cr_expect_eq(wire.frames[from].dqpn, 0x55);
	cr_expect_not(wire.frames[from + 1].ipv6);
	cr_expect_eq(wire.frames[from + 1].dip[15], 2);
	cr_expect_eq(wire.frames[from + 1].dqpn, 0x56);
}

Test(ud, a_send_longer_than_the_mtu_or_of_another_opcode_is_refused_at_post)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct ibv_ah *ah = ah_to("::ffff:192.0.2.2", 0, 0, 0);

	post_ud(q, ah, IBV_WR_SEND, 0x55, 1, 0, MTU + 1, EINVAL);
	post_ud(q, ah, IBV_WR_RDMA_WRITE, 0x55, 1, 0, 8, EINVAL);
	post_ud(q, NULL, IBV_WR_SEND, 0x55, 1, 0, 8, EINVAL);
	post_ud(q, ah, IBV_WR_SEND, 0x55, 1, 0, MTU, 0);
	post_ud(q, ah, IBV_WR_SEND, 0x1000000, 1, 0, 8, EINVAL);
}

Test(ud, a_send_to_an_address_nobody_answers_for_completes_and_is_counted)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *q = make_qp_ia(pd, &ia, true);
	struct ibv_ah *ah = ah_to("::ffff:192.0.2.77", 0, 0, 0);
	struct mwp_qp_info info;
	struct ibv_wc wc;
	bool done = false;

	/* no peer MAC set: the neighbour table asks, and gives up */
	mwp_engine_stop(wire.eng);
	cr_assert_eq(mwp_port_attach_qp(wire.port, q), 0);
	mwp_engine_start(wire.eng);
	post_ud(q, ah, IBV_WR_SEND, 0x55, 1, 0, 8, 0);
	for (int i = 0; i < 2000 && !done; i++) {
		wire_advance_us(5000);
		done = ibv_poll_cq(cq, 1, &wc) == 1;
	}
	cr_assert(done);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(mwp_qp_query_info(q, &info), 0);
	cr_expect_eq(info.req.ud_lost, 1);
	cr_expect_eq(q->state, IBV_QPS_RTS, "a lost datagram does not fail the QP");
}

Test(ud, an_address_another_thread_resolves_is_probed_by_the_ports_queue)
{
	/* the RDMA CM's rdma_resolve_addr: a thread that does not poll the
	 * port asks; the port's queue sends the probe on its next turn */
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 77 };
	uint8_t own[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 };
	struct rte_ether_addr mac, peer;
	unsigned int before = wire.nb_frames;

	cr_assert_eq(mwp_port_neigh_ask(wire.port, ip, wire.now, &mac), MWP_NEIGH_WAIT);
	wire_pump();
	cr_assert_eq(wire.nb_frames, before + 1, "one probe");
	cr_expect_eq(wire.frames[before].opcode, 0xff, "not RoCE: ARP");
	for (int i = 0; i < 6; i++)
		cr_expect_eq(wire.frames[before].dmac[i], 0xff, "broadcast");
	/* asked again at once: the table paces its probes */
	cr_expect_eq(mwp_port_neigh_ask(wire.port, ip, wire.now, &mac), MWP_NEIGH_WAIT);
	wire_pump();
	cr_expect_eq(wire.nb_frames, before + 1);
	/* the answer comes (the control path learns it): known */
	rte_ether_unformat_addr(PEER_MAC, &peer);
	mwp_neigh_learn(wire.port->neigh, ip, &peer, true, true, wire.now);
	cr_assert_eq(mwp_port_neigh_ask(wire.port, ip, wire.now, &mac), MWP_NEIGH_OK);
	cr_expect(rte_is_same_ether_addr(&mac, &peer));
	/* the port's own address needs nobody */
	cr_assert_eq(mwp_port_neigh_ask(wire.port, own, wire.now, &mac), MWP_NEIGH_OK);
	cr_expect(rte_is_same_ether_addr(&mac, &wire.port->conf.mac));
	wire_pump();
	cr_expect_eq(wire.nb_frames, before + 1, "no probe for what is known");
}

/* ---- receiving ---- */

Test(ud, a_receive_holds_the_grh_area_then_the_payload_and_completes_with_grh)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct rte_mbuf *m = ud_frame(q, FIXTURE_QKEY, 100, 0xa5);
	uint8_t ip4[20];
	struct ibv_wc wc;

	memcpy(ip4, rte_pktmbuf_mtod_offset(m, uint8_t *, 14), 20);
	memset(buf, 0xee, 512);
	post_recv_at(q, NULL, 42, 0, GRH + 100);
	feed(m);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.wr_id, 42);
	cr_expect_eq(wc.byte_len, GRH + 100);
	cr_expect_eq(wc.wc_flags & IBV_WC_GRH, IBV_WC_GRH);
	cr_expect_eq(wc.src_qp, 0x99);
	cr_expect_eq(wc.qp_num, q->qp_num);
	cr_expect_eq(wc.pkey_index, 0);
	cr_expect_eq(wc.sl, 0xa, "RoCE v2 over IPv4, as ConnectX reports it");
	/* IPv4: twenty zero bytes, then the IPv4 header (rxe, mlx5) */
	cr_expect(all(buf, 20, 0));
	cr_expect_arr_eq(buf + 20, ip4, 20);
	cr_expect(all(buf + GRH, 100, 0xa5));
	cr_expect(all(buf + GRH + 100, 512 - GRH - 100, 0xee), "nothing past the message");
	cr_expect_eq(wire.st.drop[MWP_DROP_NONE], 0);
}

Test(ud, an_ipv6_receive_holds_the_ipv6_header_and_the_immediate)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct rte_mbuf *m = frame(ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, q->qp_num,
				   FIXTURE_QKEY, 0, 16, 0x5a, true);
	uint8_t ip6[40];
	struct ibv_wc wc;

	memcpy(ip6, rte_pktmbuf_mtod_offset(m, uint8_t *, 14), 40);
	post_recv_at(q, NULL, 1, 0, 4096);
	feed(m);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, GRH + 16);
	cr_expect_eq(wc.wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM);
	cr_expect_eq(wc.imm_data, htonl(0x5151));
	cr_expect_eq(wc.sl, 0x9, "RoCE v2 over IPv6, as ConnectX reports it");
	cr_expect_arr_eq(buf, ip6, 40);
	cr_expect(all(buf + GRH, 16, 0x5a));
}

Test(ud, a_receive_scatters_over_its_sges)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct ibv_sge sge[3] = {
		{ .addr = (uintptr_t)buf, .length = 30, .lkey = mr->lkey },
		{ .addr = (uintptr_t)buf + 1000, .length = 20, .lkey = mr->lkey },
		{ .addr = (uintptr_t)buf + 2000, .length = 100, .lkey = mr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = 3, .sg_list = sge, .num_sge = 3 }, *bad;
	struct ibv_wc wc;

	memset(buf, 0xee, 4096);
	cr_assert_eq(ibv_post_recv(q, &wr, &bad), 0);
	feed(ud_frame(q, FIXTURE_QKEY, 60, 0x77));
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, GRH + 60);
	/* GRH 0..29 in the first; GRH 30..39 and payload 0..9 in the
	 * second; payload 10..59 in the third */
	cr_expect(all(buf + 1010, 10, 0x77));
	cr_expect(all(buf + 2000, 50, 0x77));
	cr_expect(all(buf + 2050, 50, 0xee));
	cr_expect(all(buf + 30, 1000 - 30, 0xee));
}

Test(ud, frames_that_cannot_be_received_are_counted_and_write_nothing)
{
	struct ibv_qp *q = ud_qp(NULL);
	struct ibv_qp *rc = qp;
	struct ibv_wc wc;

	memset(buf, 0xee, 4096);
	/* no receive posted */
	feed(ud_frame(q, FIXTURE_QKEY, 10, 1));
	cr_expect_eq(wire.st.drop[MWP_DROP_UD_NO_RECV], 1);
	post_recv_at(q, NULL, 9, 0, GRH + 50);
	/* a wrong Q_Key */
	feed(ud_frame(q, FIXTURE_QKEY ^ 1, 10, 1));
	cr_expect_eq(wire.st.drop[MWP_DROP_UD_QKEY], 1);
	/* longer than the port's MTU */
	feed(ud_frame(q, FIXTURE_QKEY, MTU + 4, 1));
	cr_expect_eq(wire.st.drop[MWP_DROP_UD_TOO_LONG], 1);
	/* longer than the receive: kept for the next */
	feed(ud_frame(q, FIXTURE_QKEY, 51, 1));
	cr_expect_eq(wire.st.drop[MWP_DROP_UD_RECV_SHORT], 1);
	/* a UD SEND to an RC QP, an RC SEND to a UD QP */
	feed(frame(ROCE_OP_UD_SEND_ONLY, rc->qp_num, FIXTURE_QKEY, 0, 10, 1, false));
	feed(frame(ROCE_OP_RC_SEND_ONLY, q->qp_num, FIXTURE_QKEY, 0, 10, 1, false));
	cr_expect_eq(wire.st.drop[MWP_DROP_WRONG_TRANSPORT], 2);
	/* for no QP */
	feed(frame(ROCE_OP_UD_SEND_ONLY, 0x7777, FIXTURE_QKEY, 0, 10, 1, false));
	cr_expect_eq(wire.st.drop[MWP_DROP_UNKNOWN_QP], 1);
	expect_no_wc();
	cr_expect(all(buf, 4096, 0xee), "nothing written");
	/* the receive is still there, for a message that fits it */
	feed(ud_frame(q, FIXTURE_QKEY, 50, 2));
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 9);
	cr_expect_eq(wc.byte_len, GRH + 50);
	cr_expect(all(buf + GRH, 50, 2));
	cr_expect(all(buf + GRH + 50, 100, 0xee));
}

Test(ud, a_qp_not_ready_drops_and_a_reset_one_keeps_nothing)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *q = mwp_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 5 };

	cr_assert_not_null(q);
	/* RESET to INIT needs a Q_Key */
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_QKEY), 0);
	wire_attach(q);
	post_recv_at(q, NULL, 1, 0, 100);
	feed(frame(ROCE_OP_UD_SEND_ONLY, q->qp_num, 5, 0, 10, 1, false));
	cr_expect_eq(wire.st.drop[MWP_DROP_QP_STATE], 1);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE), 0);
	feed(frame(ROCE_OP_UD_SEND_ONLY, q->qp_num, 5, 0, 10, 1, false));
	struct ibv_wc wc;

	cr_assert(next_wc(&wc), "RTR receives");
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	a.qp_state = IBV_QPS_RTS;
	a.qkey = 6;
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_QKEY), 0);
	cr_assert_eq(mwp_query_qp(q, &a, IBV_QP_QKEY, &ia), 0);
	cr_expect_eq(a.qkey, 6);
}

/* ---- address handles ---- */

Test(ud, address_handles_need_a_global_route_to_a_unicast_gid)
{
	struct ibv_ah_attr a = { .is_global = 0, .port_num = 1 };

	errno = 0;
	cr_expect_null(mwp_create_ah(pd, &a));
	cr_expect_eq(errno, EINVAL);
	a.is_global = 1;
	errno = 0;
	cr_expect_null(mwp_create_ah(pd, &a), "a zero GID");
	cr_expect_eq(errno, EINVAL);
	inet_pton(AF_INET6, "::ffff:192.0.2.2", a.grh.dgid.raw);
	a.port_num = 2;
	errno = 0;
	cr_expect_null(mwp_create_ah(pd, &a));
	cr_expect_eq(errno, EINVAL);
	a.port_num = 1;
	inet_pton(AF_INET6, "ff02::1", a.grh.dgid.raw);
	errno = 0;
	cr_expect_null(mwp_create_ah(pd, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	inet_pton(AF_INET6, "::ffff:239.1.1.1", a.grh.dgid.raw);
	errno = 0;
	cr_expect_null(mwp_create_ah(pd, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	/* a PD with a handle cannot go */
	inet_pton(AF_INET6, "::ffff:192.0.2.2", a.grh.dgid.raw);
	struct ibv_pd *p3 = mwp_alloc_pd(ctx);
	struct ibv_ah *ah = mwp_create_ah(p3, &a);

	cr_assert_not_null(ah);
	cr_expect_eq(mwp_dealloc_pd(p3), EBUSY);
	cr_expect_eq(mwp_destroy_ah(ah), 0);
	cr_expect_eq(mwp_dealloc_pd(p3), 0);
}

/* ---- shared receive queues ---- */

static struct ibv_srq *
make_srq(uint32_t max_wr, uint32_t limit)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = max_wr, .max_sge = 2,
						 .srq_limit = limit } };
	struct ibv_srq *s = mwp_create_srq(pd, &a);

	cr_assert_not_null(s);
	cr_expect_eq(a.attr.max_wr, max_wr);
	return s;
}

/* An RC SEND_ONLY of len bytes of v to q at psn. */
static struct rte_mbuf *
rc_send(struct ibv_qp *q, uint32_t psn, uint32_t len, uint8_t v)
{
	return frame(q->qp_type == IBV_QPT_UC ? ROCE_OP_UC_SEND_ONLY : ROCE_OP_RC_SEND_ONLY,
		     q->qp_num, 0, psn, len, v, false);
}

static struct ibv_qp *
srq_qp(enum ibv_qp_type t, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t, .srq = srq,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};
	struct ibv_qp *q;

	if (t == IBV_QPT_UD)
		return ud_qp(srq);
	q = make_qp_ia(pd, &ia, true);
	cr_expect_eq(q->srq, srq);
	wire_attach(q);
	wire_pump();
	return q;
}

Test(ud, qps_of_every_transport_take_receives_from_one_srq_in_order)
{
	struct ibv_srq *srq = make_srq(16, 0);
	struct ibv_qp *rc = srq_qp(IBV_QPT_RC, srq);
	struct ibv_qp *uc = srq_qp(IBV_QPT_UC, srq);
	struct ibv_qp *ud = srq_qp(IBV_QPT_UD, srq);
	struct ibv_wc wc[3];
	int n = 0;

	for (uint32_t i = 0; i < 3; i++)
		post_recv_at(NULL, srq, 100 + i, i * 1024, 1024);
	feed(rc_send(rc, 0, 10, 1));
	feed(ud_frame(ud, FIXTURE_QKEY, 20, 2));
	feed(rc_send(uc, 0, 30, 3));
	for (int i = 0; i < 100 && n < 3; i++) {
		wire_pump();
		n += ibv_poll_cq(cq, 3 - n, wc + n);
	}
	cr_assert_eq(n, 3);
	cr_expect_eq(wc[0].wr_id, 100);
	cr_expect_eq(wc[0].qp_num, rc->qp_num);
	cr_expect_eq(wc[0].byte_len, 10);
	cr_expect_eq(wc[1].wr_id, 101);
	cr_expect_eq(wc[1].qp_num, ud->qp_num);
	cr_expect_eq(wc[1].byte_len, GRH + 20);
	cr_expect_eq(wc[2].wr_id, 102);
	cr_expect_eq(wc[2].qp_num, uc->qp_num);
	cr_expect(all(buf, 10, 1));
	cr_expect(all(buf + 1024 + GRH, 20, 2));
	cr_expect(all(buf + 2048, 30, 3));
	/* in use: cannot go */
	cr_expect_eq(mwp_destroy_srq(srq), EBUSY);
	cr_expect_eq(mwp_destroy_qp(rc), 0);
	cr_expect_eq(mwp_destroy_qp(uc), 0);
	cr_expect_eq(mwp_destroy_qp(ud), 0);
	cr_expect_eq(mwp_destroy_srq(srq), 0);
}

Test(ud, an_empty_srq_makes_an_rc_send_an_rnr_nak)
{
	struct ibv_srq *srq = make_srq(4, 0);
	struct ibv_qp *rc = srq_qp(IBV_QPT_RC, srq);
	const unsigned int from = wire.nb_frames;
	struct ibv_wc wc;

	feed(rc_send(rc, 0, 10, 1));
	cr_assert_eq(wire.nb_frames, from + 1);
	cr_expect_eq(wire.frames[from].opcode, ROCE_OP_RC_ACKNOWLEDGE);
	cr_expect_eq(wire.frames[from].syndrome & 0xe0, ROCE_AETH_RNR_NAK);
	/* a receive posted: the retry lands */
	post_recv_at(NULL, srq, 5, 0, 64);
	feed(rc_send(rc, 0, 10, 1));
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 5);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
}

static unsigned int nb_events;
static struct ibv_async_event events[8];

static void
on_async(struct ibv_context *c, const struct ibv_async_event *ev, void *arg)
{
	if (nb_events < RTE_DIM(events))
		events[nb_events++] = *ev;
}

Test(ud, the_srq_limit_event_comes_once_when_fewer_receives_remain)
{
	struct ibv_srq *srq = make_srq(8, 0);
	struct ibv_qp *ud = srq_qp(IBV_QPT_UD, srq);
	struct ibv_srq_attr sa = { .srq_limit = 3 };
	struct ibv_wc wc;

	nb_events = 0;
	mwp_device_set_async(ctx, on_async, NULL);
	for (uint32_t i = 0; i < 5; i++)
		post_recv_at(NULL, srq, i, i * 100, 100);
	cr_assert_eq(mwp_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	cr_assert_eq(mwp_query_srq(srq, &sa), 0);
	cr_expect_eq(sa.srq_limit, 3);
	cr_expect_eq(sa.max_wr, 8);
	/* 5 -> 4 -> 3: not fewer yet */
	feed(ud_frame(ud, FIXTURE_QKEY, 8, 1));
	feed(ud_frame(ud, FIXTURE_QKEY, 8, 1));
	cr_expect_eq(nb_events, 0);
	/* 3 -> 2: the event, and the limit disarmed */
	feed(ud_frame(ud, FIXTURE_QKEY, 8, 1));
	cr_assert_eq(nb_events, 1);
	cr_expect_eq(events[0].event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	cr_expect_eq(events[0].element.srq, srq);
	feed(ud_frame(ud, FIXTURE_QKEY, 8, 1));
	cr_expect_eq(nb_events, 1);
	cr_assert_eq(mwp_query_srq(srq, &sa), 0);
	cr_expect_eq(sa.srq_limit, 0);
	for (int i = 0; i < 4; i++)
		cr_expect(next_wc(&wc));
	mwp_device_set_async(ctx, NULL, NULL);
}

Test(ud, an_attached_qp_entering_err_raises_last_wqe_reached)
{
	struct ibv_srq *srq = make_srq(8, 0);
	struct ibv_qp *rc = srq_qp(IBV_QPT_RC, srq);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	nb_events = 0;
	mwp_device_set_async(ctx, on_async, NULL);
	post_recv_at(NULL, srq, 1, 0, 64);
	cr_assert_eq(mwp_modify_qp(rc, &a, IBV_QP_STATE), 0);
	cr_assert_eq(nb_events, 1);
	cr_expect_eq(events[0].event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	cr_expect_eq(events[0].element.qp, rc);
	/* the SRQ's receives stay for its other QPs: none flushed */
	for (int i = 0; i < 20; i++)
		wire_pump();
	expect_no_wc();
	mwp_device_set_async(ctx, NULL, NULL);
}

Test(ud, srq_misuse_is_refused_with_the_errnos_rxe_gives)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 0, .max_sge = 1 } };
	struct ibv_srq *srq;
	struct ibv_srq_attr sa;
	struct ibv_qp *rc;

	errno = 0;
	cr_expect_null(mwp_create_srq(pd, &a));
	cr_expect_eq(errno, EINVAL);
	a.attr.max_wr = 4;
	a.attr.max_sge = MWP_MAX_SGE + 1;
	errno = 0;
	cr_expect_null(mwp_create_srq(pd, &a));
	cr_expect_eq(errno, EINVAL);
	a.attr.max_sge = 1;
	a.attr.srq_limit = 5;
	errno = 0;
	cr_expect_null(mwp_create_srq(pd, &a));
	cr_expect_eq(errno, EINVAL);
	a.attr.srq_limit = 0;
	a.attr.max_wr = 1u << 20;
	errno = 0;
	cr_expect_null(mwp_create_srq(pd, &a));
	cr_expect_eq(errno, EINVAL);
	srq = make_srq(4, 0);
	/* max_wr: up to the room it was made with, not below what it holds */
	sa.max_wr = 1000;
	cr_expect_eq(mwp_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL);
	sa.max_wr = 0;
	cr_expect_eq(mwp_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL);
	sa.srq_limit = 5;
	cr_expect_eq(mwp_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	cr_expect_eq(mwp_modify_srq(srq, &sa, 0x80), EINVAL);
	/* no more receives than max_wr */
	for (uint32_t i = 0; i < 4; i++)
		post_recv_at(NULL, srq, i, 0, 8);
	struct ibv_sge sge[3] = {
		{ .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey },
		{ .addr = (uintptr_t)buf + 8, .length = 8, .lkey = mr->lkey },
		{ .addr = (uintptr_t)buf + 16, .length = 8, .lkey = mr->lkey },
	};
	struct ibv_recv_wr wr = { .sg_list = sge, .num_sge = 1 }, *bad = NULL;

	cr_expect_eq(ibv_post_srq_recv(srq, &wr, &bad), ENOMEM);
	cr_expect_eq(bad, &wr);
	sa.max_wr = 2;
	cr_expect_eq(mwp_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL, "4 are posted");
	wr.num_sge = 2;
	struct ibv_srq *s2 = make_srq(4, 0);

	cr_expect_eq(ibv_post_srq_recv(s2, &wr, &bad), 0);
	wr.num_sge = 3;
	cr_expect_eq(ibv_post_srq_recv(s2, &wr, &bad), EINVAL, "max_sge is 2");
	/* a QP on an SRQ posts no receives of its own */
	rc = srq_qp(IBV_QPT_RC, srq);
	wr.num_sge = 1;
	cr_expect_eq(ibv_post_recv(rc, &wr, &bad), EINVAL);
	/* a PD with an SRQ cannot go */
	struct ibv_pd *p3 = mwp_alloc_pd(ctx);
	struct ibv_srq_init_attr a3 = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_srq *s3 = mwp_create_srq(p3, &a3);

	cr_assert_not_null(s3);
	cr_expect_eq(mwp_dealloc_pd(p3), EBUSY);
	cr_expect_eq(mwp_destroy_srq(s3), 0);
	cr_expect_eq(mwp_dealloc_pd(p3), 0);
	cr_expect_eq(mwp_destroy_srq(srq), EBUSY);
	cr_expect_eq(mwp_destroy_qp(rc), 0);
	cr_expect_eq(mwp_destroy_srq(srq), 0);
	cr_expect_eq(mwp_destroy_srq(s2), 0);
}

Test(ud, a_qp_may_only_receive)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 0, .max_recv_wr = 4, .max_recv_sge = 1 },
	};
	struct ibv_qp *q = mwp_create_qp(pd, &ia);
	struct ibv_qp_attr a;

	cr_assert_not_null(q, "max_send_wr 0, as qperf's passive side makes");
	cr_assert_eq(mwp_query_qp(q, &a, IBV_QP_CAP, &ia), 0);
	cr_expect_eq(ia.cap.max_send_wr, 0);
	cr_expect_eq(mwp_destroy_qp(q), 0);
	ia.cap.max_send_sge = MWP_MAX_SGE;
	ia.cap.max_recv_sge = MWP_MAX_SGE;
	ia.cap.max_send_wr = 4;
	q = mwp_create_qp(pd, &ia);
	cr_assert_not_null(q, "16 SGEs each way");
	cr_expect_eq(mwp_destroy_qp(q), 0);
}

Test(ud, a_receive_posted_to_a_qp_in_err_is_flushed)
{
	struct ibv_qp *ud = ud_qp(NULL);
	struct ibv_qp *qs[2] = { qp_b, ud };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;

	for (int i = 0; i < 2; i++) {
		cr_assert_eq(mwp_modify_qp(qs[i], &a, IBV_QP_STATE), 0);
		for (int k = 0; k < 20; k++)
			wire_pump();
		post_recv_at(qs[i], NULL, 500 + i, 0, 64);
		cr_assert(next_wc(&wc), "QP %d: no completion", i);
		cr_expect_eq(wc.wr_id, 500 + i);
		cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
		cr_expect_eq(wc.qp_num, qs[i]->qp_num);
	}
}
