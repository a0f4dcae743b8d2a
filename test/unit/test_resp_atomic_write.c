/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA ATOMIC WRITE (IBA 1.5, opcode 0x1d) at the responder, on the test
 * wire (wire_fixture.h): the 8 bytes land through a region or a window
 * (VA-based or zero-based) whose key grants remote write, in one store,
 * answered with a zero-length READ RESPONSE ONLY; every refusal is the
 * NAK and the counter of the existing step of memory-windows.md section
 * 3 (remote write missing: 0x62 access; outside the window: 0x62
 * bounds; unaligned: 0x61 unaligned; a DMA length or payload that is not
 * 8: 0x61 write_length; the QP without remote write: 0x61 qp_access), and
 * nothing is written; a duplicate is answered again, never stored again.
 */
#include "wire_fixture.h"

#define MTU 1024
#define AW ROCE_OP_RC_ATOMIC_WRITE
/* the guard bytes around every target: untouched unless said */
#define FILL 0xa5

static void
setup(void)
{
	wire_setup();
	memset(buf, FILL, BUF_LEN);
}

TestSuite(resp_aw, .init = setup, .fini = wire_teardown);

static const uint8_t value[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

/* A frame of opcode to qp at psn naming va and rkey; a RETH with dmalen
 * and len payload bytes (value's, then zeros). */
static struct rte_mbuf *
frame_to(struct ibv_qp *q, uint8_t opcode, uint32_t psn, uint64_t va, uint32_t rkey,
	 uint32_t dmalen, uint32_t len)
{
	static uint8_t data[64];
	struct wire_frame pf = { .sqpn = q->qp_num };
	struct mwp_hdrs h = { .opcode = opcode, .dqpn = q->qp_num, .psn = psn,
			      .ackreq = true };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	wire_peer_flow(&pf, &fl);
	memset(data, 0, sizeof(data));
	memcpy(data, value, sizeof(value));
	h.reth.va = va;
	h.reth.rkey = rkey;
	h.reth.dmalen = dmalen;
	h.atmeth.va = va;
	h.atmeth.rkey = rkey;
	h.atmeth.swap_add = 5;
	cr_assert_eq(mwp_build(m, &fl, &h, len != 0 ? data : NULL, len, NULL), 0);
	return m;
}

static void
send_aw(uint32_t psn, uint64_t va, uint32_t rkey)
{
	struct rte_mbuf *m = frame_to(qp, AW, psn, va, rkey, 8, 8);

	wire_feed(&m, 1);
}

/* Every byte of the region is FILL but [off, off + n), which holds the
 * value. */
static void
expect_memory(uint64_t off, uint32_t n)
{
	for (uint64_t i = 0; i < BUF_LEN; i++) {
		const uint8_t want = i >= off && i < off + n ? value[i - off] : FILL;

		if (buf[i] != want)
			cr_assert_fail("byte %lu is 0x%02x, not 0x%02x", (unsigned long)i,
				       buf[i], want);
	}
}

static void
expect_untouched(void)
{
	expect_memory(0, 0);
}

/* The one answer so far: opcode, syndrome, PSN. */
static void
expect_answer(uint8_t opcode, uint8_t syndrome, uint32_t psn)
{
	cr_assert_eq(wire.nb_frames, 1, "%u answers", wire.nb_frames);
	cr_expect_eq(wire.frames[0].opcode, opcode, "opcode 0x%02x", wire.frames[0].opcode);
	cr_expect_eq(wire.frames[0].syndrome, syndrome, "syndrome 0x%02x",
		     wire.frames[0].syndrome);
	cr_expect_eq(wire.frames[0].psn, psn);
	cr_expect_eq(wire.frames[0].dqpn, 0x99);
	cr_expect_eq(wire.frames[0].payload_len, 0);
}

static void
expect_done(uint32_t psn)
{
	expect_answer(ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY,
		      ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID, psn);
}

/* A fatal NAK for denial d, counted once by reason, QP in ERR. */
static void
expect_denied(enum mwp_deny d)
{
	expect_answer(ROCE_OP_RC_ACKNOWLEDGE, mwp_deny_syndrome(d), 0);
	cr_expect_eq(wire.st.denied[d], 1, "denied[%s] %lu", mwp_deny_name(d),
		     (unsigned long)wire.st.denied[d]);
	cr_expect_eq(to_mqp(qp)->resp.st.denied[d], 1);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
	cr_expect_eq(to_mqp(qp)->resp.st.atomics, 0);
}

static void
set_qp_access(struct ibv_qp *q, unsigned int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .qp_access_flags = access };

	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), 0);
}

/* A Type 2 window on qp over buf[off, off + len) with access. */
static uint32_t
window(uint64_t off, uint64_t len, unsigned int access)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_not_null(mw);
	cr_assert_eq(post_bind2(qp, mw, mr, (uintptr_t)buf + off, len, access, 0x42, 7), 0);
	expect_wc(7, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	return mw->rkey;
}

/* ---- accepted ---- */

Test(resp_aw, region_with_remote_write_takes_the_8_bytes_in_place)
{
	send_aw(0, (uintptr_t)buf + 4096, mr->rkey);
	expect_done(0);
	expect_memory(4096, 8);
	cr_expect_eq(to_mqp(qp)->resp.epsn, 1);
	cr_expect_eq(to_mqp(qp)->resp.msn, 1);
	cr_expect_eq(to_mqp(qp)->resp.st.atomics, 1);
	cr_expect_eq(wire.st.acks, 0, "a READ RESPONSE, not an ACK");
	/* the next request goes on at PSN 1 */
	send_aw(1, (uintptr_t)buf + 4096, mr->rkey);
	cr_expect_eq(wire.frames[1].psn, 1);
	cr_expect_eq(qp->state, IBV_QPS_RTS);
}

Test(resp_aw, a_region_with_remote_write_only_is_enough)
{
	struct ibv_mr *w = mwp_reg_mr(pd, buf + 8192, 4096,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	cr_assert_not_null(w);
	send_aw(0, (uintptr_t)buf + 8192 + 4088, w->rkey);	/* its last 8 bytes */
	expect_done(0);
	expect_memory(8192 + 4088, 8);
}

Test(resp_aw, va_based_window_with_remote_write)
{
	uint32_t k = window(1024, 256, IBV_ACCESS_REMOTE_WRITE);

	send_aw(0, (uintptr_t)buf + 1024 + 248, k);	/* the window's last 8 */
	expect_done(0);
	expect_memory(1024 + 248, 8);
}

Test(resp_aw, zero_based_window_takes_an_offset)
{
	uint32_t k = window(2048, 64, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);

	send_aw(0, 56, k);
	expect_done(0);
	expect_memory(2048 + 56, 8);
}

Test(resp_aw, a_duplicate_is_answered_again_and_never_stored_again)
{
	struct rte_mbuf *m;

	send_aw(0, (uintptr_t)buf + 4096, mr->rkey);
	expect_done(0);
	/* someone else writes the word since */
	memset(buf + 4096, 0x5a, 8);
	m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 8, 8);
	wire_feed(&m, 1);
	cr_assert_eq(wire.nb_frames, 2);
	cr_expect_eq(wire.frames[1].opcode, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY);
	cr_expect_eq(wire.frames[1].psn, 0);
	cr_expect_eq(wire.frames[1].payload_len, 0);
	for (int i = 0; i < 8; i++)
		cr_expect_eq(buf[4096 + i], 0x5a, "stored again");
	cr_expect_eq(wire.st.duplicates, 1);
	cr_expect_eq(to_mqp(qp)->resp.st.atomics, 1);
	cr_expect_eq(qp->state, IBV_QPS_RTS);
}

Test(resp_aw, a_duplicate_too_old_for_the_cache_is_dropped)
{
	struct rte_mbuf *m;

	for (uint32_t psn = 0; psn <= MWP_ATOMIC_CACHE; psn++)
		send_aw(psn, (uintptr_t)buf + 4096, mr->rkey);
	cr_assert_eq(wire.nb_frames, MWP_ATOMIC_CACHE + 1);
	m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 8, 8);
	wire_feed(&m, 1);
	cr_expect_eq(wire.nb_frames, MWP_ATOMIC_CACHE + 1, "no answer");
	cr_expect_eq(wire.st.drop[MWP_DROP_DUPLICATE], 1);
}

Test(resp_aw, its_answer_waits_behind_read_responses)
{
	struct rte_mbuf *tx[64];
	struct rte_mbuf *m;
	uint16_t k;

	/* a 5-packet READ with room for two responses: three wait */
	m = frame_to(qp, ROCE_OP_RC_RDMA_READ_REQUEST, 0, (uintptr_t)buf, mr->rkey,
		     5 * MTU, 0);
	k = mwp_queue_rx(wire.q, &m, 1, tx, 2);
	cr_assert_eq(k, 2);
	for (uint16_t i = 0; i < k; i++) {
		wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
	send_aw(5, (uintptr_t)buf + 8192, mr->rkey);
	cr_expect_eq(wire.nb_frames, 2, "executed, its answer waits");
	expect_memory(8192, 8);
	wire_pump();
	cr_assert_eq(wire.nb_frames, 6);
	cr_expect_eq(wire.frames[4].opcode, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST);
	cr_expect_eq(wire.frames[5].opcode, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY);
	cr_expect_eq(wire.frames[5].psn, 5);
	cr_expect_eq(wire.frames[5].payload_len, 0);
}

/* ---- refused: nothing written ---- */

Test(resp_aw, a_region_without_remote_write_is_access_denied)
{
	/* remote atomic is not the right ATOMIC WRITE needs */
	struct ibv_mr *a = mwp_reg_mr(pd, buf + 8192, 4096,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
				      IBV_ACCESS_REMOTE_READ);

	cr_assert_not_null(a);
	send_aw(0, (uintptr_t)buf + 8192, a->rkey);
	expect_denied(MWP_DENY_ACCESS);
	expect_untouched();
}

Test(resp_aw, a_window_without_remote_write_is_access_denied)
{
	uint32_t k = window(1024, 256, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ);

	send_aw(0, (uintptr_t)buf + 1024, k);
	expect_denied(MWP_DENY_ACCESS);
	expect_untouched();
}

Test(resp_aw, just_past_a_va_based_windows_bound)
{
	uint32_t k = window(1024, 256, IBV_ACCESS_REMOTE_WRITE);

	/* 4 bytes inside, 4 past: the region would allow it */
	send_aw(0, (uintptr_t)buf + 1024 + 252, k);
	expect_denied(MWP_DENY_BOUNDS);
	expect_untouched();
}

Test(resp_aw, at_a_va_based_windows_end)
{
	uint32_t k = window(1024, 256, IBV_ACCESS_REMOTE_WRITE);

	send_aw(0, (uintptr_t)buf + 1024 + 256, k);
	expect_denied(MWP_DENY_BOUNDS);
	expect_untouched();
}

Test(resp_aw, before_a_va_based_window)
{
	uint32_t k = window(1024, 256, IBV_ACCESS_REMOTE_WRITE);

	send_aw(0, (uintptr_t)buf + 1016, k);
	expect_denied(MWP_DENY_BOUNDS);
	expect_untouched();
}

Test(resp_aw, just_past_a_zero_based_windows_bound)
{
	uint32_t k = window(2048, 64, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);

	send_aw(0, 64, k);
	expect_denied(MWP_DENY_BOUNDS);
	expect_untouched();
}

Test(resp_aw, a_zero_based_offset_that_wraps)
{
	uint32_t k = window(2048, 64, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);

	send_aw(0, UINT64_MAX - 3, k);
	expect_denied(MWP_DENY_BOUNDS);
	expect_untouched();
}

Test(resp_aw, past_the_regions_end)
{
	send_aw(0, (uintptr_t)buf + BUF_LEN - 4, mr->rkey);
	expect_denied(MWP_DENY_BOUNDS);
	expect_untouched();
}

Test(resp_aw, unaligned_is_an_invalid_request_after_the_key)
{
	send_aw(0, (uintptr_t)buf + 4100, mr->rkey);
	expect_denied(MWP_DENY_UNALIGNED);
	expect_untouched();
}

Test(resp_aw, unaligned_through_a_zero_based_window)
{
	uint32_t k = window(2048, 64, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);

	send_aw(0, 4, k);
	expect_denied(MWP_DENY_UNALIGNED);
	expect_untouched();
}

Test(resp_aw, an_unknown_key)
{
	send_aw(0, (uintptr_t)buf + 4096, mr->rkey ^ 0x55);
	expect_denied(MWP_DENY_UNKNOWN_KEY);
	expect_untouched();
}

Test(resp_aw, a_zero_dma_length_does_not_skip_the_key)
{
	/* C9-88 is a READ's and a WRITE's: here the key is still checked */
	struct rte_mbuf *m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, 0xdead00, 0, 8);

	wire_feed(&m, 1);
	expect_denied(MWP_DENY_UNKNOWN_KEY);
	expect_untouched();
}

Test(resp_aw, a_dma_length_other_than_8)
{
	struct rte_mbuf *m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 16, 8);

	wire_feed(&m, 1);
	expect_denied(MWP_DENY_WRITE_LENGTH);
	expect_untouched();
}

Test(resp_aw, a_dma_length_of_0)
{
	struct rte_mbuf *m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 0, 8);

	wire_feed(&m, 1);
	expect_denied(MWP_DENY_WRITE_LENGTH);
	expect_untouched();
}

Test(resp_aw, a_payload_shorter_than_8)
{
	struct rte_mbuf *m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 8, 4);

	wire_feed(&m, 1);
	expect_denied(MWP_DENY_WRITE_LENGTH);
	expect_untouched();
}

Test(resp_aw, a_payload_longer_than_8)
{
	struct rte_mbuf *m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 8, 16);

	wire_feed(&m, 1);
	expect_denied(MWP_DENY_WRITE_LENGTH);
	expect_untouched();
}

Test(resp_aw, no_payload)
{
	struct rte_mbuf *m = frame_to(qp, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 8, 0);

	wire_feed(&m, 1);
	expect_denied(MWP_DENY_WRITE_LENGTH);
	expect_untouched();
}

Test(resp_aw, a_qp_without_remote_write_refuses_before_the_key)
{
	/* remote atomic on the QP is not enough either */
	set_qp_access(qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
			  IBV_ACCESS_REMOTE_READ);
	send_aw(0, (uintptr_t)buf + 4096, mr->rkey ^ 0x55);
	expect_denied(MWP_DENY_QP_ACCESS);
	cr_expect_eq(wire.st.denied[MWP_DENY_UNKNOWN_KEY], 0, "no key work");
	expect_untouched();
}

Test(resp_aw, a_qp_with_remote_write_only_accepts_it)
{
	set_qp_access(qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	send_aw(0, (uintptr_t)buf + 4096, mr->rkey);
	expect_done(0);
	expect_memory(4096, 8);
}

Test(resp_aw, a_window_of_another_qp)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct rte_mbuf *m;

	cr_assert_not_null(mw);
	cr_assert_eq(post_bind2(qp_b, mw, mr, (uintptr_t)buf + 1024, 256,
				IBV_ACCESS_REMOTE_WRITE, 0x42, 7), 0);
	expect_wc(7, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	m = frame_to(qp, AW, 0, (uintptr_t)buf + 1024, mw->rkey, 8, 8);
	wire_feed(&m, 1);
	expect_denied(MWP_DENY_WRONG_QP);
	expect_untouched();
}

Test(resp_aw, an_invalidated_window)
{
	uint32_t k = window(1024, 256, IBV_ACCESS_REMOTE_WRITE);

	cr_assert_eq(post_local_inv(qp, k, 8, true), 0);
	expect_wc(8, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	send_aw(0, (uintptr_t)buf + 1024, k);
	expect_denied(MWP_DENY_UNKNOWN_KEY);
	expect_untouched();
}

Test(resp_aw, a_uc_qp_drops_it_as_another_transports)
{
	struct ibv_qp *uc = make_qp(pd, IBV_QPT_UC, 16, true);
	struct rte_mbuf *m;

	wire_attach(uc);
	m = frame_to(uc, AW, 0, (uintptr_t)buf + 4096, mr->rkey, 8, 8);
	wire_feed(&m, 1);
	cr_expect_eq(wire.nb_frames, 0);
	cr_expect_eq(wire.st.drop[MWP_DROP_WRONG_TRANSPORT], 1);
	expect_untouched();
}

Test(resp_aw, a_sequence_gap_is_naked_and_nothing_is_written)
{
	send_aw(3, (uintptr_t)buf + 4096, mr->rkey);
	expect_answer(ROCE_OP_RC_ACKNOWLEDGE, ROCE_AETH_NAK_PSN_SEQ, 0);
	cr_expect_eq(wire.st.drop[MWP_DROP_PSN_AHEAD], 1);
	expect_untouched();
}
