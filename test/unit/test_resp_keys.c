/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The burst's key lookup: each request is served by the descriptor of
 * the key it names, also when consecutive requests name the same key
 * (looked up once) and runs of keys alternate; a WRITE's later packets,
 * which name no key, go on with their first packet's, found in the burst
 * that carries them and never kept past it.  On the test wire
 * (wire_fixture.h): a region key R and a Type 2 window key W over part of
 * it, in one burst.
 */
#include "wire_fixture.h"

static void
setup(void)
{
	wire_setup();
}

TestSuite(resp_keys, .init = setup, .fini = wire_teardown, .timeout = 60);

static struct rte_mbuf *
write_req(uint32_t psn, uint64_t va, uint32_t rkey, bool ackreq)
{
	uint8_t data[16];
	struct wire_frame pf = { .sqpn = qp->qp_num };
	struct mwp_hdrs h = { .opcode = ROCE_OP_RC_RDMA_WRITE_ONLY, .dqpn = qp->qp_num,
			      .psn = psn, .ackreq = ackreq };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memset(data, 0xa0 + (int)psn, sizeof(data));
	wire_peer_flow(&pf, &fl);
	h.reth.va = va;
	h.reth.rkey = rkey;
	h.reth.dmalen = sizeof(data);
	cr_assert_eq(mwp_build(m, &fl, &h, data, sizeof(data), NULL), 0);
	return m;
}

/* The accesses key's descriptor has allowed (its counter, as the
 * telemetry's /mwpath/keys shows it). */
static uint64_t
allowed_of(uint32_t rkey)
{
	const struct mwp_binding *b = mwp_keys_lookup(to_mqp(qp)->dev->keys, rkey);

	cr_assert_not_null(b);
	return __atomic_load_n(&b->allowed, __ATOMIC_RELAXED);
}

Test(resp_keys, runs_of_one_key_and_alternating_keys_each_get_their_own_descriptor)
{
	const uint64_t base = (uintptr_t)buf;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	/* R, R, W, W, R, W, W, then W with a wrong key byte: every request
	 * 16 bytes at its own place; the window covers [base + 4096, +256)
	 * zero-based, so a W request's va is an offset */
	const uint32_t n = 8;
	uint32_t key[8];
	uint64_t va[8], at[8], r0, w0;
	struct rte_mbuf *m[8], *tx[16];
	uint16_t k;

	cr_assert_not_null(mw);
	cr_assert_eq(post_bind2(qp, mw, mr, base + 4096, 256,
				IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED, 0x21, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	memset(buf, 0, 8192);
	for (uint32_t i = 0; i < n; i++) {
		const bool w = i == 2 || i == 3 || i >= 5;

		key[i] = w ? mw->rkey : mr->rkey;
		va[i] = w ? 16 * i : base + 16 * i;
		at[i] = w ? 4096 + 16 * i : 16 * i;
	}
	key[7] ^= 0x01;		/* the window's index, a dead key byte */
	for (uint32_t i = 0; i < n; i++)
		m[i] = write_req(i, va[i], key[i], i == n - 1);
	r0 = allowed_of(mr->rkey);
	w0 = allowed_of(mw->rkey);
	k = mwp_queue_rx(wire.q, m, (uint16_t)n, tx, RTE_DIM(tx));
	/* each descriptor's counter: the region's 3 (0, 1, 4), the
	 * window's 4 (2, 3, 5, 6), counted a run at a time */
	cr_expect_eq(allowed_of(mr->rkey) - r0, 3);
	cr_expect_eq(allowed_of(mw->rkey) - w0, 4);
	for (uint16_t i = 0; i < k; i++) {
		wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
	for (uint32_t i = 0; i < n - 1; i++) {
		cr_expect_eq(buf[at[i]], 0xa0 + i, "request %u at offset %lu", i,
			     (unsigned long)at[i]);
		cr_expect_eq(buf[at[i] + 15], 0xa0 + i);
	}
	cr_expect_eq(buf[at[7]], 0, "the dead key wrote nothing");
	/* the ACK for 0..6, then the NAK for 7 */
	cr_assert_eq(wire.nb_frames, 2);
	cr_expect_eq(wire.frames[0].psn, 6);
	cr_expect_eq(wire.frames[0].syndrome & 0xe0, 0);
	cr_expect_eq(wire.frames[1].psn, 7);
	cr_expect_eq(wire.frames[1].syndrome, ROCE_AETH_NAK_REM_ACC);
}

/* One packet of a WRITE message (1 KB MTU): opcode op, len bytes of fill;
 * a FIRST or ONLY carries the RETH (va, rkey, dmalen). */
static struct rte_mbuf *
write_pkt(uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t dmalen,
	  uint8_t fill, uint32_t len)
{
	static uint8_t data[1024];
	struct wire_frame pf = { .sqpn = qp->qp_num };
	struct mwp_hdrs h = { .opcode = op, .dqpn = qp->qp_num, .psn = psn,
			      .ackreq = op == ROCE_OP_RC_RDMA_WRITE_LAST };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memset(data, fill, len);
	wire_peer_flow(&pf, &fl);
	if (op == ROCE_OP_RC_RDMA_WRITE_FIRST) {
		h.reth.va = va;
		h.reth.rkey = rkey;
		h.reth.dmalen = dmalen;
	}
	cr_assert_eq(mwp_build(m, &fl, &h, data, len, NULL), 0);
	return m;
}

static void
burst_of(struct rte_mbuf **m, uint16_t n)
{
	struct rte_mbuf *tx[16];
	uint16_t k = mwp_queue_rx(wire.q, m, n, tx, RTE_DIM(tx));

	for (uint16_t i = 0; i < k; i++) {
		wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
}

static bool
filled(uint64_t at, uint32_t len, uint8_t fill)
{
	for (uint32_t i = 0; i < len; i++)
		if (buf[at + i] != fill)
			return false;
	return true;
}

Test(resp_keys, a_write_goes_on_with_its_first_packets_key_in_this_burst_or_the_next)
{
	const uint64_t base = (uintptr_t)buf;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct rte_mbuf *m[4];

	cr_assert_not_null(mw);
	cr_assert_eq(post_bind2(qp, mw, mr, base + 4096, 3072,
				IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED, 0x33, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	memset(buf, 0, 8192);
	/* message 1 through the region, its FIRST alone in a burst */
	m[0] = write_pkt(ROCE_OP_RC_RDMA_WRITE_FIRST, 0, base, mr->rkey, 2048, 0x11, 1024);
	burst_of(m, 1);
	/* its LAST, then message 2 through the window, whole: the burst's
	 * first pass names the region's key for message 2's MIDDLE (the
	 * QP's message in progress then), which must not serve it */
	m[0] = write_pkt(ROCE_OP_RC_RDMA_WRITE_LAST, 1, 0, 0, 0, 0x12, 1024);
	m[1] = write_pkt(ROCE_OP_RC_RDMA_WRITE_FIRST, 2, 0, mw->rkey, 3072, 0x21, 1024);
	m[2] = write_pkt(ROCE_OP_RC_RDMA_WRITE_MIDDLE, 3, 0, 0, 0, 0x22, 1024);
	m[3] = write_pkt(ROCE_OP_RC_RDMA_WRITE_LAST, 4, 0, 0, 0, 0x23, 1024);
	burst_of(m, 4);
	cr_expect(filled(0, 1024, 0x11));
	cr_expect(filled(1024, 1024, 0x12));
	cr_expect(filled(2048, 2048, 0), "nothing between the region's and the window's");
	cr_expect(filled(4096, 1024, 0x21));
	cr_expect(filled(5120, 1024, 0x22), "the MIDDLE at the window's second KB");
	cr_expect(filled(6144, 1024, 0x23));
	cr_expect(filled(7168, 1024, 0), "nothing past the window");
	/* each burst's ACK, coalesced */
	cr_assert_eq(wire.nb_frames, 2);
	cr_expect_eq(wire.frames[0].psn, 0);
	cr_expect_eq(wire.frames[1].psn, 4);
	cr_expect_eq(wire.frames[1].syndrome & 0xe0, 0, "an ACK");
}

Test(resp_keys, a_write_whose_window_dies_between_its_packets_is_refused_at_the_next)
{
	const uint64_t base = (uintptr_t)buf;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct rte_mbuf *m[2];

	cr_assert_not_null(mw);
	cr_assert_eq(post_bind2(qp, mw, mr, base + 4096, 3072, IBV_ACCESS_REMOTE_WRITE, 0x34, 1),
		     0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	memset(buf, 0, 8192);
	m[0] = write_pkt(ROCE_OP_RC_RDMA_WRITE_FIRST, 0, base + 4096, mw->rkey, 3072, 0x41,
			 1024);
	burst_of(m, 1);
	/* the window invalidated once the FIRST is in: its MIDDLE, in the
	 * next burst, finds the key dead (NAK 0x62), writes nothing, and
	 * the LAST after it is not served either */
	cr_assert_eq(post_local_inv(qp, mw->rkey, 2, true), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	m[0] = write_pkt(ROCE_OP_RC_RDMA_WRITE_MIDDLE, 1, 0, 0, 0, 0x42, 1024);
	m[1] = write_pkt(ROCE_OP_RC_RDMA_WRITE_LAST, 2, 0, 0, 0, 0x43, 1024);
	burst_of(m, 2);
	cr_expect(filled(4096, 1024, 0x41));
	cr_expect(filled(5120, 2048, 0), "nothing after the invalidation");
	/* the FIRST's ACK, then the MIDDLE's NAK, and nothing for the LAST */
	cr_assert_eq(wire.nb_frames, 2);
	cr_expect_eq(wire.frames[0].psn, 0);
	cr_expect_eq(wire.frames[1].psn, 1);
	cr_expect_eq(wire.frames[1].syndrome, ROCE_AETH_NAK_REM_ACC);
}

static struct rte_mbuf *
send_req(uint32_t psn, uint8_t fill)
{
	const struct mwp_hdrs h = { .opcode = ROCE_OP_RC_SEND_ONLY, .psn = psn, .ackreq = true };

	return wire_request(qp, h, fill, 64);
}

/* The QP remembers the last receive key it looked up (recv_key): SENDs
 * into receives of one region find it again; the region deregistered,
 * the next receive naming its key is refused (LOC_PROT_ERR, a remote
 * operational error NAK) and nothing is placed. */
Test(resp_keys, a_receive_whose_region_was_deregistered_after_a_send_used_it_is_refused)
{
	struct ibv_mr *rm = mwp_reg_mr(pd, buf + 8192, 4096, ALL_ACCESS);
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 8192, .length = 256 };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	struct rte_mbuf *m;

	cr_assert_not_null(rm);
	sge.lkey = rm->lkey;
	memset(buf + 8192, 0, 4096);
	for (uint32_t i = 0; i < 2; i++) {
		rwr.wr_id = 10 + i;
		sge.addr = (uintptr_t)buf + 8192 + 256 * i;
		cr_assert_eq(ibv_post_recv(qp, &rwr, &bad), 0);
		m = send_req(i, (uint8_t)(0x51 + i));
		burst_of(&m, 1);
		cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1);
		cr_expect_eq(wc.wr_id, 10 + i);
		cr_expect_eq(wc.status, IBV_WC_SUCCESS);
		cr_expect(filled(8192 + 256 * i, 64, (uint8_t)(0x51 + i)));
	}
	cr_expect_eq(to_mqp(qp)->resp.recv_key.key, rm->lkey, "the key is remembered");
	cr_assert_eq(mwp_dereg_mr(rm), 0);
	rwr.wr_id = 12;
	sge.addr = (uintptr_t)buf + 8192 + 512;
	cr_assert_eq(ibv_post_recv(qp, &rwr, &bad), 0);
	m = send_req(2, 0x53);
	burst_of(&m, 1);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1);
	cr_expect_eq(wc.wr_id, 12);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	cr_expect(filled(8192 + 512, 64, 0), "nothing placed");
	cr_assert_eq(wire.nb_frames, 3);
	cr_expect_eq(wire.frames[2].psn, 2);
	cr_expect_eq(wire.frames[2].syndrome, ROCE_AETH_NAK_REM_OP);
}
