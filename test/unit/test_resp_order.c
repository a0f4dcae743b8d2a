/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's answers leave in PSN order (IBA 9.7.4, 9.7.5.1) also
 * when READ responses must wait for room in the tx burst: an ACK for
 * requests after a READ never overtakes that READ's responses, and the
 * ACK owed for requests before a READ goes out before its first
 * response.  On the test wire (wire_fixture.h), with the responder's tx
 * room made small on purpose.
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
request(uint8_t opcode, uint32_t psn, uint64_t va, uint32_t len, bool ackreq)
{
	static uint8_t data[MTU];
	struct wire_frame pf = { .sqpn = qp->qp_num };
	struct mwp_hdrs h = { .opcode = opcode, .dqpn = qp->qp_num, .psn = psn,
			      .ackreq = ackreq };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);
	const bool write = opcode == ROCE_OP_RC_RDMA_WRITE_ONLY;

	cr_assert_not_null(m);
	wire_peer_flow(&pf, &fl);
	h.reth.va = va;
	h.reth.rkey = mr->rkey;
	h.reth.dmalen = len;
	memset(data, (int)psn, sizeof(data));
	cr_assert_eq(mwp_build(m, &fl, &h, write ? data : NULL, write ? len : 0, NULL), 0);
	return m;
}

/* Hand frames to the responder with room for `room` answers; keep what
 * it sends. */
static void
feed(struct rte_mbuf **m, uint16_t n, uint16_t room)
{
	struct rte_mbuf *tx[64];
	uint16_t k = mwp_resp_burst(wire.q, m, n, tx, room);

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
