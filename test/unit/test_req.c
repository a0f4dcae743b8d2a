/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester (lib/req/roce_req.c) on the test wire (wire_fixture.h): what
 * it sends for every operation, how it takes ACKs, NAKs, RNR NAKs, READ
 * responses and ATOMIC ACKs, and its retransmission state machine (IBA
 * 9.7.5.2, 9.7.6) on a clock the tests move: go-back-N on sequence and
 * implicit NAKs, the local ACK timer and retry_cnt, the RNR timer and
 * rnr_retry, max_rd_atomic.  Bad answers (too long, never asked, beyond
 * the last PSN sent) are counted and write nothing outside the WQE's
 * buffers.
 */
#include "mwp_neigh_priv.h"
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "wire_fixture.h"

#define MTU 1024
#define REMOTE_VA UINT64_C(0x7000000)
#define RKEY 0x4242

static void
setup(void)
{
	wire_setup();
}

TestSuite(req, .init = setup, .fini = wire_teardown);

/* The send queue depth of the QPs req_qp_rts makes. */
static uint32_t req_max_send_wr = 64;

/* An RC (or UC) QP in RTS with the requester attributes given, not yet
 * on the wire. */
static struct ibv_qp *
req_qp_rts(enum ibv_qp_type type, uint8_t timeout, uint8_t retry, uint8_t rnr,
	   uint8_t max_rd, uint32_t sq_psn, const char *peer_gid)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = req_max_send_wr, .max_recv_wr = 16, .max_send_sge = 4,
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
	inet_pton(AF_INET6, peer_gid, a.ah_attr.grh.dgid.raw);
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x99;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		(rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr;
	a.max_rd_atomic = max_rd;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
		(rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		 IBV_QP_MAX_QP_RD_ATOMIC : 0)), 0);
	return q;
}

/* And on the wire, its peer's MAC known. */
static struct ibv_qp *
req_qp(enum ibv_qp_type type, uint8_t timeout, uint8_t retry, uint8_t rnr,
       uint8_t max_rd, uint32_t sq_psn, const char *peer_gid)
{
	struct ibv_qp *q = req_qp_rts(type, timeout, retry, rnr, max_rd, sq_psn, peer_gid);

	wire_attach(q);
	return q;
}

static struct ibv_qp *
rc_qp(void)
{
	return req_qp(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.2");
}

/* Post one work request with one SGE [buf + off, + len). */
static void
post(struct ibv_qp *q, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	wr.wr.rdma.remote_addr = REMOTE_VA;
	wr.wr.rdma.rkey = RKEY;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = REMOTE_VA;
		wr.wr.atomic.rkey = RKEY;
		wr.wr.atomic.compare_add = 0x1111;
		wr.wr.atomic.swap = 0x2222;
	}
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(0xfeed);
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = 0x80000142;
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
}

static void
pump(int n)
{
	for (int i = 0; i < n; i++)
		wire_pump();
}

/* The frames sent from index `from` on, that are RoCE requests. */
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
fill(uint32_t off, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		buf[off + i] = (uint8_t)(seed + i * 7);
}

/* ---- what goes out ---- */

Test(req, a_send_longer_than_the_mtu_is_segmented_and_completes_on_the_last_ack)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 14, 7, 7, 4, 0x100, "::ffff:192.0.2.2");
	const struct wire_frame *f[8];
	struct ibv_wc wc;

	fill(0, 2500, 3);
	post(q, IBV_WR_SEND, 1, 0, 2500);
	pump(3);
	cr_assert_eq(requests(0, f, 8), 3);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_SEND_FIRST);
	cr_expect_eq(f[1]->opcode, ROCE_OP_RC_SEND_MIDDLE);
	cr_expect_eq(f[2]->opcode, ROCE_OP_RC_SEND_LAST);
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(f[i]->psn, 0x100 + (uint32_t)i);
		cr_expect_eq(f[i]->dqpn, 0x99);
		cr_expect_eq(f[i]->ackreq, i == 2, "AckReq on the last only");
		cr_expect_eq(f[i]->payload_len, i < 2 ? MTU : 2500 - 2 * MTU);
		cr_expect_eq(memcmp(f[i]->payload, buf + i * MTU, 64), 0, "payload of %d", i);
		cr_expect_eq(f[i]->sqpn, q->qp_num, "UDP source port names the QP");
	}
	cr_expect_eq(memcmp(f[0]->dmac, "\x02\x00\x00\x00\x00\x02", 6), 0);
	/* an ACK of the middle PSN is progress, not completion */
	wire_ack(q->qp_num, 0x101);
	pump(3);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0);
	wire_ack(q->qp_num, 0x102);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 0);
}

Test(req, writes_and_sends_carry_their_headers_where_iba_puts_them)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[16];
	unsigned int n;

	post(q, IBV_WR_RDMA_WRITE, 1, 0, 1500);
	post(q, IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0, 100);
	post(q, IBV_WR_SEND_WITH_IMM, 3, 0, 0);
	post(q, IBV_WR_SEND_WITH_INV, 4, 0, 8);
	pump(5);
	n = requests(0, f, 16);
	cr_assert_eq(n, 5);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_RDMA_WRITE_FIRST);
	cr_expect_eq(f[0]->va, REMOTE_VA);
	cr_expect_eq(f[0]->rkey, RKEY);
	cr_expect_eq(f[0]->dmalen, 1500, "the RETH names the whole message");
	cr_expect_eq(f[1]->opcode, ROCE_OP_RC_RDMA_WRITE_LAST);
	cr_expect_eq(f[1]->payload_len, 1500 - MTU);
	cr_expect_eq(f[2]->opcode, ROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	cr_expect_eq(f[3]->opcode, ROCE_OP_RC_SEND_ONLY_WITH_IMMEDIATE);
	cr_expect_eq(f[3]->payload_len, 0);
	cr_expect_eq(f[4]->opcode, ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE);
	for (unsigned int i = 0; i < n; i++)
		cr_expect_eq(f[i]->psn, i, "PSN of request %u", i);
	wire_ack(q->qp_num, 4);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(4, IBV_WC_SUCCESS, IBV_WC_SEND);
}

Test(req, inline_data_is_copied_at_post_time)
{
	struct ibv_qp *q = rc_qp();
	uint8_t data[40];
	struct ibv_sge sge = { .addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0 };
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND, .sg_list = &sge,
				  .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad;
	const struct wire_frame *f[2];

	memset(data, 0xab, sizeof(data));
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
	memset(data, 0, sizeof(data));	/* the consumer reuses its buffer */
	pump(3);
	cr_assert_eq(requests(0, f, 2), 1);
	cr_expect_eq(f[0]->payload_len, 40);
	cr_expect_eq(f[0]->payload[0], 0xab);
	cr_expect_eq(f[0]->payload[39], 0xab);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
}

Test(req, an_inline_send_may_have_empty_sges_that_name_no_buffer)
{
	struct ibv_qp *q = rc_qp();
	uint8_t data[16];
	/* UCX's UD posts a header SGE and a payload SGE, the second empty
	 * and with no address for a message with no payload */
	struct ibv_sge sge[3] = {
		{ .addr = 0, .length = 0, .lkey = 0 },
		{ .addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0 },
		{ .addr = 0, .length = 0, .lkey = 0 },
	};
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND, .sg_list = sge,
				  .num_sge = 3,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad;
	const struct wire_frame *f[2];

	memset(data, 0x5c, sizeof(data));
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
	pump(3);
	cr_assert_eq(requests(0, f, 2), 1);
	cr_expect_eq(f[0]->payload_len, 16);
	cr_expect_eq(f[0]->payload[0], 0x5c);
	cr_expect_eq(f[0]->payload[15], 0x5c);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
}

Test(req, an_ipv6_peer_gets_ipv6_frames)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 14, 7, 7, 4, 0, "2001:db8::2");
	const struct wire_frame *f[2];

	post(q, IBV_WR_SEND, 1, 0, 16);
	pump(3);
	cr_assert_eq(requests(0, f, 2), 1);
	cr_expect(f[0]->ipv6);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
}

Test(req, psns_wrap_through_zero)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 14, 7, 7, 4, 0xfffffe, "::ffff:192.0.2.2");
	const struct wire_frame *f[4];

	post(q, IBV_WR_RDMA_WRITE, 1, 0, 3000);
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(5);
	cr_assert_eq(requests(0, f, 4), 4);
	cr_expect_eq(f[0]->psn, 0xfffffe);
	cr_expect_eq(f[1]->psn, 0xffffff);
	cr_expect_eq(f[2]->psn, 0);
	cr_expect_eq(f[3]->psn, 1);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	wire_ack(q->qp_num, 1);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* ---- READ ---- */

/* A READ's responses land in its SGEs, segment by segment, across SGE
 * boundaries; the next request's PSN is past the responses'. */
Test(req, read_responses_are_reassembled_into_the_sges)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)buf + 100, .length = 1000, .lkey = mr->lkey },
		{ .addr = (uintptr_t)buf + 5000, .length = 2000, .lkey = mr->lkey },
	};
	struct ibv_send_wr wr = { .wr_id = 7, .opcode = IBV_WR_RDMA_READ, .sg_list = sge,
				  .num_sge = 2, .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint8_t data[3000];
	const struct wire_frame *f[4];
	struct ibv_wc wc;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 1);
	memset(buf, 0, 8192);
	wr.wr.rdma.remote_addr = REMOTE_VA;
	wr.wr.rdma.rkey = RKEY;
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
	post(q, IBV_WR_SEND, 8, 0, 4);
	pump(3);
	cr_assert_eq(requests(0, f, 4), 2);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_RDMA_READ_REQUEST);
	cr_expect_eq(f[0]->psn, 0);
	cr_expect_eq(f[0]->dmalen, 3000);
	cr_expect_eq(f[0]->va, REMOTE_VA);
	cr_expect_eq(f[1]->psn, 3, "a READ of 3 responses takes 3 PSNs");
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, data, MTU);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 1, data + MTU, MTU);
	pump(2);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST, 2, data + 2 * MTU,
		       3000 - 2 * MTU);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 7);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_expect_eq(wc.byte_len, 3000);
	cr_expect_eq(memcmp(buf + 100, data, 1000), 0);
	cr_expect_eq(memcmp(buf + 5000, data + 1000, 2000), 0);
	cr_expect_eq(buf[99], 0);
	cr_expect_eq(buf[1100], 0);
	cr_expect_eq(buf[7000], 0, "nothing past the last SGE");
	wire_ack(q->qp_num, 3);
	expect_wc(8, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* A lost middle response: the LAST that follows is an implicit NAK, and
 * the READ is asked again for the rest only, from the missing PSN. */
Test(req, a_lost_read_response_is_asked_again_from_where_it_was_lost)
{
	struct ibv_qp *q = rc_qp();
	uint8_t data[3000];
	const struct wire_frame *f[4];
	unsigned int n;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 5 + 9);
	memset(buf, 0, 4096);
	post(q, IBV_WR_RDMA_READ, 1, 0, 3000);
	pump(3);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, data, MTU);
	n = wire.nb_frames;
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST, 2, data + 2 * MTU,
		       3000 - 2 * MTU);
	pump(3);
	cr_expect_eq(to_mqp(q)->req.st.implicit_naks, 1);
	cr_assert_eq(requests(n, f, 4), 1, "the READ is asked again, once");
	cr_expect_eq(f[0]->psn, 1);
	cr_expect_eq(f[0]->va, REMOTE_VA + MTU);
	cr_expect_eq(f[0]->dmalen, 3000 - MTU);
	/* the responder answers the new request: FIRST at 1, LAST at 2 */
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1, data + MTU, MTU);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST, 2, data + 2 * MTU,
		       3000 - 2 * MTU);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	cr_expect_eq(memcmp(buf, data, 3000), 0);
}

Test(req, a_duplicate_read_response_is_ignored)
{
	struct ibv_qp *q = rc_qp();
	uint8_t a[MTU], b[MTU];

	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	post(q, IBV_WR_RDMA_READ, 1, 0, 2 * MTU);
	pump(3);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, a, MTU);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, b, MTU);
	cr_expect_eq(to_mqp(q)->req.st.dup_resps, 1);
	cr_expect_eq(wire.st.drop[MWP_DROP_RESP_STALE], 1);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST, 1, a, MTU);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	cr_expect_eq(buf[0], 1, "the duplicate wrote nothing");
}

/* A response longer than the READ asked: BAD_RESP_ERR, and not a byte
 * outside the WQE's buffer. */
Test(req, a_read_response_longer_than_asked_fails_and_writes_nothing)
{
	struct ibv_qp *q = rc_qp();
	uint8_t big[MTU];

	memset(big, 0x77, sizeof(big));
	memset(buf, 0x11, 4096);
	post(q, IBV_WR_ATOMIC_FETCH_AND_ADD, 9, 2048, 8);
	post(q, IBV_WR_RDMA_READ, 1, 1000, 100);
	post(q, IBV_WR_SEND, 2, 0, 4);
	pump(3);
	wire_atomic_ack(q->qp_num, 0, 5);
	expect_wc(9, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 1, big, 200);
	expect_wc(1, IBV_WC_BAD_RESP_ERR, IBV_WC_RDMA_READ);
	expect_wc(2, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
	cr_expect_eq(q->state, IBV_QPS_ERR);
	cr_expect_eq(wire.st.drop[MWP_DROP_RESP_BAD], 1);
	for (int i = 0; i < 2048; i++)
		cr_assert_eq(buf[i], 0x11, "byte %d written", i);
}

Test(req, a_zero_length_read_completes_with_an_empty_only_response)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[2];

	post(q, IBV_WR_RDMA_READ, 1, 0, 0);
	pump(3);
	cr_assert_eq(requests(0, f, 2), 1);
	cr_expect_eq(f[0]->dmalen, 0);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, NULL, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
}

Test(req, a_read_response_of_the_wrong_kind_is_a_bad_response)
{
	struct ibv_qp *q = rc_qp();
	uint8_t d[MTU] = { 0 };

	post(q, IBV_WR_RDMA_READ, 1, 0, 3 * MTU);
	pump(3);
	/* a MIDDLE where the first response must be */
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 0, d, MTU);
	expect_wc(1, IBV_WC_BAD_RESP_ERR, IBV_WC_RDMA_READ);
}

/* ---- ATOMIC ---- */

Test(req, atomics_send_their_operands_and_place_the_original_value)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[2];
	struct ibv_wc wc;
	uint64_t v;

	memset(buf, 0, 64);
	post(q, IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0, 8);
	post(q, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 8, 8);
	pump(3);
	cr_assert_eq(requests(0, f, 2), 2);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_COMPARE_SWAP);
	cr_expect_eq(f[0]->compare, 0x1111);
	cr_expect_eq(f[0]->swap_add, 0x2222);
	cr_expect_eq(f[1]->opcode, ROCE_OP_RC_FETCH_ADD);
	cr_expect_eq(f[1]->swap_add, 0x1111, "FETCH_ADD adds compare_add");
	cr_expect_eq(f[0]->va, REMOTE_VA);
	wire_atomic_ack(q->qp_num, 0, UINT64_C(0x0102030405060708));
	wire_atomic_ack(q->qp_num, 1, 77);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.opcode, IBV_WC_COMP_SWAP);
	cr_expect_eq(wc.byte_len, 8);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	memcpy(&v, buf, 8);
	cr_expect_eq(v, UINT64_C(0x0102030405060708), "the original, in host order");
	memcpy(&v, buf + 8, 8);
	cr_expect_eq(v, 77);
}

Test(req, an_atomic_ack_for_a_psn_never_sent_is_a_ghost)
{
	struct ibv_qp *q = rc_qp();
	uint64_t v;

	memset(buf, 0, 8);
	post(q, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 8);
	pump(3);
	wire_atomic_ack(q->qp_num, 5, 0xdead);
	wire_atomic_ack(q->qp_num, 0x800005, 0xdead);
	cr_expect_eq(wire.st.drop[MWP_DROP_RESP_GHOST] + wire.st.drop[MWP_DROP_RESP_STALE], 2);
	memcpy(&v, buf, 8);
	cr_expect_eq(v, 0, "a ghost wrote the result");
	wire_atomic_ack(q->qp_num, 0, 3);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
}

/* ---- ACKs ---- */

Test(req, one_coalesced_ack_completes_every_wqe_it_covers)
{
	struct ibv_qp *q = rc_qp();

	for (int i = 0; i < 5; i++)
		post(q, IBV_WR_SEND, (uint64_t)i, 0, 8);
	pump(5);
	wire_ack(q->qp_num, 4);
	for (int i = 0; i < 5; i++)
		expect_wc((uint64_t)i, IBV_WC_SUCCESS, IBV_WC_SEND);
}

Test(req, duplicate_and_ghost_acks_are_ignored)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_wc wc;

	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(3);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	wire_ack(q->qp_num, 0);			/* again */
	wire_ack(q->qp_num, 0xffffff);		/* before it */
	wire_ack(q->qp_num, 2);			/* beyond the last PSN sent */
	wire_ack(q->qp_num, 0x400000);
	pump(3);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "a bad ACK completed something");
	cr_expect_eq(wire.st.drop[MWP_DROP_RESP_STALE], 2);
	cr_expect_eq(wire.st.drop[MWP_DROP_RESP_GHOST], 2);
	wire_ack(q->qp_num, 1);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_expect_eq(q->state, IBV_QPS_RTS);
}

/* An ACK past a READ whose responses never came: they were lost (an
 * implicit NAK); the READ and everything after it go again. */
Test(req, an_ack_past_a_read_is_an_implicit_nak)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[4];
	unsigned int n;

	post(q, IBV_WR_RDMA_READ, 1, 0, 100);
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(3);
	n = wire.nb_frames;
	wire_ack(q->qp_num, 1);
	pump(3);
	cr_expect_eq(wire.st.drop[MWP_DROP_RESP_IMPLICIT], 1);
	cr_assert_eq(requests(n, f, 4), 2);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_RDMA_READ_REQUEST);
	cr_expect_eq(f[0]->psn, 0);
	cr_expect_eq(f[1]->psn, 1);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, buf + 4096, 100);
	wire_ack(q->qp_num, 1);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* ---- NAKs ---- */

Test(req, a_sequence_nak_sends_again_from_the_naked_psn)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[8];
	unsigned int n;

	fill(0, 3000, 1);
	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_RDMA_WRITE, 2, 0, 3000);	/* PSNs 1..3 */
	pump(5);
	n = wire.nb_frames;
	wire_aeth(q->qp_num, 2, ROCE_AETH_NAK_PSN_SEQ);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);	/* acknowledged by the NAK */
	pump(3);
	cr_assert_eq(requests(n, f, 8), 2, "PSNs 2 and 3 again");
	cr_expect_eq(f[0]->psn, 2);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_RDMA_WRITE_MIDDLE);
	cr_expect_eq(memcmp(f[0]->payload, buf + MTU, 64), 0, "the middle's own bytes");
	cr_expect_eq(f[1]->psn, 3);
	cr_expect_eq(f[1]->opcode, ROCE_OP_RC_RDMA_WRITE_LAST);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 2);
	wire_ack(q->qp_num, 3);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
}

/* After a go-back the old flight's responses keep coming, each "later
 * than expected": one go-back is enough, and they spend no retries (else
 * a lossy, reordering link exhausts retry_cnt in one round trip). */
Test(req, the_old_flights_responses_after_a_go_back_start_no_other_and_spend_no_retries)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 14, 2, 7, 4, 0, "::ffff:192.0.2.2");
	struct mwp_qp *mq = to_mqp(q);
	uint8_t data[3000];
	const struct wire_frame *f[8];
	unsigned int n;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 3 + 1);
	memset(buf, 0, 4096);
	post(q, IBV_WR_RDMA_READ, 1, 0, 3000);		/* PSNs 0..2 */
	pump(3);
	n = wire.nb_frames;
	/* FIRST lost: MIDDLE is an implicit NAK, the READ goes again */
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 1, data + MTU, MTU);
	pump(3);
	cr_assert_eq(requests(n, f, 8), 1);
	cr_expect_eq(mq->req.retry_left, 1);
	/* the rest of the old flight, twice over (a duplicating link) */
	for (int k = 0; k < 2; k++) {
		wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST, 2,
			       data + 2 * MTU, 3000 - 2 * MTU);
		wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 1,
			       data + MTU, MTU);
	}
	pump(3);
	cr_expect_eq(mq->req.st.implicit_naks, 5, "counted");
	cr_expect_eq(requests(n, f, 8), 1, "but not asked again");
	cr_expect_eq(mq->req.retry_left, 1, "and no retry spent");
	cr_expect_eq(q->state, IBV_QPS_RTS);
	/* the new flight completes it; progress gives the retries back */
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, data, MTU);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 1, data + MTU, MTU);
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST, 2, data + 2 * MTU,
		       3000 - 2 * MTU);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	cr_expect_eq(memcmp(buf, data, 3000), 0);
	cr_expect_eq(mq->req.retry_left, 2);
	cr_expect_eq(mq->req.retrying, 0);
}

/* A timeout still goes back while a NAK's go-back gets no answer. */
Test(req, a_timeout_goes_back_again_when_the_naks_go_back_is_lost)
{
	const uint8_t timeout = 10;
	struct ibv_qp *q = req_qp(IBV_QPT_RC, timeout, 7, 7, 4, 0, "::ffff:192.0.2.2");
	const struct wire_frame *f[8];
	unsigned int n;

	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(3);
	wire_aeth(q->qp_num, 0, ROCE_AETH_NAK_PSN_SEQ);
	pump(3);
	n = wire.nb_frames;
	wire_aeth(q->qp_num, 0, ROCE_AETH_NAK_PSN_SEQ);	/* the same NAK, again */
	pump(3);
	cr_expect_eq(requests(n, f, 8), 0);
	wire_advance_us(mwp_ack_timeout_ns(timeout) / 1000 + 20);
	cr_assert_eq(requests(n, f, 8), 2, "the timer sends both again");
	cr_expect_eq(f[0]->psn, 0);
	wire_ack(q->qp_num, 1);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* A go-back points at a WQE that an ACK then completes before anything
 * is sent again: sending resumes at the next WQE's own PSNs. */
Test(req, a_wqe_completed_between_a_go_back_and_the_resend_is_skipped_cleanly)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[8];
	unsigned int n;

	fill(0, 3000, 4);
	post(q, IBV_WR_SEND, 1, 0, 8);			/* PSN 0 */
	post(q, IBV_WR_RDMA_WRITE, 2, 0, 3000);		/* PSNs 1..3 */
	pump(5);
	n = wire.nb_frames;
	/* in one burst: a NAK sends everything again from 0, then the ACK
	 * of 0 completes the SEND */
	{
		struct rte_mbuf *m[2];
		struct wire_frame wf = { .sqpn = q->qp_num };
		struct mwp_flow fl;

		wire_peer_flow(&wf, &fl);
		for (int i = 0; i < 2; i++) {
			m[i] = rte_pktmbuf_alloc(test_mp);
			cr_assert_not_null(m[i]);
		}
		cr_assert_eq(mwp_build_ack(m[0], &fl, q->qp_num, 0, ROCE_AETH_NAK_PSN_SEQ,
					   wire.msn++), 0);
		cr_assert_eq(mwp_build_ack(m[1], &fl, q->qp_num, 0,
					   ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
					   wire.msn++), 0);
		wire_feed(m, 2);
	}
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	pump(5);
	cr_assert_eq(requests(n, f, 8), 3, "the WRITE again, from PSN 1");
	cr_expect_eq(f[0]->psn, 1);
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_RDMA_WRITE_FIRST);
	cr_expect_eq(f[2]->psn, 3);
	cr_expect_eq(memcmp(f[0]->payload, buf, 64), 0);
	wire_ack(q->qp_num, 3);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	cr_expect_eq(q->state, IBV_QPS_RTS);
}

static void
fatal_nak(uint8_t syndrome, enum ibv_wc_status want)
{
	struct ibv_qp *q = rc_qp();

	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_RDMA_WRITE, 2, 0, 8);
	post(q, IBV_WR_SEND, 3, 0, 8);
	pump(3);
	wire_aeth(q->qp_num, 1, syndrome);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(2, want, IBV_WC_RDMA_WRITE);
	expect_wc(3, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
	cr_expect_eq(q->state, IBV_QPS_ERR);
	cr_expect(!mwp_timer_armed(&to_mqp(q)->req.tmr), "a QP in ERR keeps no timer");
}

Test(req, nak_0x61_fails_the_wqe_with_rem_inv_req_err)
{
	fatal_nak(ROCE_AETH_NAK_INV_REQ, IBV_WC_REM_INV_REQ_ERR);
}

Test(req, nak_0x62_fails_the_wqe_with_rem_access_err)
{
	fatal_nak(ROCE_AETH_NAK_REM_ACC, IBV_WC_REM_ACCESS_ERR);
}

Test(req, nak_0x63_fails_the_wqe_with_rem_op_err)
{
	fatal_nak(ROCE_AETH_NAK_REM_OP, IBV_WC_REM_OP_ERR);
}

/* ---- the local ACK timer ---- */

/* A peer that never answers: retry_cnt + 1 tries at the configured
 * interval (4.096 us << timeout), then RETRY_EXC_ERR. */
Test(req, a_silent_peer_gives_retry_exc_err_after_retry_cnt_plus_one_tries)
{
	const uint8_t timeout = 10, retry = 3;
	const uint64_t t_us = mwp_ack_timeout_ns(timeout) / 1000;	/* 4194 */
	struct ibv_qp *q = req_qp(IBV_QPT_RC, timeout, retry, 7, 4, 0, "::ffff:192.0.2.2");
	const struct wire_frame *f[16];
	unsigned int n;

	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(2);
	wire_advance_us(t_us * (retry + 2));
	n = requests(0, f, 16);
	cr_expect_eq(n, 2 * (retry + 1), "%u requests: retry_cnt + 1 tries of two", n);
	for (unsigned int i = 2; i + 1 < n; i += 2) {
		uint64_t gap_us = (f[i]->when - f[i - 2]->when) * 1000000 / wire.hz;

		cr_expect_eq(f[i]->psn, 0, "go-back-N from the oldest");
		cr_expect_eq(f[i + 1]->psn, 1);
		cr_expect(gap_us >= t_us && gap_us <= t_us + 40,
			  "try %u after %lu us, timeout %lu us", i / 2, (unsigned long)gap_us,
			  (unsigned long)t_us);
	}
	expect_wc(1, IBV_WC_RETRY_EXC_ERR, IBV_WC_SEND);
	expect_wc(2, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
	cr_expect_eq(to_mqp(q)->req.st.timeouts, retry + 1);
	cr_expect_eq(q->state, IBV_QPS_ERR);
}

/* The timer measures from the last progress: a peer that answers slowly
 * but surely never times out. */
Test(req, progress_restarts_the_ack_timer)
{
	const uint64_t t_us = mwp_ack_timeout_ns(10) / 1000;
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 10, 0, 7, 4, 0, "::ffff:192.0.2.2");

	for (int i = 0; i < 6; i++)
		post(q, IBV_WR_SEND, (uint64_t)i, 0, 8);
	pump(3);
	for (int i = 0; i < 6; i++) {
		wire_advance_us(t_us * 3 / 4);
		wire_ack(q->qp_num, (uint32_t)i);
		expect_wc((uint64_t)i, IBV_WC_SUCCESS, IBV_WC_SEND);
	}
	cr_expect_eq(to_mqp(q)->req.st.timeouts, 0);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 0);
}

/* A full send queue: max_send_wr work requests are held from post to
 * completion, the next post gets ENOMEM, and a completion makes room. */
Test(req, a_post_beyond_max_send_wr_gets_enomem_until_one_completes)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 99, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	for (int i = 0; i < 64; i++)
		post(q, IBV_WR_SEND, (uint64_t)i, 0, 8);
	cr_expect_eq(mwp_qp_sq_outstanding(q), 64);
	cr_expect_eq(ibv_post_send(q, &wr, &bad), ENOMEM);
	pump(3);
	cr_expect_eq(ibv_post_send(q, &wr, &bad), ENOMEM, "sent is not completed");
	wire_ack(q->qp_num, 0);
	expect_wc(0, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_expect_eq(mwp_qp_sq_outstanding(q), 63);
	cr_expect_eq(ibv_post_send(q, &wr, &bad), 0);
	cr_expect_eq(ibv_post_send(q, &wr, &bad), ENOMEM);
}

/* Several threads post to one QP at once, as verbs allows: every work
 * request is taken once, each thread's in its order, and no more than
 * max_send_wr are held at any time (the rest get ENOMEM and try
 * again). */
#define POSTERS 4
#define PER_POSTER 400

struct poster {
	struct ibv_qp *q;
	uint32_t id;
	uint32_t full;			/* ENOMEMs met */
	int bad;			/* another error */
	uint32_t polled;		/* its completions the main thread has */
};

/* A poster has at most this many posted and not yet polled: the four
 * together can ask for more than max_send_wr (ENOMEM) but never more
 * completions than the CQ holds (a slot is free once its completion is
 * made, before it is polled, as rxe does). */
#define POSTER_AHEAD 24

static void *
poster_main(void *arg)
{
	struct poster *p = arg;

	for (uint32_t i = 0; i < PER_POSTER;) {
		if (i - __atomic_load_n(&p->polled, __ATOMIC_ACQUIRE) >= POSTER_AHEAD) {
			sched_yield();
			continue;
		}
		struct ibv_sge sge = { .addr = (uintptr_t)buf + 64 * p->id, .length = 8,
				       .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)p->id << 32 | i,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED,
					  .sg_list = &sge, .num_sge = 1 }, *bad;
		const int ret = ibv_post_send(p->q, &wr, &bad);

		if (ret == ENOMEM) {
			p->full++;
			sched_yield();
			continue;
		}
		if (ret != 0) {
			p->bad = ret;
			break;
		}
		i++;
	}
	return NULL;
}

Test(req, several_threads_post_to_one_qp_and_each_wqe_is_sent_once_in_order)
{
	struct ibv_qp *q = rc_qp();
	struct poster p[POSTERS];
	pthread_t t[POSTERS];
	uint32_t next[POSTERS] = { 0 }, got = 0, max_held = 0;
	const uint64_t give_up = rte_rdtsc() + rte_get_tsc_hz() * 60;

	wire.auto_answer = true;
	for (uint32_t i = 0; i < POSTERS; i++) {
		p[i] = (struct poster){ .q = q, .id = i };
		cr_assert_eq(pthread_create(&t[i], NULL, poster_main, &p[i]), 0);
	}
	while (got < POSTERS * PER_POSTER && rte_rdtsc() < give_up) {
		struct ibv_wc wc[16];
		int n;

		wire_pump();
		max_held = RTE_MAX(max_held, mwp_qp_sq_outstanding(q));
		n = ibv_poll_cq(cq, 16, wc);
		for (int k = 0; k < n; k++) {
			const uint32_t id = (uint32_t)(wc[k].wr_id >> 32);

			cr_assert_eq(wc[k].status, IBV_WC_SUCCESS, "status %d (%s), wr_id %#lx",
				     wc[k].status, ibv_wc_status_str(wc[k].status),
				     (unsigned long)wc[k].wr_id);
			cr_assert_lt(id, POSTERS);
			cr_assert_eq((uint32_t)wc[k].wr_id, next[id], "poster %u: %u, expected %u",
				     id, (uint32_t)wc[k].wr_id, next[id]);
			next[id]++;
			__atomic_store_n(&p[id].polled, next[id], __ATOMIC_RELEASE);
			got++;
		}
	}
	for (uint32_t i = 0; i < POSTERS; i++) {
		cr_assert_eq(pthread_join(t[i], NULL), 0);
		cr_expect_eq(p[i].bad, 0);
	}
	cr_expect_eq(got, POSTERS * PER_POSTER);
	cr_expect_leq(max_held, 64);
	cr_expect_eq(mwp_qp_sq_outstanding(q), 0);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 0);
}

/* Two posters at once on one QP whose send queue nobody drains (it is
 * not on the wire), each posting half its depth: every post is taken, in
 * a slot of its own, the queue holds exactly max_send_wr, and the next
 * post gets ENOMEM.  Long enough that on two cores they overlap. */
#define RACE_DEPTH 32768
#define RACERS 2

struct racer {
	struct ibv_qp *q;
	uint32_t id, in;
};

static void *
racer_main(void *arg)
{
	struct racer *r = arg;

	for (uint32_t i = 0; i < RACE_DEPTH / RACERS; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)r->id << 32 | i,
					  .opcode = IBV_WR_SEND,
					  .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_send(r->q, &wr, &bad) == 0)
			r->in++;
	}
	return NULL;
}

Test(req, two_posters_at_once_fill_the_send_queue_exactly, .timeout = 60)
{
	static bool seen[RACERS][RACE_DEPTH / RACERS];
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr one = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp *q;

	req_max_send_wr = RACE_DEPTH;
	q = req_qp_rts(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.2");
	for (int round = 0; round < 400; round++) {
		struct racer r[RACERS];
		pthread_t t[RACERS];
		uint32_t n = 0, bad_slot = UINT32_MAX;
		struct mwp_wqe w;

		memset(seen, 0, sizeof(seen));
		for (uint32_t i = 0; i < RACERS; i++) {
			r[i] = (struct racer){ .q = q, .id = i };
			cr_assert_eq(pthread_create(&t[i], NULL, racer_main, &r[i]), 0);
		}
		for (uint32_t i = 0; i < RACERS; i++) {
			cr_assert_eq(pthread_join(t[i], NULL), 0);
			cr_assert_eq(r[i].in, RACE_DEPTH / RACERS, "round %d: poster %u got %u in",
				     round, i, r[i].in);
		}
		cr_assert_eq(mwp_qp_sq_outstanding(q), RACE_DEPTH);
		cr_assert_eq(ibv_post_send(q, &one, &bad), ENOMEM);
		cr_assert_eq(rte_ring_count(to_mqp(q)->sq), RACE_DEPTH);
		/* each post in its own slot, none twice, each poster's in order
		 * (one assertion a round: --full-stats reports every one) */
		while (rte_ring_dequeue_elem(to_mqp(q)->sq, &w, sizeof(w)) == 0) {
			const uint32_t id = (uint32_t)(w.wr_id >> 32), i = (uint32_t)w.wr_id;

			if (id >= RACERS || i >= RACE_DEPTH / RACERS || seen[id][i] ||
			    (i != 0 && !seen[id][i - 1])) {
				bad_slot = n;
				break;
			}
			seen[id][i] = true;
			n++;
		}
		cr_assert_eq(bad_slot, UINT32_MAX, "round %d: slot %u out of place", round, bad_slot);
		cr_assert_eq(n, RACE_DEPTH);
		/* RESET gives the slots back */
		cr_assert_eq(mwp_modify_qp(q, &reset, IBV_QP_STATE), 0);
		cr_assert_eq(mwp_qp_sq_outstanding(q), 0);
		mwp_destroy_qp(q);
		q = req_qp_rts(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.2");
	}
	req_max_send_wr = 64;
}

/* A QP whose send queue was rung is watched: its next posts ring no
 * doorbell and still go out on the next pass; idle for 1 ms it is let go
 * (a membarrier), and a post rings again. */
Test(req, a_watched_send_queue_needs_no_doorbell_until_it_is_idle)
{
	struct ibv_qp *q = rc_qp();
	struct mwp_engine_stats st0, st;
	const struct wire_frame *f[16];
	unsigned int before;

	wire.auto_answer = true;
	post(q, IBV_WR_SEND, 0, 0, 8);
	pump(2);
	expect_wc(0, IBV_WC_SUCCESS, IBV_WC_SEND);
	mwp_engine_stats_get(wire.eng, &st0);
	cr_assert_eq(to_mqp(q)->sq_watched, 1, "watched once rung");
	for (int i = 1; i <= 8; i++) {
		before = wire.nb_frames;
		post(q, IBV_WR_SEND, (uint64_t)i, 0, 8);
		pump(1);
		cr_expect_eq(requests(before, f, 16), 1, "post %d went out on the next pass", i);
		expect_wc((uint64_t)i, IBV_WC_SUCCESS, IBV_WC_SEND);
	}
	mwp_engine_stats_get(wire.eng, &st);
	cr_expect_eq(st.doorbells, st0.doorbells, "a watched QP's posts rang");
	/* idle past 1 ms: let go */
	wire_advance_us(1500);
	mwp_engine_stats_get(wire.eng, &st);
	cr_expect_eq(st.unwatched, st0.unwatched + 1);
	cr_expect_eq(to_mqp(q)->sq_watched, 0);
	before = wire.nb_frames;
	post(q, IBV_WR_SEND, 9, 0, 8);
	pump(1);
	cr_expect_eq(requests(before, f, 16), 1);
	expect_wc(9, IBV_WC_SUCCESS, IBV_WC_SEND);
	mwp_engine_stats_get(wire.eng, &st);
	cr_expect_eq(st.doorbells, st0.doorbells + 1, "the first post after rings");
	cr_expect_eq(to_mqp(q)->sq_watched, 1);
	cr_expect_eq(st.watched, st0.watched + 1);
	/* a QP that leaves its engine leaves the watch list: the passes
	 * after touch nothing of it (the ASan build would see it) */
	cr_assert_eq(mwp_destroy_qp(q), 0);
	pump(3);
}

/* A thread the OS did not run for longer than the ACK timeout: the ACK
 * that came meanwhile waits in the port's ring.  A pass reads it before
 * the engine's timers run (mwp_engine_run_work, the queue's rx,
 * mwp_engine_run_timers, as mwp_lcore_poll does), so nothing goes again.
 * With the timers first, the window went again and the ACK was stale
 * (the congestion test's sender, 32 frames twice). */
Test(req, an_ack_waiting_when_the_thread_comes_back_is_read_before_the_timers)
{
	const uint64_t t_us = mwp_ack_timeout_ns(10) / 1000;
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 10, 7, 7, 4, 0, "::ffff:192.0.2.2");
	const struct wire_frame *f[8];
	unsigned int before;

	for (int i = 0; i < 4; i++)
		post(q, IBV_WR_SEND, (uint64_t)i, 0, 8);
	pump(3);
	before = wire.nb_frames;
	/* the thread is not run for twice the timeout; then, in one pass */
	wire.now += wire.hz / 1000000 * t_us * 2;
	mwp_engine_run_work(wire.eng, wire.now);
	wire_ack(q->qp_num, 3);			/* the queue's rx */
	mwp_engine_run_timers(wire.eng, wire.now);
	pump(3);
	for (int i = 0; i < 4; i++)
		expect_wc((uint64_t)i, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_expect_eq(requests(before, f, 8), 0, "sent again though the ACK had come");
	cr_expect_eq(to_mqp(q)->req.st.timeouts, 0);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 0);
}

/* The wait for the peer's MAC runs on the ACK timer's own timer: the
 * packets that leave once the MAC is known, while that wait's timer is
 * still armed, start the ACK clock all the same.  Before, the wait's
 * timer found a clock never started and sent everything again at once
 * (every perftest run began with a window sent twice). */
Test(req, the_first_packets_after_the_peers_mac_is_learnt_are_not_sent_twice)
{
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 77 };
	const uint64_t t_us = mwp_ack_timeout_ns(14) / 1000;
	struct ibv_qp *q = req_qp_rts(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.77");
	const struct wire_frame *f[8];
	struct rte_ether_addr peer;
	unsigned int before;

	mwp_engine_stop(wire.eng);
	cr_assert_eq(mwp_port_attach_qp(wire.port, q), 0);	/* no MAC */
	mwp_engine_start(wire.eng);
	post(q, IBV_WR_SEND, 1, 0, 8);
	pump(3);
	cr_assert_eq(requests(0, f, 8), 0, "no MAC yet: nothing sent");
	cr_expect_gt(to_mqp(q)->req.st.unresolved, 0);
	/* the answer comes; the next post sends before the wait's timer runs */
	rte_ether_unformat_addr(PEER_MAC, &peer);
	mwp_neigh_learn(wire.port->neigh, ip, &peer, true, true, wire.now);
	before = wire.nb_frames;
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(3);
	cr_assert_eq(requests(before, f, 8), 2, "both SENDs leave");
	/* the wait's timer runs (MAC_RETRY_US), and later ones, short of
	 * the ACK timeout: nothing goes again */
	for (int i = 0; i < 8; i++)
		wire_advance_us(t_us / 16);
	cr_expect_eq(requests(before, f, 8), 2, "sent again before the ACK timeout");
	cr_expect_eq(to_mqp(q)->req.st.timeouts, 0);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 0);
	wire_ack(q->qp_num, 1);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
	/* and a real timeout still sends again */
	post(q, IBV_WR_SEND, 3, 0, 8);
	pump(3);
	for (int i = 0; i < 12 && to_mqp(q)->req.st.timeouts == 0; i++)
		wire_advance_us(t_us / 4);
	pump(3);
	cr_expect_eq(to_mqp(q)->req.st.timeouts, 1);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 1);
}

/* A WQE's first buffer is looked up once, when the WQE joins the window,
 * and kept for its packets while no key leaves the key table: a region
 * deregistered between the check and the packet is looked up again and
 * found gone.  The peer's MAC, not yet known, holds the packet back. */
static struct ibv_qp *
held_qp(void)
{
	struct ibv_qp *q = req_qp_rts(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.77");

	mwp_engine_stop(wire.eng);
	cr_assert_eq(mwp_port_attach_qp(wire.port, q), 0);	/* no MAC */
	mwp_engine_start(wire.eng);
	return q;
}

static void
learn_peer(void)
{
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 77 };
	struct rte_ether_addr peer;

	rte_ether_unformat_addr(PEER_MAC, &peer);
	mwp_neigh_learn(wire.port->neigh, ip, &peer, true, true, wire.now);
	for (int i = 0; i < 4; i++)
		wire_advance_us(1000);	/* the wait's timer: MAC_RETRY_US */
}

static void
post_lkey(struct ibv_qp *q, uint64_t wr_id, uint8_t *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	wr.wr.rdma.remote_addr = REMOTE_VA;
	wr.wr.rdma.rkey = RKEY;
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
}

/* ---- a port whose kernel resolves its neighbours (net_af_xdp) ---- */

static void
kernel_setup(void)
{
	wire_kernel_neigh = true;
	wire_setup();
}

static void
kernel_teardown(void)
{
	wire_kernel_neigh = false;
	wire_teardown();
}

/* ARP and ND are the kernel's there: a peer the table does not know is
 * asked of the kernel's thread (the port's asks), no probe goes on the
 * wire, and what the kernel tells sends the held packets. */
TestSuite(req_kernel, .init = kernel_setup, .fini = kernel_teardown);

Test(req_kernel, a_probe_waits_for_the_kernels_thread_not_the_wire)
{
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 77 };
	struct ibv_qp *q = held_qp();
	const struct wire_frame *f[4];
	struct mwp_port_ask a[4];
	struct rte_ether_addr peer;

	post(q, IBV_WR_SEND, 1, 0, 8);
	pump(3);
	cr_assert_eq(requests(0, f, 4), 0, "no MAC yet: nothing sent");
	for (unsigned int i = 0; i < wire.nb_frames; i++)
		cr_expect_neq(wire.frames[i].opcode, 0xff, "a probe on the wire: the kernel's job");
	cr_assert_eq(mwp_port_neigh_asked(wire.port, a, 4), 1, "the probe waits for the kernel");
	cr_expect_eq(memcmp(a[0].ip, ip, 16), 0);
	cr_expect_eq(a[0].unicast, 0, "a first probe is a broadcast's");
	/* the kernel found it */
	rte_ether_unformat_addr(PEER_MAC, &peer);
	mwp_port_neigh_learn(wire.port, ip, &peer, wire.now);
	for (int i = 0; i < 4; i++)
		wire_advance_us(1000);	/* the wait's timer: MAC_RETRY_US */
	cr_assert_eq(requests(0, f, 4), 1, "the SEND leaves once the kernel told");
	cr_expect_eq(memcmp(f[0]->dmac, peer.addr_bytes, 6), 0);
	cr_expect_eq(mwp_port_neigh_asked(wire.port, a, 4), 0, "nothing more to ask");
}

/* The RDMA CM's resolution (mwp_port_neigh_ask) on such a port: the
 * queues leave the probe to the kernel's thread. */
Test(req_kernel, the_queues_leave_the_cms_probes_to_the_kernels_thread)
{
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 78 };
	struct mwp_port_ask a[4];

	cr_assert_eq(mwp_port_neigh_ask(wire.port, ip, wire.now, NULL), MWP_NEIGH_WAIT);
	pump(3);
	for (unsigned int i = 0; i < wire.nb_frames; i++)
		cr_expect_neq(wire.frames[i].opcode, 0xff, "a probe on the wire: the kernel's job");
	cr_expect_eq(mwp_port_neigh_asked(wire.port, a, 4), 1);
}

Test(req, a_region_deregistered_after_its_wqe_was_checked_fails_it_and_nothing_is_sent)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf + 32768, 4096, ALL_ACCESS);
	struct ibv_qp *q = held_qp();
	const struct wire_frame *f[4];

	cr_assert_not_null(m);
	post_lkey(q, 1, buf + 32768, 64, m->lkey);
	pump(3);
	cr_assert_eq(to_mqp(q)->sq_head != to_mqp(q)->sq_tail, true, "checked, in the window");
	cr_assert_eq(mwp_dereg_mr(m), 0);
	learn_peer();
	pump(3);
	cr_expect_eq(requests(0, f, 4), 0, "a packet from a deregistered region");
	expect_wc(1, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_WRITE);
}

Test(req, a_key_leaving_the_table_after_the_check_leaves_the_payload_as_it_was)
{
	struct ibv_mr *other = mwp_reg_mr(pd, buf + 32768, 4096, ALL_ACCESS);
	struct ibv_qp *q = held_qp();
	const struct wire_frame *f[4];

	cr_assert_not_null(other);
	fill(0, 64, 0x31);
	post_lkey(q, 1, buf, 64, mr->lkey);
	pump(3);
	cr_assert_eq(mwp_dereg_mr(other), 0);	/* the table changes */
	learn_peer();
	pump(3);
	cr_assert_eq(requests(0, f, 4), 1);
	cr_expect_eq(f[0]->payload_len, 64);
	cr_expect_eq(memcmp(f[0]->payload, buf, 64), 0);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
}

/* The QP remembers the last local key it looked up (mwp_wqe.c):
 * deregistered, the key is looked up again and found gone, even for the
 * WQE right after one that used it; a region registered after that is
 * found. */
Test(req, a_key_deregistered_after_a_wqe_used_it_fails_the_next_one)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf + 32768, 4096, ALL_ACCESS), *m2;
	struct ibv_qp *q = rc_qp();
	struct mwp_qp *mq = to_mqp(q);
	const struct wire_frame *f[8];
	uint32_t lkey;

	cr_assert_not_null(m);
	lkey = m->lkey;
	post_lkey(q, 1, buf + 32768, 64, lkey);
	pump(3);
	cr_assert_eq(requests(0, f, 8), 1);
	cr_assert(mq->lkey.key == lkey && mq->lkey.b != NULL, "the key is remembered");
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	post_lkey(q, 2, buf + 32768, 64, lkey);
	pump(3);
	wire_ack(q->qp_num, 1);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	cr_assert_eq(requests(0, f, 8), 2, "the remembered region, used again");

	cr_assert_eq(mwp_dereg_mr(m), 0);
	m2 = mwp_reg_mr(pd, buf + 32768, 4096, ALL_ACCESS);
	cr_assert_not_null(m2);
	cr_assert_neq(m2->lkey, lkey);
	post_lkey(q, 3, buf + 32768, 64, lkey);
	pump(3);
	cr_expect_eq(requests(0, f, 8), 2, "a packet from a deregistered key");
	expect_wc(3, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_WRITE);
	cr_expect_eq(mwp_dereg_mr(m2), 0);
}

/* Between two WQEs of the same key, a region of another key leaves the
 * table: the key is looked up again (and still found). */
Test(req, another_key_leaving_makes_the_qp_look_its_key_up_again)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf + 32768, 4096, ALL_ACCESS);
	struct ibv_mr *other = mwp_reg_mr(pd, buf + 40960, 4096, ALL_ACCESS);
	struct ibv_qp *q = rc_qp();
	struct mwp_qp *mq = to_mqp(q);
	uint64_t gen;

	cr_assert_not_null(m);
	cr_assert_not_null(other);
	post_lkey(q, 1, buf + 32768, 64, m->lkey);
	pump(3);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	gen = mq->lkey.gen;
	cr_assert_eq(mwp_dereg_mr(other), 0);
	post_lkey(q, 2, buf + 32768, 64, m->lkey);
	pump(3);
	wire_ack(q->qp_num, 1);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	cr_expect_gt(mq->lkey.gen, gen, "looked up again under the new generation");
	cr_expect_eq(mq->lkey.key, m->lkey);
	cr_expect_eq(mwp_dereg_mr(m), 0);
}

/* Attach a QP to the wire without stopping the engine (wire_attach
 * stops it around the attach). */
static void
attach_running(struct ibv_qp *q)
{
	struct rte_ether_addr mac;

	rte_ether_unformat_addr(PEER_MAC, &mac);
	cr_assert_eq(mwp_qp_set_peer_mac(q, &mac), 0);
	cr_assert_eq(mwp_port_attach_qp(wire.port, q), 0);
}

static int attached;

static void *
attach_thread(void *arg)
{
	struct ibv_qp *q = arg;
	struct rte_ether_addr mac;
	void *ret = NULL;

	rte_ether_unformat_addr(PEER_MAC, &mac);
	if (mwp_qp_set_peer_mac(q, &mac) != 0 || mwp_port_attach_qp(wire.port, q) != 0)
		ret = (void *)1;
	__atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
	return ret;
}

static void *
destroy_thread(void *arg)
{
	return (void *)(uintptr_t)mwp_destroy_qp(arg);
}

/* A thread's join, failed after 10 s (a control op that waits for a turn
 * nobody takes would hang). */
static void *
join_within(pthread_t t)
{
	struct timespec ts;
	void *ret = (void *)-1;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	cr_assert_eq(pthread_timedjoin_np(t, &ret, &ts), 0, "the control op hangs");
	return ret;
}

/* The provider runs a device's engine in turns (mwp_engine_resume,
 * mwp_engine_park: the program's calls and its threads, one at a time).
 * Between turns the engine stays started, parked: a control op takes
 * its turn and does its work itself -- on the thread that ran the last
 * turn and on another -- and the next turn goes on from there; a control
 * op from another thread during a turn is served by the turn. */
Test(req, a_parked_engine_does_control_ops_itself_and_the_next_turn_goes_on)
{
	struct ibv_qp *q = req_qp_rts(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.2");
	struct ibv_qp *q2 = req_qp_rts(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.2");
	struct ibv_qp *q3 = req_qp_rts(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.2");
	const struct wire_frame *f[4];
	unsigned int eng;
	uint16_t queue;
	pthread_t t;

	/* the fixture's engine is started: this thread's turn; parked */
	mwp_engine_park(wire.eng);
	attach_running(q);
	cr_assert_eq(mwp_qp_owner(q, &eng, &queue), 0, "attached while parked, here");
	post(q, IBV_WR_RDMA_WRITE, 1, 0, 64);
	cr_assert(mwp_engine_resume(wire.eng));
	pump(3);
	mwp_engine_park(wire.eng);
	cr_assert_eq(requests(0, f, 4), 1, "the next turn sent its WRITE");

	/* another thread, the engine parked: it takes the turn itself */
	cr_assert_eq(pthread_create(&t, NULL, attach_thread, q2), 0);
	cr_assert_null(join_within(t));
	cr_assert_eq(mwp_qp_owner(q2, &eng, &queue), 0);
	post(q2, IBV_WR_SEND, 2, 0, 8);
	cr_assert(mwp_engine_resume(wire.eng));
	pump(3);
	cr_assert_eq(requests(0, f, 4), 2, "and the turn after it sent q2's SEND");

	/* another thread during a turn: the turn serves it */
	attached = 0;
	cr_assert_eq(pthread_create(&t, NULL, attach_thread, q3), 0);
	for (int i = 0; i < 20000 && !__atomic_load_n(&attached, __ATOMIC_ACQUIRE); i++) {
		pump(1);
		usleep(100);
	}
	cr_assert_null(join_within(t));
	cr_assert_eq(mwp_qp_owner(q3, &eng, &queue), 0, "served by the running turn");
	mwp_engine_park(wire.eng);

	/* destroyed from another thread, parked (its work on the wire) */
	cr_assert_eq(pthread_create(&t, NULL, destroy_thread, q), 0);
	cr_assert_null(join_within(t));
	cr_assert_eq(pthread_create(&t, NULL, destroy_thread, q2), 0);
	cr_assert_null(join_within(t));
	cr_assert_eq(mwp_destroy_qp(q3), 0, "and here");
	cr_assert(mwp_engine_resume(wire.eng), "the teardown's stop, from a turn");
}

Test(req, timeout_zero_means_wait_forever)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 0, 0, 7, 4, 0, "::ffff:192.0.2.2");
	struct ibv_wc wc;

	post(q, IBV_WR_SEND, 1, 0, 8);
	pump(3);
	wire_advance_us(200000);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0);
	cr_expect_eq(to_mqp(q)->req.st.retrans, 0);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* ---- RNR ---- */

/* An RNR NAK: nothing goes out until the timer its syndrome names has
 * run, then the request goes again. */
Test(req, an_rnr_nak_waits_its_timer_then_sends_again)
{
	struct ibv_qp *q = rc_qp();
	const uint64_t rnr_us = mwp_rnr_timer_us(14);	/* 1.28 ms */
	const struct wire_frame *f[4];
	unsigned int n;

	post(q, IBV_WR_SEND, 1, 0, 8);
	pump(3);
	n = wire.nb_frames;
	wire_aeth(q->qp_num, 0, ROCE_AETH_RNR_NAK | 14);
	wire_advance_us(rnr_us - 20);
	cr_expect_eq(requests(n, f, 4), 0, "sent again before the RNR timer");
	wire_advance_us(40);
	cr_assert_eq(requests(n, f, 4), 1);
	cr_expect_eq(f[0]->psn, 0);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_expect_eq(to_mqp(q)->req.st.rnr_naks, 1);
}

Test(req, an_always_rnr_peer_gives_rnr_retry_exc_err)
{
	const uint8_t rnr_retry = 2;
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 14, 7, rnr_retry, 4, 0, "::ffff:192.0.2.2");

	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(3);
	for (int i = 0; i <= rnr_retry; i++) {
		wire_aeth(q->qp_num, 0, ROCE_AETH_RNR_NAK | 1);	/* 10 us */
		wire_advance_us(30);
	}
	expect_wc(1, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND);
	expect_wc(2, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
	cr_expect_eq(to_mqp(q)->req.st.rnr_naks, rnr_retry + 1);
}

Test(req, rnr_retry_7_retries_forever)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 14, 7, 7, 4, 0, "::ffff:192.0.2.2");

	post(q, IBV_WR_SEND, 1, 0, 8);
	pump(3);
	for (int i = 0; i < 50; i++) {
		wire_aeth(q->qp_num, 0, ROCE_AETH_RNR_NAK | 1);
		wire_advance_us(30);
	}
	cr_expect_eq(q->state, IBV_QPS_RTS);
	wire_ack(q->qp_num, 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* The sequence NAK a responder sends for the packets behind an RNR NAK
 * does not cut the RNR wait short. */
Test(req, a_sequence_nak_behind_an_rnr_nak_waits_for_the_rnr_timer)
{
	struct ibv_qp *q = rc_qp();
	const struct wire_frame *f[4];
	unsigned int n;

	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(3);
	n = wire.nb_frames;
	wire_aeth(q->qp_num, 0, ROCE_AETH_RNR_NAK | 14);
	wire_aeth(q->qp_num, 0, ROCE_AETH_NAK_PSN_SEQ);
	pump(20);
	cr_expect_eq(requests(n, f, 4), 0);
	wire_advance_us(mwp_rnr_timer_us(14) + 20);
	cr_expect_eq(requests(n, f, 4), 2);
}

/* ---- limits ---- */

/* At most max_rd_atomic READs and ATOMICs outstanding; later ones, and
 * everything behind them, wait (IBA 9.5). */
Test(req, max_rd_atomic_limits_outstanding_reads_and_atomics)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 14, 7, 7, 2, 0, "::ffff:192.0.2.2");
	const struct wire_frame *f[8];
	unsigned int n;

	post(q, IBV_WR_RDMA_READ, 1, 0, 16);
	post(q, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 64, 8);
	post(q, IBV_WR_RDMA_READ, 3, 128, 16);
	post(q, IBV_WR_SEND, 4, 0, 8);
	pump(5);
	cr_assert_eq(requests(0, f, 8), 2, "two outstanding at most");
	n = wire.nb_frames;
	wire_read_resp(q->qp_num, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, buf, 16);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	pump(3);
	cr_assert_eq(requests(n, f, 8), 2, "the third READ, then the SEND");
	cr_expect_eq(f[0]->opcode, ROCE_OP_RC_RDMA_READ_REQUEST);
	cr_expect_eq(f[0]->psn, 2);
	cr_expect_eq(f[1]->opcode, ROCE_OP_RC_SEND_ONLY);
}

/* ---- UC ---- */

Test(req, uc_completes_once_sent_and_never_sends_again)
{
	struct ibv_qp *q = req_qp(IBV_QPT_UC, 0, 0, 0, 0, 0, "::ffff:192.0.2.2");
	const struct wire_frame *f[4];

	post(q, IBV_WR_RDMA_WRITE, 1, 0, 1500);
	post(q, IBV_WR_SEND, 2, 0, 8);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
	wire_advance_us(100000);
	cr_assert_eq(requests(0, f, 4), 3);
	cr_expect_eq(f[0]->opcode, ROCE_OP_UC_RDMA_WRITE_FIRST);
	cr_expect_eq(f[1]->opcode, ROCE_OP_UC_RDMA_WRITE_LAST);
	cr_expect_eq(f[2]->opcode, ROCE_OP_UC_SEND_ONLY);
	cr_expect(!f[0]->ackreq && !f[1]->ackreq && !f[2]->ackreq, "UC asks no ACK");
}

/* ---- life cycle ---- */

Test(req, err_flushes_what_is_on_the_wire_and_stops_the_timer)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	post(q, IBV_WR_SEND, 1, 0, 8);
	post(q, IBV_WR_RDMA_READ, 2, 0, 8);
	pump(3);
	cr_expect(mwp_timer_armed(&to_mqp(q)->req.tmr));
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE), 0);
	expect_wc(1, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
	expect_wc(2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_READ);
	cr_expect(!mwp_timer_armed(&to_mqp(q)->req.tmr));
	/* a late ACK changes nothing */
	wire_ack(q->qp_num, 0);
	expect_no_wc();
}

Test(req, a_qp_destroyed_with_work_on_the_wire_leaves_no_timer_behind)
{
	struct ibv_qp *q = req_qp(IBV_QPT_RC, 8, 7, 7, 4, 0, "::ffff:192.0.2.2");

	post(q, IBV_WR_SEND, 1, 0, 8);
	pump(3);
	cr_expect(mwp_timer_armed(&to_mqp(q)->req.tmr));
	cr_assert_eq(mwp_destroy_qp(q), 0);
	cr_expect_eq(wire.eng->s.tw.nb_armed, 0);
	wire_advance_us(10000);	/* no timer fires into freed memory */
}

Test(req, reset_and_back_to_rts_starts_over_from_the_new_sq_psn)
{
	struct ibv_qp *q = rc_qp();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	const struct wire_frame *f[4];
	unsigned int n;

	post(q, IBV_WR_SEND, 1, 0, 8);
	pump(3);
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE), 0);
	cr_expect_eq(wire.eng->s.tw.nb_armed, 0);
	mwp_engine_stop(wire.eng);
	qp_to_rts(q);	/* sq_psn 0 again */
	mwp_engine_start(wire.eng);
	n = wire.nb_frames;
	post(q, IBV_WR_SEND, 2, 0, 8);
	pump(3);
	cr_assert_eq(requests(n, f, 4), 1);
	cr_expect_eq(f[0]->psn, 0);
	wire_ack(q->qp_num, 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
}

Test(req, mwp_poll_leaves_the_device_lock_alone_while_running_engines_own_every_qp)
{
	struct ibv_qp *q = rc_qp();
	struct mwp_dev *d = to_mdev(ctx);

	/* the wire's engine runs: mwp_poll has nothing to run, and must not
	 * take the lock the engine only tries (held here: it would wait) */
	cr_assert_eq(d->nb_polled, 0);
	pthread_mutex_lock(&d->lock);
	cr_expect_eq(mwp_poll(ctx), 0);
	pthread_mutex_unlock(&d->lock);
	/* stopped, the engine leaves its QPs (the fixture's too) to mwp_poll
	 * again */
	mwp_engine_stop(wire.eng);
	cr_expect_eq(d->nb_polled, wire.eng->st.qps);
	cr_expect_gt(d->nb_polled, 0);
	post(q, IBV_WR_SEND, 1, 0, 8);
	cr_expect_eq(mwp_qp_sq_queued(q), 1);
	mwp_poll(ctx);
	cr_expect_eq(mwp_qp_sq_queued(q), 0, "mwp_poll ran the stopped engine's QP");
	mwp_engine_start(wire.eng);
	cr_expect_eq(d->nb_polled, 0);
	cr_assert_eq(mwp_destroy_qp(q), 0);
	cr_expect_eq(d->nb_polled, 0);
}
