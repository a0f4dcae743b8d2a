/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's answers leave in PSN order (IBA 9.7.4, 9.7.5.1) also
 * when READ responses must wait for room in the tx burst: an ACK for
 * requests after a READ never overtakes that READ's responses, and the
 * ACK owed for requests before a READ goes out before its first
 * response; nor does an atomic ACK, an RNR NAK, a sequence NAK or a fatal
 * NAK, and the QP enters the error state only once its fatal NAK is out.
 * On the test wire (wire_fixture.h), with the responder's tx room made
 * small on purpose.
 */
#include "wire_fixture.h"

#define MTU 1024

static void
setup(void)
{
	wire_setup();
}

TestSuite(resp_order, .init = setup, .fini = wire_teardown);

static struct rte_mbuf *
request_key(uint8_t opcode, uint32_t psn, uint64_t va, uint32_t len, bool ackreq,
	    uint32_t rkey)
{
	static uint8_t data[MTU];
	struct wire_frame pf = { .sqpn = qp->qp_num };
	struct mwp_hdrs h = { .opcode = opcode, .dqpn = qp->qp_num, .psn = psn,
			      .ackreq = ackreq };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);
	const bool data_op = opcode == ROCE_OP_RC_RDMA_WRITE_ONLY ||
			     opcode == ROCE_OP_RC_SEND_ONLY;

	cr_assert_not_null(m);
	wire_peer_flow(&pf, &fl);
	h.reth.va = va;
	h.reth.rkey = rkey;
	h.reth.dmalen = len;
	h.atmeth.va = va;
	h.atmeth.rkey = rkey;
	h.atmeth.swap_add = 5;
	memset(data, (int)psn, sizeof(data));
	cr_assert_eq(mwp_build(m, &fl, &h, data_op ? data : NULL, data_op ? len : 0, NULL),
		     0);
	return m;
}

static struct rte_mbuf *
request(uint8_t opcode, uint32_t psn, uint64_t va, uint32_t len, bool ackreq)
{
	return request_key(opcode, psn, va, len, ackreq, mr->rkey);
}

/* Hand frames to the responder with room for `room` answers; keep what
 * it sends. */
static void
feed(struct rte_mbuf **m, uint16_t n, uint16_t room)
{
	struct rte_mbuf *tx[64];
	uint16_t k = mwp_queue_rx(wire.q, m, n, tx, room);

	for (uint16_t i = 0; i < k; i++) {
		wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
}

/* What the queue sends on its own (READ responses owed), room 64. */
static void
drain(void)
{
	struct rte_mbuf *tx[64];
	uint16_t k = mwp_queue_tx(wire.q, tx, 64);

	for (uint16_t i = 0; i < k; i++) {
		wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
}

static void
expect_psn_order(const uint32_t *want, unsigned int n, const uint8_t *last_op)
{
	cr_assert_eq(wire.nb_frames, n, "%u answers, not %u", wire.nb_frames, n);
	for (unsigned int i = 0; i < n; i++)
		cr_expect_eq(wire.frames[i].psn, want[i], "answer %u: PSN %u, not %u", i,
			     wire.frames[i].psn, want[i]);
	if (last_op != NULL)
		cr_expect_eq(wire.frames[n - 1].opcode, *last_op);
}

Test(resp_order, an_ack_after_a_read_waits_for_the_reads_last_response)
{
	const uint64_t va = (uintptr_t)buf;
	const uint8_t ack = ROCE_OP_RC_ACKNOWLEDGE;
	const uint32_t want[] = { 0, 1, 2, 3, 4, 5 };
	struct rte_mbuf *m[2];

	/* a 5-packet READ with room for two responses */
	m[0] = request(ROCE_OP_RC_RDMA_READ_REQUEST, 0, va, 5 * MTU, true);
	feed(m, 1, 2);
	cr_assert_eq(wire.nb_frames, 2);
	/* a WRITE in the next burst, room to spare: its ACK must wait */
	m[0] = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 5, va + 8192, 64, true);
	feed(m, 1, 64);
	cr_expect_eq(wire.nb_frames, 2, "nothing may pass the READ's responses");
	drain();
	expect_psn_order(want, 6, &ack);
	cr_expect_eq(wire.frames[4].opcode, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST);
}

Test(resp_order, an_ack_owed_before_a_queued_read_goes_before_its_responses)
{
	const uint64_t va = (uintptr_t)buf;
	/* READ 0-2, WRITE 3, READ 4-5, WRITE 6 */
	const uint32_t want[] = { 0, 1, 2, 3, 4, 5, 6 };
	struct rte_mbuf *m[4];

	m[0] = request(ROCE_OP_RC_RDMA_READ_REQUEST, 0, va, 3 * MTU, true);
	m[1] = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 3, va + 8192, 64, true);
	m[2] = request(ROCE_OP_RC_RDMA_READ_REQUEST, 4, va + 4096, 2 * MTU, true);
	m[3] = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 6, va + 8256, 64, true);
	feed(m, 4, 1);
	drain();
	drain();
	expect_psn_order(want, 7, NULL);
	cr_expect_eq(wire.frames[3].opcode, ROCE_OP_RC_ACKNOWLEDGE, "WRITE 3's ACK, in place");
	cr_expect_eq(wire.frames[6].opcode, ROCE_OP_RC_ACKNOWLEDGE);
}

Test(resp_order, with_room_everything_goes_in_one_burst_in_order)
{
	const uint64_t va = (uintptr_t)buf;
	const uint32_t want[] = { 0, 1, 2, 3 };
	struct rte_mbuf *m[3];

	m[0] = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 0, va + 8192, 64, false);
	m[1] = request(ROCE_OP_RC_RDMA_READ_REQUEST, 1, va, 2 * MTU, true);
	m[2] = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 3, va + 8256, 64, true);
	feed(m, 3, 64);
	expect_psn_order(want, 4, NULL);
	cr_expect_eq(wire.frames[0].opcode, ROCE_OP_RC_ACKNOWLEDGE, "the WRITE's, first");
}

/* A 5-packet READ at PSN 0 with room for two responses: three wait. */
static void
read_waiting(void)
{
	struct rte_mbuf *m = request(ROCE_OP_RC_RDMA_READ_REQUEST, 0, (uintptr_t)buf,
				     5 * MTU, true);

	feed(&m, 1, 2);
	cr_assert_eq(wire.nb_frames, 2);
}

static void
expect_reads_then(uint8_t opcode, uint8_t syndrome, uint32_t psn)
{
	cr_assert_eq(wire.nb_frames, 6, "%u answers, not 6", wire.nb_frames);
	for (unsigned int i = 0; i < 5; i++)
		cr_expect_eq(wire.frames[i].psn, i);
	cr_expect_eq(wire.frames[4].opcode, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST);
	cr_expect_eq(wire.frames[5].opcode, opcode);
	cr_expect_eq(wire.frames[5].syndrome & 0xe0, syndrome & 0xe0,
		     "syndrome 0x%02x", wire.frames[5].syndrome);
	cr_expect_eq(wire.frames[5].psn, psn);
}

Test(resp_order, a_fatal_nak_waits_for_the_reads_and_the_qp_fails_after_it)
{
	struct rte_mbuf *m;

	memset(buf + 8192, 0, 64);
	read_waiting();
	/* a WRITE with a key nobody has: remote access error */
	m = request_key(ROCE_OP_RC_RDMA_WRITE_ONLY, 5, (uintptr_t)buf + 8192, 64, true,
			mr->rkey ^ 0x55);
	feed(&m, 1, 64);
	cr_expect_eq(wire.nb_frames, 2, "the NAK may not pass the READ's responses");
	cr_expect_neq(qp->state, IBV_QPS_ERR, "not in error before its NAK is out");
	/* requests after it are not executed, and not answered */
	m = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 6, (uintptr_t)buf + 8192, 64, true);
	feed(&m, 1, 64);
	drain();
	expect_reads_then(ROCE_OP_RC_ACKNOWLEDGE, ROCE_AETH_NAK_REM_ACC, 5);
	cr_expect_eq(wire.frames[5].syndrome, ROCE_AETH_NAK_REM_ACC);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
	cr_expect_eq(buf[8192], 0, "the WRITE after the NAK was not executed");
	drain();
	cr_expect_eq(wire.nb_frames, 6, "nothing after the NAK");
}

Test(resp_order, an_atomic_ack_waits_for_the_reads_responses)
{
	struct rte_mbuf *m;

	memset(buf + 8192, 0, 8);
	read_waiting();
	m = request(ROCE_OP_RC_FETCH_ADD, 5, (uintptr_t)buf + 8192, 8, true);
	feed(&m, 1, 64);
	cr_expect_eq(wire.nb_frames, 2);
	drain();
	expect_reads_then(ROCE_OP_RC_ATOMIC_ACKNOWLEDGE, 0, 5);
	cr_expect_eq(wire.frames[5].orig, 0);
	cr_expect_eq(*(uint64_t *)(void *)(buf + 8192), 5, "executed once, at once");
}

Test(resp_order, an_rnr_nak_waits_for_the_reads_responses)
{
	struct rte_mbuf *m;

	read_waiting();
	/* a SEND, and no receive posted */
	m = request(ROCE_OP_RC_SEND_ONLY, 5, 0, 64, true);
	feed(&m, 1, 64);
	cr_expect_eq(wire.nb_frames, 2);
	drain();
	expect_reads_then(ROCE_OP_RC_ACKNOWLEDGE, ROCE_AETH_RNR_NAK, 5);
	cr_expect_neq(qp->state, IBV_QPS_ERR, "an RNR NAK is not fatal");
}

Test(resp_order, a_sequence_nak_waits_for_the_reads_responses)
{
	struct rte_mbuf *m;

	read_waiting();
	/* PSN 7: 5 and 6 were lost */
	m = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 7, (uintptr_t)buf + 8192, 64, true);
	feed(&m, 1, 64);
	cr_expect_eq(wire.nb_frames, 2);
	drain();
	expect_reads_then(ROCE_OP_RC_ACKNOWLEDGE, ROCE_AETH_NAK_PSN_SEQ, 5);
	cr_expect_eq(wire.frames[5].syndrome, ROCE_AETH_NAK_PSN_SEQ);
}

Test(resp_order, an_ack_owed_before_a_fatal_nak_goes_first)
{
	struct rte_mbuf *m[2];

	read_waiting();
	/* WRITE 5 is fine (its ACK is owed), WRITE 6 is refused */
	m[0] = request(ROCE_OP_RC_RDMA_WRITE_ONLY, 5, (uintptr_t)buf + 8192, 64, false);
	m[1] = request_key(ROCE_OP_RC_RDMA_WRITE_ONLY, 6, (uintptr_t)buf + 8256, 64, true,
			   mr->rkey ^ 0x55);
	feed(m, 2, 64);
	cr_expect_eq(wire.nb_frames, 2);
	drain();
	cr_assert_eq(wire.nb_frames, 7);
	cr_expect_eq(wire.frames[4].opcode, ROCE_OP_RC_RDMA_READ_RESPONSE_LAST);
	cr_expect_eq(wire.frames[5].opcode, ROCE_OP_RC_ACKNOWLEDGE);
	cr_expect_eq(wire.frames[5].syndrome & 0xe0, 0, "an ACK");
	cr_expect_eq(wire.frames[5].psn, 5);
	cr_expect_eq(wire.frames[6].syndrome, ROCE_AETH_NAK_REM_ACC);
	cr_expect_eq(wire.frames[6].psn, 6);
}
