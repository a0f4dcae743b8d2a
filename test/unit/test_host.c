/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exception path as the library sees it (mwp_port_conf.host_path,
 * mwp_queue_host_take): on a port whose host keeps its addresses, a
 * queue sets aside what is not RoCE -- to the port's MAC or a group
 * address -- for the host's kernel, in the order it came; the control
 * path learns from ARP and ND but answers nothing (the kernel does); RoCE
 * goes where it always went; every frame is counted once; a queue whose
 * host frames are not taken drops the excess, counted; and a port
 * without it is as before.  Frames are built here byte by byte.
 */
#include <arpa/inet.h>
#include <string.h>

#include "wire_fixture.h"
#include "mwp_ctrl.h"
#include "mwp_neigh_priv.h"

static const uint8_t OUR_HW[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t PEER_HW[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t OTHER_MAC[6] = { 0x02, 0, 0, 0, 0, 0x09 };
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t LLDP_MAC[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e };
static const uint8_t OUR_IP4[4] = { 192, 0, 2, 1 };
static const uint8_t PEER_IP4[4] = { 192, 0, 2, 2 };

static unsigned int pool_avail;

static void
host_setup(bool on)
{
	wire_host_path = on;
	wire_setup();
	pool_avail = rte_mempool_avail_count(test_mp);
}

static void
host_teardown(void)
{
	wire_host_path = false;
	wire_teardown();
}

TestSuite(host, .fini = host_teardown, .timeout = 60);

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static struct rte_mbuf *
mk(const uint8_t *b, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memcpy(rte_pktmbuf_append(m, len), b, len);
	return m;
}

static uint16_t
eth(uint8_t *b, const uint8_t *dst, uint16_t type)
{
	memcpy(b, dst, 6);
	memcpy(b + 6, PEER_HW, 6);
	put16(b + 12, type);
	return 14;
}

/* An ARP request from the peer for our address. */
static struct rte_mbuf *
arp_request(void)
{
	uint8_t b[60] = { 0 };
	uint8_t *a = b + eth(b, BCAST, 0x0806);

	put16(a, 1);
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 1);
	memcpy(a + 8, PEER_HW, 6);
	memcpy(a + 14, PEER_IP4, 4);
	memcpy(a + 24, OUR_IP4, 4);
	return mk(b, sizeof(b));
}

/* IPv4 from the peer to us (dst MAC dmac): protocol proto, flags and
 * fragment offset frag, and an 8-byte L4 header whose first four bytes
 * are ports (sport, dport). */
static struct rte_mbuf *
ip4(const uint8_t *dmac, uint8_t proto, uint16_t frag, uint16_t dport)
{
	uint8_t b[64] = { 0 };
	uint8_t *ip = b + eth(b, dmac, 0x0800);

	ip[0] = 0x45;
	put16(ip + 2, 20 + 8 + 22);
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, PEER_IP4, 4);
	memcpy(ip + 16, OUR_IP4, 4);
	put16(ip + 20, 40000);
	put16(ip + 22, dport);
	put16(ip + 24, 8 + 22);
	return mk(b, 14 + 20 + 8 + 22);
}

static struct rte_mbuf *
lldp(void)
{
	uint8_t b[60] = { 0 };

	eth(b, LLDP_MAC, 0x88cc);
	return mk(b, sizeof(b));
}

static uint64_t
ctrl_ctr(enum mwp_ctrl_ctr c)
{
	struct mwp_ctrl_stats st;

	mwp_queue_ctrl_stats(wire.q, &st);
	return st.c[c];
}

struct find {
	uint8_t ip[16];
	bool found;
};

static void
find_cb(const struct mwp_neigh_entry *e, uint64_t age_ms, void *arg)
{
	struct find *f = arg;

	RTE_SET_USED(age_ms);
	if (memcmp(e->ip, f->ip, 16) == 0 && memcmp(&e->mac, PEER_HW, 6) == 0)
		f->found = true;
}

/* Is ip4 in the port's neighbour table, at the peer's MAC? */
static bool
learned(const uint8_t *ip4)
{
	struct find f = { .ip = { [10] = 0xff, [11] = 0xff } };

	memcpy(f.ip + 12, ip4, 4);
	mwp_neigh_walk(wire.port->neigh, rte_rdtsc(), find_cb, &f);
	return f.found;
}

Test(host, what_is_not_roce_goes_to_the_host_in_order_and_roce_does_not)
{
	struct rte_mbuf *in[8], *out[64];
	unsigned int sent_before;
	uint16_t n;

	host_setup(true);
	sent_before = wire.nb_frames;
	in[0] = arp_request();
	in[1] = ip4(OUR_HW, 6, 0, 22);			/* TCP: SSH */
	in[2] = ip4(OUR_HW, 17, 0, 53);		/* UDP, not 4791 */
	in[3] = ip4(OUR_HW, 17, 0x2000, 4791);		/* a fragment, even of 4791 */
	in[4] = ip4(OTHER_MAC, 6, 0, 22);		/* TCP for another host */
	in[5] = lldp();					/* a group address */
	in[6] = ip4(OUR_HW, 1, 0, 0);			/* ICMP (not an echo here) */
	wire_feed(in, 7);
	cr_expect_eq(wire.nb_frames, sent_before, "the kernel answers, not the port");

	n = mwp_queue_host_take(wire.q, out, RTE_DIM(out));
	cr_assert_eq(n, 6);
	cr_expect_eq(out[0], in[0], "in the order received");
	cr_expect_eq(out[1], in[1]);
	cr_expect_eq(out[2], in[2]);
	cr_expect_eq(out[3], in[3]);
	cr_expect_eq(out[4], in[5]);
	cr_expect_eq(out[5], in[6]);
	rte_pktmbuf_free_bulk(out, n);
	cr_expect_eq(mwp_queue_host_take(wire.q, out, RTE_DIM(out)), 0, "taken once");

	/* counted once each: six to the host, the other host's TCP dropped */
	cr_expect_eq(wire.st.rx_pkts, 7);
	cr_expect_eq(wire.st.host, 6);
	cr_expect_eq(wire.st.drop[MWP_DROP_NOT_UDP], 1);
	cr_expect_eq(wire.st.ctrl, 0);
	cr_expect_eq(wire.st.accepted, 0);
	/* the control path learnt the asker, and replied to nothing */
	cr_expect_eq(ctrl_ctr(MWP_CTRL_ARP_REQUEST_IN), 1);
	cr_expect_eq(ctrl_ctr(MWP_CTRL_ARP_REPLY_OUT), 0);
	cr_expect_eq(ctrl_ctr(MWP_CTRL_RATE_LIMITED), 0);
	cr_expect(learned(PEER_IP4), "the asker is a neighbour");
	cr_expect_eq(rte_mempool_avail_count(test_mp), pool_avail, "no mbuf lost");
}

Test(host, roce_for_the_port_never_reaches_the_host)
{
	struct rte_mbuf *out[4];

	host_setup(true);
	/* an ACK for nothing outstanding: the completer's, refused there */
	wire_ack(qp->qp_num, 0);
	cr_expect_eq(mwp_queue_host_take(wire.q, out, RTE_DIM(out)), 0);
	cr_expect_eq(wire.st.host, 0);
	cr_expect_eq(mwp_stats_dropped(&wire.st), 1);
	cr_expect_eq(rte_mempool_avail_count(test_mp), pool_avail);
}

Test(host, a_queue_whose_host_frames_are_not_taken_drops_the_excess_counted)
{
	struct rte_mbuf *in[MWP_BURST_MAX], *out[MWP_BURST_MAX];
	uint16_t n;

	host_setup(true);
	for (unsigned int i = 0; i < MWP_BURST_MAX; i++)
		in[i] = ip4(OUR_HW, 6, 0, 22);
	wire_feed(in, MWP_BURST_MAX);
	for (unsigned int i = 0; i < 3; i++)
		in[i] = ip4(OUR_HW, 6, 0, 22);
	wire_feed(in, 3);
	cr_expect_eq(wire.st.host, MWP_BURST_MAX);
	cr_expect_eq(wire.st.drop[MWP_DROP_HOST_FULL], 3);
	n = mwp_queue_host_take(wire.q, out, 10);
	cr_expect_eq(n, 10, "as many as there is room for");
	rte_pktmbuf_free_bulk(out, n);
	n = mwp_queue_host_take(wire.q, out, RTE_DIM(out));
	cr_expect_eq(n, MWP_BURST_MAX - 10, "and the rest, next");
	rte_pktmbuf_free_bulk(out, n);
	cr_expect_eq(rte_mempool_avail_count(test_mp), pool_avail, "no mbuf lost");
}

Test(host, frames_for_the_host_are_held_until_taken)
{
	struct rte_mbuf *in[2];

	host_setup(true);
	in[0] = ip4(OUR_HW, 6, 0, 22);
	in[1] = lldp();
	wire_feed(in, 2);
	cr_expect_eq(wire.st.host, 2);
	/* held by the queue, not freed with the burst */
	cr_expect_eq(rte_mempool_avail_count(test_mp), pool_avail - 2);
}

Test(host, a_queue_freed_with_frames_for_the_host_frees_them)
{
	struct rte_mbuf *in[2];

	host_setup(true);
	in[0] = ip4(OUR_HW, 6, 0, 22);
	in[1] = lldp();
	wire_feed(in, 2);
	cr_assert_eq(rte_mempool_avail_count(test_mp), pool_avail - 2);
	mwp_engine_stop(wire.eng);
	mwp_queue_free(wire.q);
	cr_expect_eq(rte_mempool_avail_count(test_mp), pool_avail, "frames left behind");
	/* a queue again, for the teardown */
	wire.q = mwp_queue_create(wire.eng, wire.port, 0, &wire.st);
	cr_assert_not_null(wire.q);
	mwp_engine_start(wire.eng);
}

Test(host, without_it_the_port_answers_and_drops_as_before)
{
	struct rte_mbuf *in[2], *out[4];

	host_setup(false);
	in[0] = arp_request();
	in[1] = ip4(OUR_HW, 6, 0, 22);
	wire_feed(in, 2);
	cr_expect_eq(mwp_queue_host_take(wire.q, out, RTE_DIM(out)), 0);
	cr_expect_eq(wire.st.host, 0);
	cr_expect_eq(wire.st.ctrl, 1);
	cr_expect_eq(ctrl_ctr(MWP_CTRL_ARP_REPLY_OUT), 1, "the port answers ARP");
	cr_expect_eq(wire.st.drop[MWP_DROP_NOT_UDP], 1);
}
