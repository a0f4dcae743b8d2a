/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The burst's key lookup: each request is served by the descriptor of
 * the key it names, also when consecutive requests name the same key
 * (looked up once) and runs of keys alternate.  On the test wire
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

Test(resp_keys, runs_of_one_key_and_alternating_keys_each_get_their_own_descriptor)
{
	const uint64_t base = (uintptr_t)buf;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	/* R, R, W, W, R, W, W, then W with a wrong key byte: every request
	 * 16 bytes at its own place; the window covers [base + 4096, +256)
	 * zero-based, so a W request's va is an offset */
	const uint32_t n = 8;
	uint32_t key[8];
	uint64_t va[8], at[8];
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
	k = mwp_resp_burst(wire.q, m, (uint16_t)n, tx, RTE_DIM(tx));
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
