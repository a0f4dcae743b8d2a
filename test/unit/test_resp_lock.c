/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lcore never waits for the device lock.  A SEND with invalidate is
 * the one responder packet that needs it (a window's key is revoked):
 * while a control thread holds it, the packet is dropped before anything
 * changes (drop reason inv_busy: no receive taken, no byte placed, no
 * answer, the PSN still expected) and the requester's retry is executed
 * whole once the lock is free.  On the test wire (wire_fixture.h).
 */
#include "wire_fixture.h"

static void
setup(void)
{
	wire_setup();
}

TestSuite(resp_lock, .init = setup, .fini = wire_teardown, .timeout = 60);

static struct rte_mbuf *
send_inv(uint32_t psn, uint32_t rkey, uint8_t fill)
{
	uint8_t data[64];
	struct wire_frame pf = { .sqpn = qp->qp_num };
	struct mwp_hdrs h = { .opcode = ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE,
			      .dqpn = qp->qp_num, .psn = psn, .ackreq = true,
			      .ieth_rkey = rkey };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memset(data, fill, sizeof(data));
	wire_peer_flow(&pf, &fl);
	cr_assert_eq(mwp_build(m, &fl, &h, data, sizeof(data), NULL), 0);
	return m;
}

/* The responder alone (no mwp_poll, which takes the lock): answers kept. */
static uint16_t
respond(struct rte_mbuf *m)
{
	struct rte_mbuf *tx[8];
	uint16_t k = mwp_queue_rx(wire.q, &m, 1, tx, RTE_DIM(tx));

	for (uint16_t i = 0; i < k; i++) {
		wire_parse(tx[i], &wire.frames[wire.nb_frames++]);
		rte_pktmbuf_free(tx[i]);
	}
	return k;
}

Test(resp_lock, a_send_with_invalidate_is_dropped_untouched_while_the_lock_is_held)
{
	pthread_mutex_t *lock = &to_mdev(ctx)->lock;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 4096, .length = 256,
			       .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	uint32_t key;

	cr_assert_not_null(mw);
	cr_assert_eq(post_bind2(qp, mw, mr, (uintptr_t)buf, 1024,
				IBV_ACCESS_REMOTE_WRITE, 0x11, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	key = mw->rkey;
	cr_assert_not_null(resolve(key));
	memset(buf + 4096, 0, 256);
	cr_assert_eq(ibv_post_recv(qp, &rwr, &bad), 0);

	/* a control thread holds the lock: dropped, nothing changed */
	pthread_mutex_lock(lock);
	cr_expect_eq(respond(send_inv(0, key, 0xab)), 0, "no answer");
	pthread_mutex_unlock(lock);
	cr_expect_eq(wire.st.drop[MWP_DROP_INV_BUSY], 1);
	cr_expect_not_null(resolve(key), "the key lives");
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "the receive is still posted");
	cr_expect_eq(buf[4096], 0, "no byte placed");
	cr_expect_eq(to_mqp(qp)->resp.epsn, 0, "PSN 0 still expected");

	/* the retry, lock free: executed whole */
	cr_assert_eq(respond(send_inv(0, key, 0xab)), 1);
	cr_expect_eq(wire.frames[0].opcode, ROCE_OP_RC_ACKNOWLEDGE);
	cr_expect_eq(wire.frames[0].syndrome & 0xe0, 0, "an ACK");
	cr_expect_eq(wire.frames[0].psn, 0);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1);
	cr_expect_eq(wc.wr_id, 77);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 64);
	cr_expect(wc.wc_flags & IBV_WC_WITH_INV);
	cr_expect_eq(wc.invalidated_rkey, key);
	cr_expect_eq(buf[4096], 0xab);
	cr_expect_null(resolve(key), "the key is dead");
	cr_expect_eq(wire.st.drop[MWP_DROP_INV_BUSY], 1);
}
