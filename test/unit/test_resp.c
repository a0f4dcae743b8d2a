/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's first stages on real mbufs from a mempool: every frame
 * is counted once (accepted or dropped by reason), every mbuf returns to
 * the pool, and frames for a QP present in the port's table are accepted.
 */
#include <rte_errno.h>
#include <rte_mempool.h>

#include "test_eal.h"
#include "test_frames.h"
#include "mwp_priv.h"

static struct mwp_port *port;
static struct mwp_engine *eng;
static struct mwp_queue *mq;
static struct mwp_stats qst;

typedef uint16_t (*rx_fn)(struct mwp_queue *, struct rte_mbuf **, uint16_t,
			  struct rte_mbuf **, uint16_t);

/* The port's queue 0 takes a burst through rx (mwp_queue_rx: from the
 * wire), counting into st. */
static uint16_t
burst_through(rx_fn rx, struct mwp_queue *q, struct rte_mbuf **pk, uint16_t n,
	      struct rte_mbuf **tx, uint16_t room, struct mwp_stats *st)
{
	uint16_t k;

	memset(&qst, 0, sizeof(qst));
	k = rx(q, pk, n, tx, room);
	*st = qst;
	return k;
}

static uint16_t
burst(struct mwp_queue *q, struct rte_mbuf **pk, uint16_t n, struct rte_mbuf **tx,
      uint16_t room, struct mwp_stats *st)
{
	return burst_through(mwp_queue_rx, q, pk, n, tx, room, st);
}

static void
setup(void)
{
	struct mwp_port_conf c = { .mtu = 1024, .has_ipv4 = true };

	test_eal_init();
	rte_ether_unformat_addr("02:00:00:00:00:01", &c.mac);
	inet_pton(AF_INET, "192.0.2.1", &c.ipv4);
	inet_pton(AF_INET6, "2001:db8::1", c.ipv6);
	c.has_ipv6 = true;
	port = mwp_port_create(&c, 0, SOCKET_ID_ANY);
	cr_assert_not_null(port);
	eng = mwp_engine_create(0, SOCKET_ID_ANY);
	cr_assert_not_null(eng);
	mq = mwp_queue_create(eng, port, 0, &qst);
	cr_assert_not_null(mq);
}

static void
teardown(void)
{
	mwp_queue_free(mq);
	cr_expect_eq(mwp_engine_free(eng), 0);
	mwp_port_free(port);
}

TestSuite(resp, .init = setup, .fini = teardown);

/* A pool mbuf holding a copy of a frame built in a tframe, mutated, with
 * its ICRC made right again (bad_icrc is applied after that). */
static void bad_icrc(uint8_t *d, struct mwp_pkt *p) { d[p->icrc_off] ^= 1; }

static struct rte_mbuf *
pool_frame(uint8_t op, uint32_t len, bool v6, void (*mutate)(uint8_t *, struct mwp_pkt *))
{
	static struct tframe t;
	struct mwp_pkt p;
	struct rte_mbuf *src = build_frame(&t, op, len, v6, false, &p);
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	if (mutate != NULL && mutate != bad_icrc) {
		mutate(t.data, &p);
		mwp_icrc_fill(src, &p);
	} else if (mutate == bad_icrc) {
		bad_icrc(t.data, &p);
	}
	memcpy(rte_pktmbuf_append(m, src->data_len), t.data, src->data_len);
	return m;
}

static void other_mac(uint8_t *d, struct mwp_pkt *p) { (void)p; d[5] = 9; }
static void other_ip(uint8_t *d, struct mwp_pkt *p) { d[p->l3_off + 19] = 9; }
static void arp(uint8_t *d, struct mwp_pkt *p) { (void)p; d[12] = 8; d[13] = 6; }
static void qp_77(uint8_t *d, struct mwp_pkt *p) { roce_put24(d + p->bth_off + 5, 77); }
static void qp_11(uint8_t *d, struct mwp_pkt *p) { roce_put24(d + p->bth_off + 5, 0x11); }
static void cnp(uint8_t *d, struct mwp_pkt *p) { (void)d; (void)p; }

Test(resp, every_frame_is_counted_once_and_every_mbuf_returns)
{
	struct mwp_stats st = { 0 };
	struct rte_mbuf *pk[8], *tx[8];
	unsigned int before = rte_mempool_avail_count(test_mp);

	pk[0] = pool_frame(ROCE_OP_RC_RDMA_WRITE_ONLY, 64, false, NULL);
	pk[1] = pool_frame(ROCE_OP_RC_RDMA_WRITE_ONLY, 64, true, NULL);
	pk[2] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, bad_icrc);
	pk[3] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, other_mac);
	pk[4] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, other_ip);
	pk[5] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, arp);
	pk[6] = pool_frame(ROCE_OP_CNP, 0, false, cnp);
	pk[7] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, qp_77);

	cr_expect_eq(burst(mq, pk, 8, tx, 8, &st), 0);
	cr_expect_eq(st.rx_pkts, 8);
	cr_expect_eq(st.drop[MWP_DROP_UNKNOWN_QP], 3);
	cr_expect_eq(st.drop[MWP_DROP_BAD_ICRC], 1);
	cr_expect_eq(st.drop[MWP_DROP_NOT_FOR_US], 2);
	cr_expect_eq(st.drop[MWP_DROP_NOT_IP], 1);
	cr_expect_eq(st.drop[MWP_DROP_CNP], 1);
	cr_expect_eq(st.accepted, 0);
	cr_expect_eq(mwp_stats_dropped(&st) + st.accepted, st.rx_pkts);
	cr_expect_eq(rte_mempool_avail_count(test_mp), before,
		     "mbufs leaked: %u", before - rte_mempool_avail_count(test_mp));
}

/* The frames a port sends itself (mwp_queue_rx_own: its polling thread's
 * loop, no wire between) carry ICRCs made in this process: those are not
 * checked again, and everything else is as for the wire's frames -- the
 * destination, the QP, the counters, the mbufs. */
Test(resp, the_ports_own_frames_skip_the_icrc_check_and_nothing_else)
{
	const unsigned int before = rte_mempool_avail_count(test_mp);
	struct mwp_stats st = { 0 };
	struct rte_mbuf *pk[3], *tx[4];

	pk[0] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, bad_icrc);
	cr_expect_eq(burst(mq, pk, 1, tx, 4, &st), 0);
	cr_expect_eq(st.drop[MWP_DROP_BAD_ICRC], 1, "from the wire it is checked");
	cr_expect_eq(st.drop[MWP_DROP_UNKNOWN_QP], 0);

	pk[0] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, bad_icrc);
	pk[1] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, other_mac);
	pk[2] = pool_frame(ROCE_OP_RC_RDMA_WRITE_ONLY, 64, true, NULL);
	cr_expect_eq(burst_through(mwp_queue_rx_own, mq, pk, 3, tx, 4, &st), 0);
	cr_expect_eq(st.rx_pkts, 3);
	cr_expect_eq(st.drop[MWP_DROP_BAD_ICRC], 0, "the port's own is not checked again");
	cr_expect_eq(st.drop[MWP_DROP_UNKNOWN_QP], 2, "its QP is looked for as the wire's");
	cr_expect_eq(st.drop[MWP_DROP_NOT_FOR_US], 1);
	cr_expect_eq(mwp_stats_dropped(&st) + st.accepted, st.rx_pkts);
	cr_expect_eq(rte_mempool_avail_count(test_mp), before,
		     "mbufs leaked: %u", before - rte_mempool_avail_count(test_mp));
}

/* The burst's frames go back to their pools whatever they are: the fast
 * bulk put for plain ones, rte_pktmbuf_free for a chain, a shared mbuf
 * (one reference stays with its other owner), an indirect one, and one
 * from another pool. */
Test(resp, request_mbufs_of_every_kind_are_freed)
{
	struct rte_mempool *other = rte_pktmbuf_pool_create("resp_other", 63, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	const unsigned int before = rte_mempool_avail_count(test_mp);
	struct mwp_stats st = { 0 };
	struct rte_mbuf *pk[7], *tx[8], *tail, *shared, *clone;

	cr_assert_not_null(other);
	pk[0] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, NULL);
	pk[1] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, NULL);
	tail = rte_pktmbuf_alloc(test_mp);
	cr_assert_not_null(tail);
	rte_pktmbuf_append(tail, 8);
	cr_assert_eq(rte_pktmbuf_chain(pk[1], tail), 0);
	shared = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, NULL);
	rte_mbuf_refcnt_update(shared, 1);
	pk[2] = shared;
	pk[3] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, NULL);
	clone = rte_pktmbuf_clone(pk[3], test_mp);
	cr_assert_not_null(clone);
	pk[4] = clone;
	pk[5] = rte_pktmbuf_alloc(other);
	cr_assert_not_null(pk[5]);
	rte_pktmbuf_append(pk[5], 60);
	pk[6] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, NULL);

	burst(mq, pk, 7, tx, 8, &st);
	cr_expect_eq(st.rx_pkts, 7);
	/* only the shared frame is still out, with its one other reference */
	cr_expect_eq(rte_mbuf_refcnt_read(shared), 1);
	cr_expect_eq(rte_mempool_avail_count(test_mp), before - 1);
	rte_pktmbuf_free(shared);
	cr_expect_eq(rte_mempool_avail_count(test_mp), before,
		     "mbufs leaked: %u", before - rte_mempool_avail_count(test_mp));
	cr_expect_eq(rte_mempool_avail_count(other), 63);
	rte_mempool_free(other);
}

Test(resp, an_attached_qp_receives_its_frames)
{
	struct ibv_context *ctx = mwp_open_device(&(struct mwp_device_attr){ .flags = MWP_DEVICE_F_SEQUENTIAL });
	struct ibv_pd *pd = mwp_alloc_pd(ctx);
	struct ibv_cq *cq = mwp_create_cq(ctx, 8);
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4 } };
	struct ibv_qp *q = mwp_create_qp(pd, &ia);
	struct mwp_stats st = { 0 };
	struct rte_mbuf *pk[2], *tx[2];

	cr_assert_not_null(q);
	cr_expect_eq(q->qp_num & (MWP_PORT_QP_SLOTS - 1), 0x11);
	cr_assert_eq(mwp_port_attach_qp(port, q), 0);
	cr_expect_eq(mwp_port_qp(port, q->qp_num), to_mqp(q));
	cr_expect_null(mwp_port_qp(port, q->qp_num + MWP_PORT_QP_SLOTS),
		       "slot collision must not match");
	pk[0] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, qp_11);
	pk[1] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, NULL);
	cr_expect_eq(burst(mq, pk, 2, tx, 2, &st), 0);
	cr_expect_eq(st.drop[MWP_DROP_UNKNOWN_QP], 1);
	cr_expect_eq(st.drop[MWP_DROP_QP_STATE], 1, "a QP in RESET answers nothing");
	cr_expect_eq(st.accepted, 0, "a frame the QP drops is not accepted");
	cr_expect_eq(st.accepted + mwp_stats_dropped(&st), st.rx_pkts);
	mwp_close_device(ctx);
}

Test(resp, port_without_addresses_accepts_any_destination)
{
	struct mwp_port_conf c = { .mtu = 4096 };
	struct mwp_port *any = mwp_port_create(&c, 1, SOCKET_ID_ANY);
	struct mwp_stats st = { 0 };
	struct rte_mbuf *pk[1], *tx[1];
	struct mwp_queue *aq;

	cr_assert_not_null(any);
	aq = mwp_queue_create(eng, any, 0, &qst);
	cr_assert_not_null(aq);
	pk[0] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, other_ip);
	burst(aq, pk, 1, tx, 1, &st);
	cr_expect_eq(st.drop[MWP_DROP_UNKNOWN_QP], 1);
	mwp_queue_free(aq);
	mwp_port_free(any);
}

/* The destination MAC is read with the first two bytes of the source MAC
 * (one eight-byte load): all six of its bytes count, and only those. */
static unsigned int flip_at;
static void flip_byte(uint8_t *d, struct mwp_pkt *p) { (void)p; d[flip_at] ^= 0x40; }

Test(resp, every_destination_mac_byte_counts_and_no_source_byte)
{
	for (flip_at = 0; flip_at < 12; flip_at++) {
		struct mwp_stats st = { 0 };
		struct rte_mbuf *pk[2], *tx[2];

		pk[0] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, false, flip_byte);
		pk[1] = pool_frame(ROCE_OP_RC_SEND_ONLY, 3, true, flip_byte);
		burst(mq, pk, 2, tx, 2, &st);
		if (flip_at < RTE_ETHER_ADDR_LEN)
			cr_expect_eq(st.drop[MWP_DROP_NOT_FOR_US], 2, "dst byte %u", flip_at);
		else
			cr_expect_eq(st.drop[MWP_DROP_UNKNOWN_QP], 2,
				     "src byte %u must not matter", flip_at);
	}
}

Test(resp, port_rejects_a_bad_path_mtu)
{
	struct mwp_port_conf c = { .mtu = 1500 };

	cr_expect_null(mwp_port_create(&c, 0, SOCKET_ID_ANY));
	cr_expect_eq(rte_errno, EINVAL);
	cr_expect(mwp_mtu_valid(256) && mwp_mtu_valid(4096));
	cr_expect(!mwp_mtu_valid(128) && !mwp_mtu_valid(8192) && !mwp_mtu_valid(0));
}
