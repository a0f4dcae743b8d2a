/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The guessing defence (issue 20, docs/security.md): requests refused for
 * key, bounds or access count against their source -- RC NAKs and UC
 * silent drops alike -- and so do frames to QPs that do not exist; with a threshold, a source that reaches it has its
 * frames dropped as MWP_DROP_GUESSING for the block time, even those
 * with a good key, while other sources go on; after the block it is
 * served again.  On the test wire (wire_fixture.h): threshold 3, 5 ms.
 */
#include "wire_fixture.h"

#define BLOCK_MS	5

static void
setup(void)
{
	wire_guess_threshold = 3;
	wire_guess_block_ms = BLOCK_MS;
	wire_setup();
}

TestSuite(guard, .init = setup, .fini = wire_teardown, .timeout = 60);

/* A WRITE_ONLY of 8 bytes of value v to va with rkey, from IPv4 src. */
static struct rte_mbuf *
write_from(struct ibv_qp *q, const char *src, uint32_t psn, uint64_t va, uint32_t rkey,
	   uint8_t v)
{
	uint8_t data[8];
	struct wire_frame pf = { .sqpn = q->qp_num };
	struct mwp_hdrs h = { .dqpn = q->qp_num, .psn = psn, .ackreq = true,
			      .opcode = q->qp_type == IBV_QPT_UC ? ROCE_OP_UC_RDMA_WRITE_ONLY :
								   ROCE_OP_RC_RDMA_WRITE_ONLY };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memset(data, v, sizeof(data));
	wire_peer_flow(&pf, &fl);
	inet_pton(AF_INET, src, &fl.sip4);
	h.reth.va = va;
	h.reth.rkey = rkey;
	h.reth.dmalen = sizeof(data);
	cr_assert_eq(mwp_build(m, &fl, &h, data, sizeof(data), NULL), 0);
	return m;
}

static void
send1(struct rte_mbuf *m)
{
	wire_feed(&m, 1);
}

/* The guard's entry of IPv4 src, or NULL. */
static const struct mwp_guard_source *
source(const char *src)
{
	const struct mwp_guard *g = mwp_queue_guard(wire.q);
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff };

	inet_pton(AF_INET, src, ip + 12);
	for (unsigned int i = 0; i < MWP_GUARD_SOURCES; i++)
		if (g->src[i].used && memcmp(g->src[i].ip, ip, 16) == 0)
			return &g->src[i];
	return NULL;
}

Test(guard, uc_refusals_block_their_source_for_the_block_time_only)
{
	struct ibv_qp *uc = make_qp(pd, IBV_QPT_UC, 8, true);
	const uint64_t va = (uintptr_t)buf;
	const uint32_t good = mr->rkey, bad = mr->rkey ^ 0x80;
	const struct mwp_guard_source *s;
	uint32_t psn = 0;

	wire_attach(uc);
	wire_pump();		/* the engine's clock is the wire's from here */
	memset(buf, 0, 64);
	/* a good WRITE, then three with a wrong key byte: silent drops */
	send1(write_from(uc, "192.0.2.2", psn++, va, good, 0x11));
	cr_assert_eq(buf[0], 0x11);
	for (int i = 0; i < 3; i++)
		send1(write_from(uc, "192.0.2.2", psn++, va + 8, bad, 0x22));
	s = source("192.0.2.2");
	cr_assert_not_null(s);
	cr_expect_eq(s->refused, 3);
	cr_expect_eq(s->blocks, 1, "the third refusal blocks");
	cr_expect_eq(wire.st.drop[MWP_DROP_UC_DISCARD], 3);
	/* blocked: a good key does nothing now */
	send1(write_from(uc, "192.0.2.2", psn++, va + 16, good, 0x33));
	cr_expect_eq(buf[16], 0, "a blocked source wrote");
	cr_expect_eq(wire.st.drop[MWP_DROP_GUESSING], 1);
	cr_expect_eq(s->dropped, 1);
	/* another source is served */
	send1(write_from(uc, "192.0.2.9", psn++, va + 24, good, 0x44));
	cr_expect_eq(buf[24], 0x44, "another source was blocked too");
	cr_expect_null(source("192.0.2.9"), "a source with no refusal is not tracked");
	/* the block is over after BLOCK_MS */
	wire_advance_us(BLOCK_MS * 1000 + 100);
	send1(write_from(uc, "192.0.2.2", psn++, va + 32, good, 0x55));
	cr_expect_eq(buf[32], 0x55, "still blocked after the block time");
	cr_expect_eq(wire.st.drop[MWP_DROP_GUESSING], 1);
	cr_expect_eq(mwp_queue_guard(wire.q)->nb_blocked, 0);
	/* and needs three new refusals to be blocked again */
	for (int i = 0; i < 2; i++)
		send1(write_from(uc, "192.0.2.2", psn++, va + 40, bad, 0x66));
	send1(write_from(uc, "192.0.2.2", psn++, va + 48, good, 0x77));
	cr_expect_eq(buf[48], 0x77);
	cr_expect_eq(s->refused, 5);
	cr_expect_eq(s->blocks, 1);
}

Test(guard, frames_to_qps_that_do_not_exist_count_against_their_source)
{
	const uint64_t va = (uintptr_t)buf;
	const struct mwp_guard_source *s;

	wire_pump();
	memset(buf, 0, 64);
	/* a scan of QPNs: three numbers no QP has (the fixture's QPs are
	 * 0x11 and 0x12), then the right one with a good key */
	for (uint32_t n = 0; n < 3; n++) {
		struct ibv_qp fake = { .qp_num = 0x4000 + n, .qp_type = IBV_QPT_RC };

		send1(write_from(&fake, "192.0.2.8", 0, va, mr->rkey, 0x11));
	}
	cr_expect_eq(wire.st.drop[MWP_DROP_UNKNOWN_QP], 3);
	s = source("192.0.2.8");
	cr_assert_not_null(s);
	cr_expect_eq(s->refused, 3);
	cr_expect_eq(s->blocks, 1);
	send1(write_from(qp, "192.0.2.8", 0, va, mr->rkey, 0x22));
	cr_expect_eq(buf[0], 0, "a source that scanned QPNs wrote while blocked");
	cr_expect_eq(wire.st.drop[MWP_DROP_GUESSING], 1);
	/* its next unknown QPN while blocked is one of its drops */
	{
		struct ibv_qp fake = { .qp_num = 0x4100, .qp_type = IBV_QPT_RC };

		send1(write_from(&fake, "192.0.2.8", 0, va, mr->rkey, 0x33));
	}
	cr_expect_eq(wire.st.drop[MWP_DROP_GUESSING], 2);
	cr_expect_eq(wire.st.drop[MWP_DROP_UNKNOWN_QP], 3);
	cr_expect_eq(s->dropped, 2);
	/* the peer is served */
	send1(write_from(qp, "192.0.2.2", 0, va + 8, mr->rkey, 0x44));
	cr_expect_eq(buf[8], 0x44);
}

Test(guard, an_rc_refusal_is_its_nak_and_counts_against_its_source)
{
	const uint64_t va = (uintptr_t)buf;

	send1(write_from(qp, "192.0.2.7", 0, va, mr->rkey ^ 0x80, 0x22));
	cr_assert_eq(wire.nb_frames, 1);
	cr_expect_eq(wire.frames[0].syndrome, ROCE_AETH_NAK_REM_ACC);
	cr_assert_not_null(source("192.0.2.7"));
	cr_expect_eq(source("192.0.2.7")->refused, 1);
	cr_expect_eq(source("192.0.2.7")->blocks, 0);
}

Test(guard, a_full_probe_run_forgets_the_least_suspect_source)
{
	struct mwp_guard g;
	uint8_t ip[16] = { 0 };
	unsigned int tracked = 0;

	mwp_guard_init(&g, 0, 1000, rte_get_tsc_hz());
	/* many more sources than entries: every refusal is kept somewhere
	 * or counted as evicted, and the table never overflows */
	for (uint32_t i = 0; i < 4 * MWP_GUARD_SOURCES; i++) {
		memcpy(ip + 12, &i, 4);
		mwp_guard_refused(&g, ip, 0);
	}
	for (unsigned int i = 0; i < MWP_GUARD_SOURCES; i++)
		tracked += g.src[i].used;
	cr_expect_eq(tracked + g.evicted, 4 * MWP_GUARD_SOURCES);
	cr_expect_eq(g.nb_blocked, 0, "threshold 0 never blocks");
}

/* A UD SEND_ONLY of 8 bytes to q with qkey, from IPv4 src. */
static struct rte_mbuf *
ud_from(struct ibv_qp *q, const char *src, uint32_t qkey)
{
	uint8_t data[8] = { 0x5a };
	struct wire_frame pf = { .sqpn = q->qp_num };
	struct mwp_hdrs h = { .dqpn = q->qp_num, .opcode = ROCE_OP_UD_SEND_ONLY,
			      .deth = { .qkey = qkey, .sqpn = 0x99 } };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	wire_peer_flow(&pf, &fl);
	inet_pton(AF_INET, src, &fl.sip4);
	cr_assert_eq(mwp_build(m, &fl, &h, data, sizeof(data), NULL), 0);
	return m;
}

Test(guard, ud_sends_with_a_wrong_qkey_count_against_their_source)
{
	struct ibv_qp *ud = make_qp(pd, IBV_QPT_UD, 8, true);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
	const struct mwp_guard_source *s;
	struct ibv_wc wc;

	wire_attach(ud);
	wire_pump();
	cr_assert_eq(ibv_post_recv(ud, &wr, &bad), 0);
	for (int i = 0; i < 3; i++)
		send1(ud_from(ud, "192.0.2.5", FIXTURE_QKEY + 1 + i));
	cr_expect_eq(wire.st.drop[MWP_DROP_UD_QKEY], 3);
	s = source("192.0.2.5");
	cr_assert_not_null(s);
	cr_expect_eq(s->refused, 3);
	cr_expect_eq(s->blocks, 1);
	/* blocked: the right Q_Key is not received now */
	send1(ud_from(ud, "192.0.2.5", FIXTURE_QKEY));
	cr_expect_eq(wire.st.drop[MWP_DROP_GUESSING], 1);
	cr_expect_not(next_wc(&wc));
	/* another source is */
	send1(ud_from(ud, "192.0.2.6", FIXTURE_QKEY));
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 40 + 8);
}
