/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA ATOMIC WRITE (IBA 1.5) at the requester, on the test wire
 * (wire_fixture.h): what ibv_post_send accepts (RC only; the value from
 * SGEs or inline data of exactly 8 bytes), the frame it sends (opcode
 * 0x1d, RETH with DMA length 8, the value, AckReq), how it completes
 * (IBV_WC_ATOMIC_WRITE, byte_len 8) on the zero-length READ RESPONSE ONLY
 * rxe and mwpath answer with or on an ACK at or past it, what a wrong
 * answer does, retries, fences and max_rd_atomic as an atomic's; and
 * both ends of the wire mwpath's: the value lands in the peer's memory.
 */
#include "wire_fixture.h"

#define REMOTE_VA UINT64_C(0x7000000)
#define RKEY 0x4242

static void
setup(void)
{
	wire_setup();
}

TestSuite(req_aw, .init = setup, .fini = wire_teardown);

static const uint8_t value[8] = { 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 };

/* An RC (or UC) QP on the wire: timeout, retry_cnt, max_rd_atomic and
 * the peer's QPN. */
static struct ibv_qp *
aw_qp_to(enum ibv_qp_type type, uint8_t timeout, uint8_t retry, uint8_t max_rd,
	 uint32_t dest)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 4,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};
	struct ibv_qp *q = mwp_create_qp(pd, &ia);
	struct ibv_qp_attr a = { 0 };
	const bool rc = type == IBV_QPT_RC;

	cr_assert_not_null(q);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	inet_pton(AF_INET6, "::ffff:192.0.2.2", a.ah_attr.grh.dgid.raw);
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		(rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)), 0);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = 7;
	a.max_rd_atomic = max_rd;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
		(rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		 IBV_QP_MAX_QP_RD_ATOMIC : 0)), 0);
	wire_attach(q);
	return q;
}

static struct ibv_qp *
aw_qp(enum ibv_qp_type type, uint8_t timeout, uint8_t retry, uint8_t max_rd)
{
	return aw_qp_to(type, timeout, retry, max_rd, 0x99);
}

static struct ibv_qp *
rc_qp(void)
{
	return aw_qp(IBV_QPT_RC, 14, 7, 4);
}

/* An 8-byte RDMA WRITE from buf. */
static void
post_write(struct ibv_qp *q, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	wr.wr.rdma.remote_addr = REMOTE_VA + 64;
	wr.wr.rdma.rkey = RKEY;
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
}

/* Post an ATOMIC WRITE of the SGEs given (flags besides SIGNALED). */
static int
post_aw_sges(struct ibv_qp *q, uint64_t wr_id, struct ibv_sge *sge, int n, unsigned int flags)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_ATOMIC_WRITE,
				  .send_flags = IBV_SEND_SIGNALED | flags,
				  .sg_list = sge, .num_sge = n }, *bad = NULL;

	wr.wr.rdma.remote_addr = REMOTE_VA;
	wr.wr.rdma.rkey = RKEY;
	return ibv_post_send(q, &wr, &bad);
}

/* The value at buf + off, posted from there (one 8-byte SGE). */
static void
post_aw(struct ibv_qp *q, uint64_t wr_id, uint32_t off, unsigned int flags)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = 8, .lkey = mr->lkey };

	memcpy(buf + off, value, 8);
	cr_assert_eq(post_aw_sges(q, wr_id, &sge, 1, flags), 0);
}

static void
pump(int n)
{
	for (int i = 0; i < n; i++)
		wire_pump();
}

static unsigned int
requests(unsigned int from, const struct wire_frame **out, unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = from; i < wire.nb_frames && k < max; i++)
		if (wire.frames[i].opcode != 0xff &&
		    (roce_opcode[wire.frames[i].opcode].mask & ROCE_M_REQ))
			out[k++] = &wire.frames[i];
	return k;
}

static void
done_resp(struct ibv_qp *q, uint32_t psn)
{
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, psn, NULL, 0);
}

static void
expect_aw_frame(const struct wire_frame *f, uint32_t psn)
{
	cr_expect_eq(f->opcode, ROCE_OP_RC_ATOMIC_WRITE);
	cr_expect_eq(f->psn, psn);
	cr_expect_eq(f->va, REMOTE_VA);
	cr_expect_eq(f->rkey, RKEY);
	cr_expect_eq(f->dmalen, 8);
	cr_expect_eq(f->payload_len, 8);
	cr_expect(f->ackreq, "AckReq, as every atomic");
	cr_expect_arr_eq(f->payload, value, 8);
}

/* ---- posting ---- */

Test(req_aw, it_is_posted_only_on_rc)
{
	struct ibv_qp *uc = aw_qp(IBV_QPT_UC, 0, 0, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *ud = make_qp_ia(pd, &ia, true);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };

	cr_expect_eq(post_aw_sges(uc, 1, &sge, 1, 0), EINVAL);
	cr_expect_eq(post_aw_sges(ud, 1, &sge, 1, 0), EINVAL);
	cr_expect_eq(post_aw_sges(rc_qp(), 1, &sge, 1, 0), 0);
}

Test(req_aw, the_value_must_total_exactly_8_bytes)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_sge one[1] = { { .addr = (uintptr_t)buf, .length = 4, .lkey = mr->lkey } };
	struct ibv_sge two[2] = {
		{ .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey },
		{ .addr = (uintptr_t)buf + 8, .length = 8, .lkey = mr->lkey },
	};
	struct ibv_wc wc;

	cr_expect_eq(post_aw_sges(q, 1, NULL, 0, 0), EINVAL, "no value");
	cr_expect_eq(post_aw_sges(q, 1, one, 1, 0), EINVAL, "4 bytes");
	one[0].length = 16;
	cr_expect_eq(post_aw_sges(q, 1, one, 1, 0), EINVAL, "16 bytes");
	cr_expect_eq(post_aw_sges(q, 1, two, 2, 0), EINVAL, "8 + 8 bytes");
	one[0].length = 4;
	cr_expect_eq(post_aw_sges(q, 1, one, 1, IBV_SEND_INLINE), EINVAL, "inline 4");
	one[0].length = 0;
	cr_expect_eq(post_aw_sges(q, 1, one, 1, IBV_SEND_INLINE), EINVAL, "inline 0");
	/* nothing was posted, and the QP goes on */
	pump(3);
	cr_expect_eq(wire.nb_frames, 0);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0);
	cr_expect_eq(q->state, IBV_QPS_RTS);
}

Test(req_aw, two_sges_of_4_make_one_value)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)buf + 100, .length = 4, .lkey = mr->lkey },
		{ .addr = (uintptr_t)buf + 300, .length = 4, .lkey = mr->lkey },
	};
	const struct wire_frame *f[2];

	memcpy(buf + 100, value, 4);
	memcpy(buf + 300, value + 4, 4);
	cr_assert_eq(post_aw_sges(q, 1, sge, 2, 0), 0);
	pump(3);
	cr_assert_eq(requests(0, f, 2), 1);
	expect_aw_frame(f[0], 0);
	done_resp(q, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
}

Test(req_aw, inline_data_of_8_bytes_is_copied_at_post_time)
{
	struct ibv_qp *q = rc_qp();
	uint8_t data[8];
	struct ibv_sge sge = { .addr = (uintptr_t)data, .length = 8, .lkey = 0 };
	const struct wire_frame *f[2];

	memcpy(data, value, 8);
	cr_assert_eq(post_aw_sges(q, 1, &sge, 1, IBV_SEND_INLINE), 0);
	memset(data, 0, sizeof(data));	/* the consumer reuses it */
	pump(3);
	cr_assert_eq(requests(0, f, 2), 1);
	expect_aw_frame(f[0], 0);
	done_resp(q, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
}

Test(req_aw, an_sge_outside_its_region_fails_locally)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_sge sge = { .addr = (uintptr_t)buf + BUF_LEN - 4, .length = 8,
			       .lkey = mr->lkey };

	cr_assert_eq(post_aw_sges(q, 1, &sge, 1, 0), 0);
	expect_wc(1, IBV_WC_LOC_PROT_ERR, IBV_WC_ATOMIC_WRITE);
	cr_expect_eq(q->state, IBV_QPS_ERR);
	cr_expect_eq(requests(0, (const struct wire_frame *[1]){ NULL }, 1), 0);
}

/* ---- completing ---- */

Test(req_aw, the_frame_and_its_completion)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[2];
	struct ibv_wc wc;

	post_aw(q, 1, 64, 0);
	pump(3);
	cr_assert_eq(requests(0, f, 2), 1);
	expect_aw_frame(f[0], 0);
	done_resp(q, 0);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_ATOMIC_WRITE);
	cr_expect_eq(wc.byte_len, 8);
	cr_expect_eq(q->state, IBV_QPS_RTS);
}

Test(req_aw, an_ack_at_its_psn_completes_it_too)
{
	struct ibv_qp *q = rc_qp();

	post_aw(q, 1, 64, 0);
	pump(3);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
}

Test(req_aw, a_coalesced_ack_past_it_completes_it_with_no_implicit_nak)
{
	struct ibv_qp *q = rc_qp();
	unsigned int n;

	post_aw(q, 1, 64, 0);
	post_write(q, 2);
	pump(3);
	n = wire.nb_frames;
	wire_ack(q->qp_num, 1);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	pump(3);
	cr_expect_eq(wire.nb_frames, n, "nothing sent again");
	cr_expect_eq(to_mqp(q)->req.st.implicit_naks, 0);
}

Test(req_aw, an_atomic_ack_is_a_bad_response)
{
	struct ibv_qp *q = rc_qp();

	post_aw(q, 1, 64, 0);
	pump(3);
	wire_atomic_ack(q->qp_num, 0, 5);
	expect_wc(1, IBV_WC_BAD_RESP_ERR, IBV_WC_ATOMIC_WRITE);
	cr_expect_eq(q->state, IBV_QPS_ERR);
}

Test(req_aw, a_read_response_with_data_is_a_bad_response)
{
	struct ibv_qp *q = rc_qp();
	const uint8_t d[8] = { 0 };

	post_aw(q, 1, 64, 0);
	pump(3);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, d, 8);
	expect_wc(1, IBV_WC_BAD_RESP_ERR, IBV_WC_ATOMIC_WRITE);
}

Test(req_aw, a_read_response_first_is_a_bad_response)
{
	struct ibv_qp *q = rc_qp();
	uint8_t d[1024] = { 0 };

	post_aw(q, 1, 64, 0);
	pump(3);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, d, sizeof(d));
	expect_wc(1, IBV_WC_BAD_RESP_ERR, IBV_WC_ATOMIC_WRITE);
}

Test(req_aw, naks_fail_it_with_their_status)
{
	static const struct { uint8_t syn; enum ibv_wc_status st; } c[] = {
		{ ROCE_AETH_NAK_INV_REQ, IBV_WC_REM_INV_REQ_ERR },
		{ ROCE_AETH_NAK_REM_ACC, IBV_WC_REM_ACCESS_ERR },
		{ ROCE_AETH_NAK_REM_OP, IBV_WC_REM_OP_ERR },
	};

	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		struct ibv_qp *q = rc_qp();

		post_aw(q, 10 + i, 64, 0);
		pump(3);
		wire_aeth(q->qp_num, 0, c[i].syn);
		expect_wc(10 + i, c[i].st, IBV_WC_ATOMIC_WRITE);
		cr_expect_eq(q->state, IBV_QPS_ERR);
	}
}

Test(req_aw, a_lost_answer_is_sent_again_after_the_timeout)
{
	struct ibv_qp *q = aw_qp(IBV_QPT_RC, 8, 3, 4);	/* 4.096 us << 8: ~1 ms */
	const struct wire_frame *f[4];

	post_aw(q, 1, 64, 0);
	pump(3);
	cr_assert_eq(requests(0, f, 4), 1);
	wire_advance_us(3000);
	cr_assert_geq(requests(0, f, 4), 2, "sent again");
	expect_aw_frame(f[1], 0);
	done_resp(q, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
}

Test(req_aw, max_rd_atomic_counts_it)
{
	struct ibv_qp *q = aw_qp(IBV_QPT_RC, 14, 7, 1);
	const struct wire_frame *f[4];
	unsigned int n;

	post_aw(q, 1, 64, 0);
	post_aw(q, 2, 72, 0);
	pump(5);
	cr_assert_eq(requests(0, f, 4), 1, "one outstanding at most");
	n = wire.nb_frames;
	done_resp(q, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
	pump(3);
	cr_assert_eq(requests(n, f, 4), 1);
	cr_expect_eq(f[0]->psn, 1);
}

Test(req_aw, a_fenced_request_waits_for_it)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[4];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE,
				  .sg_list = &sge, .num_sge = 1 }, *bad;
	unsigned int n;

	post_aw(q, 1, 64, 0);
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
	pump(5);
	cr_assert_eq(requests(0, f, 4), 1, "the SEND waits for the ATOMIC WRITE");
	n = wire.nb_frames;
	done_resp(q, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
	pump(5);
	cr_assert_eq(requests(n, f, 4), 1);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_SEND_ONLY);
}

/* ---- both ends mwpath's ---- */

/* A second QP sends to the fixture's qp (its frames carried to qp by the
 * test, as from the peer), which stores the value through a window and
 * answers; its answer carried back completes the work request. */
Test(req_aw, mwpath_to_mwpath_through_a_window)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp *a = aw_qp_to(IBV_QPT_RC, 14, 7, 4, qp->qp_num);
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 64, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_ATOMIC_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc = { 0 };
	unsigned int seen = 0;
	int got = 0;

	cr_assert_not_null(mw);
	memset(buf + 4096, 0, 24);
	memcpy(buf + 64, value, 8);
	cr_assert_eq(post_bind2(qp, mw, mr, (uintptr_t)buf + 4096, 16,
				IBV_ACCESS_REMOTE_WRITE, 0x11, 7), 0);
	expect_wc(7, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096 + 8;
	wr.wr.rdma.rkey = mw->rkey;
	cr_assert_eq(ibv_post_send(a, &wr, &bad), 0);
	for (int round = 0; round < 20 && got == 0; round++) {
		wire_pump();
		for (; seen < wire.nb_frames; seen++) {
			const struct wire_frame f = wire.frames[seen];

			if (f.opcode == ROCE_OP_RC_ATOMIC_WRITE) {
				struct wire_frame pf = { .sqpn = qp->qp_num };
				struct mwp_hdrs h = { .opcode = f.opcode, .dqpn = f.dqpn,
						      .psn = f.psn, .ackreq = true,
						      .reth = { f.va, f.rkey, f.dmalen } };
				struct mwp_flow fl;
				struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

				cr_assert_not_null(m);
				cr_assert_eq(f.dqpn, qp->qp_num);
				wire_peer_flow(&pf, &fl);
				cr_assert_eq(mwp_build(m, &fl, &h, f.payload, f.payload_len,
						       NULL), 0);
				wire_feed(&m, 1);
			} else if (f.opcode == ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY) {
				cr_expect_eq(f.payload_len, 0);
				done_resp(a, f.psn);
			}
		}
		got = ibv_poll_cq(cq, 1, &wc);
	}
	cr_assert_eq(got, 1, "completed");
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_ATOMIC_WRITE);
	cr_expect_arr_eq(buf + 4096 + 8, value, 8);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(buf[4096 + i], 0, "before the target");
		cr_expect_eq(buf[4096 + 16 + i], 0, "after the target");
	}
}
