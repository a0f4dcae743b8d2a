/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control path (lib/net/mwp_ctrl.c): ARP, IPv6 neighbour discovery and
 * ICMP / ICMPv6 echo.  Requests are built here byte by byte; replies are
 * read field by field, their checksums recomputed with this file's own
 * RFC 1071 sum.  Every truncation and every bad field of each request is
 * fed in: a counter, no reply, no crash, no mbuf lost.  A storm of
 * requests meets the reply rate; an empty pool is counted.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "mwp_ctrl_priv.h"
#include "mwp_neigh_priv.h"
#include "mwp_neigh.h"
#include "test_eal.h"

#define HZ UINT64_C(1000000000)

static const uint8_t OUR_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t PEER_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t OUR_IP4[4] = { 10, 0, 0, 1 };
static const uint8_t PEER_IP4[4] = { 10, 0, 0, 2 };
static const uint8_t OUR_IP6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x01 };
static const uint8_t PEER_IP6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02 };

static struct mwp_neigh_table *nt;
static struct mwp_ctrl_ctx cx;
static unsigned int pool_avail;

static void
ctx_init(uint32_t rate, uint32_t burst)
{
	struct mwp_port_conf pc = { .has_ipv4 = true, .has_ipv6 = true };

	memcpy(&pc.mac, OUR_MAC, 6);
	memcpy(&pc.ipv4, OUR_IP4, 4);
	memcpy(pc.ipv6, OUR_IP6, 16);
	mwp_ctrl_ctx_init(&cx, &pc, nt, test_mp, rate, burst, HZ);
}

static void
setup(void)
{
	static const struct mwp_neigh_params prm = { 0 };

	test_eal_init();
	nt = mwp_neigh_create(16, &prm, HZ, SOCKET_ID_ANY);
	cr_assert_not_null(nt);
	ctx_init(0, 0);
	pool_avail = rte_mempool_avail_count(test_mp);
}

static void
teardown(void)
{
	mwp_neigh_free(nt);
	cr_expect_eq(rte_mempool_avail_count(test_mp), pool_avail, "mbufs lost: %u",
		     pool_avail - rte_mempool_avail_count(test_mp));
}

TestSuite(ctrl, .init = setup, .fini = teardown);

/* ---- independent helpers ---- */

/* RFC 1071: the one's complement of the one's complement sum of 16-bit
 * big-endian words (an odd byte padded with zero). */
static uint32_t
sum16(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)(p[n - 1] << 8);
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The ICMPv6 checksum of msg, with its checksum field as it stands. */
static uint16_t
icmp6_sum(const uint8_t *src, const uint8_t *dst, const uint8_t *msg, uint32_t len)
{
	uint32_t s = 0;

	s = sum16(s, src, 16);
	s = sum16(s, dst, 16);
	s += len >> 16;
	s += len & 0xffff;
	s += 58;
	return fold(sum16(s, msg, len));
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static struct rte_mbuf *
frame(const uint8_t *b, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	cr_assert_not_null(m);
	memcpy(rte_pktmbuf_append(m, len), b, len);
	return m;
}

/* Feed b; return the reply (NULL if none) and what input returned. */
static struct rte_mbuf *
feed(const uint8_t *b, uint16_t len, uint64_t now, bool *taken)
{
	struct rte_mbuf *m = frame(b, len), *r = NULL;
	bool t = mwp_ctrl_input(&cx, m, now, &r);

	if (taken != NULL)
		*taken = t;
	rte_pktmbuf_free(m);
	return r;
}

static void
eth(uint8_t *b, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	put_be16(b + 12, type);
}

/* An ARP packet: returns its length (42). */
static uint16_t
arp(uint8_t *b, const uint8_t *edst, uint16_t op, const uint8_t *sha, const uint8_t *spa,
    const uint8_t *tha, const uint8_t *tpa)
{
	eth(b, edst, sha, 0x0806);
	put_be16(b + 14, 1);
	put_be16(b + 16, 0x0800);
	b[18] = 6;
	b[19] = 4;
	put_be16(b + 20, op);
	memcpy(b + 22, sha, 6);
	memcpy(b + 28, spa, 4);
	memcpy(b + 32, tha, 6);
	memcpy(b + 38, tpa, 4);
	return 42;
}

/* An ICMP echo request with plen bytes of payload: returns its length. */
static uint16_t
echo4(uint8_t *b, const uint8_t *dst_ip, uint16_t plen)
{
	uint8_t *ip = b + 14, *ic = ip + 20;
	uint16_t i;

	eth(b, OUR_MAC, PEER_MAC, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[1] = 0x10;
	put_be16(ip + 2, (uint16_t)(20 + 8 + plen));
	put_be16(ip + 4, 0x1234);
	ip[8] = 64;
	ip[9] = 1;
	memcpy(ip + 12, PEER_IP4, 4);
	memcpy(ip + 16, dst_ip, 4);
	put_be16(ip + 10, fold(sum16(0, ip, 20)));
	ic[0] = 8;
	ic[1] = 0;
	put_be16(ic + 2, 0);
	put_be16(ic + 4, 0xbeef);	/* identifier */
	put_be16(ic + 6, 7);		/* sequence */
	for (i = 0; i < plen; i++)
		ic[8 + i] = (uint8_t)(i * 7 + 3);
	put_be16(ic + 2, fold(sum16(0, ic, 8u + plen)));
	return (uint16_t)(14 + 20 + 8 + plen);
}

/* An IPv6 header (hop limit hl) and an ICMPv6 message already at b + 54
 * of ilen bytes: fills the header and the checksum; returns the length. */
static uint16_t
ip6_icmp(uint8_t *b, const uint8_t *edst, const uint8_t *src, const uint8_t *dst,
	 uint8_t hl, uint16_t ilen)
{
	uint8_t *ip = b + 14, *ic = ip + 40;

	eth(b, edst, PEER_MAC, 0x86dd);
	memset(ip, 0, 40);
	ip[0] = 0x60;
	put_be16(ip + 4, ilen);
	ip[6] = 58;
	ip[7] = hl;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	put_be16(ic + 2, 0);
	put_be16(ic + 2, icmp6_sum(src, dst, ic, ilen));
	return (uint16_t)(54 + ilen);
}

static void
sn_of(const uint8_t *ip, uint8_t *sn, uint8_t *smac)
{
	static const uint8_t p[13] = { 0xff, 0x02, [11] = 1, [12] = 0xff };

	memcpy(sn, p, 13);
	memcpy(sn + 13, ip + 13, 3);
	smac[0] = 0x33;
	smac[1] = 0x33;
	smac[2] = 0xff;
	memcpy(smac + 3, ip + 13, 3);
}

/* A neighbour solicitation for target from src (:: for DAD), with a
 * source link-layer address option unless slla is false. */
static uint16_t
ns(uint8_t *b, const uint8_t *src, const uint8_t *target, bool slla)
{
	uint8_t *ic = b + 54, sn[16], smac[6];
	uint16_t ilen = slla ? 32 : 24;

	sn_of(target, sn, smac);
	memset(ic, 0, ilen);
	ic[0] = 135;
	memcpy(ic + 8, target, 16);
	if (slla) {
		ic[24] = 1;
		ic[25] = 1;
		memcpy(ic + 26, PEER_MAC, 6);
	}
	return ip6_icmp(b, smac, src, sn, 255, ilen);
}

static uint16_t
na(uint8_t *b, const uint8_t *target, uint8_t flags, const uint8_t *tlla)
{
	uint8_t *ic = b + 54;

	memset(ic, 0, 32);
	ic[0] = 136;
	ic[4] = flags;
	memcpy(ic + 8, target, 16);
	ic[24] = 2;
	ic[25] = 1;
	memcpy(ic + 26, tlla, 6);
	return ip6_icmp(b, OUR_MAC, target, OUR_IP6, 255, 32);
}

static uint16_t
echo6(uint8_t *b, const uint8_t *dst, uint16_t plen)
{
	uint8_t *ic = b + 54;
	uint16_t i;

	ic[0] = 128;
	ic[1] = 0;
	put_be16(ic + 4, 0x4242);
	put_be16(ic + 6, 9);
	for (i = 0; i < plen; i++)
		ic[8 + i] = (uint8_t)(0xa5 ^ i);
	return ip6_icmp(b, OUR_MAC, PEER_IP6, dst, 64, (uint16_t)(8 + plen));
}

/* The neighbour entry of ip (16 bytes), copied; false if none. */
struct find_arg {
	const uint8_t *ip;
	struct mwp_neigh_entry e;
	bool found;
};

static void
find_cb(const struct mwp_neigh_entry *e, uint64_t age_ms, void *arg)
{
	struct find_arg *f = arg;

	RTE_SET_USED(age_ms);
	if (memcmp(e->ip, f->ip, 16) == 0) {
		f->e = *e;
		f->found = true;
	}
}

static bool
neigh_of(const uint8_t *ip, struct mwp_neigh_entry *e)
{
	struct find_arg f = { .ip = ip };

	mwp_neigh_walk(nt, 1, find_cb, &f);
	if (f.found && e != NULL)
		*e = f.e;
	return f.found;
}

static void
mapped(const uint8_t *ip4, uint8_t *ip)
{
	memset(ip, 0, 10);
	ip[10] = 0xff;
	ip[11] = 0xff;
	memcpy(ip + 12, ip4, 4);
}

static uint64_t
ctr(enum mwp_ctrl_ctr c)
{
	return cx.st.c[c];
}

/* ---- ARP ---- */

Test(ctrl, an_arp_request_for_our_address_is_answered_and_its_sender_learned)
{
	static const uint8_t zero6[6];
	uint8_t b[64], ip[16];
	struct mwp_neigh_entry e;
	struct rte_mbuf *r;
	const uint8_t *d;

	r = feed(b, arp(b, BCAST, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4), 1, NULL);
	cr_assert_not_null(r);
	cr_assert_eq(rte_pktmbuf_data_len(r), 42);
	d = rte_pktmbuf_mtod(r, const uint8_t *);
	cr_expect_arr_eq(d, PEER_MAC, 6, "to the asker");
	cr_expect_arr_eq(d + 6, OUR_MAC, 6);
	cr_expect_eq(be16(d + 12), 0x0806);
	cr_expect_eq(be16(d + 14), 1);
	cr_expect_eq(be16(d + 16), 0x0800);
	cr_expect(d[18] == 6 && d[19] == 4);
	cr_expect_eq(be16(d + 20), 2, "a reply");
	cr_expect_arr_eq(d + 22, OUR_MAC, 6);
	cr_expect_arr_eq(d + 28, OUR_IP4, 4);
	cr_expect_arr_eq(d + 32, PEER_MAC, 6);
	cr_expect_arr_eq(d + 38, PEER_IP4, 4);
	rte_pktmbuf_free(r);
	cr_expect_eq(ctr(MWP_CTRL_ARP_REQUEST_IN), 1);
	cr_expect_eq(ctr(MWP_CTRL_ARP_REPLY_OUT), 1);
	mapped(PEER_IP4, ip);
	cr_assert(neigh_of(ip, &e), "the asker is a neighbour now");
	cr_expect_arr_eq(&e.mac, PEER_MAC, 6);
}

Test(ctrl, a_padded_arp_request_and_one_with_a_vlan_tag_are_answered_in_kind)
{
	static const uint8_t zero6[6];
	uint8_t b[64] = { 0 }, t[68] = { 0 };
	struct rte_mbuf *r;
	const uint8_t *d;

	/* 60 bytes: the minimum Ethernet frame, zero padded */
	arp(b, BCAST, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4);
	r = feed(b, 60, 1, NULL);
	cr_assert_not_null(r);
	rte_pktmbuf_free(r);
	/* 802.1Q, VLAN 5, PCP 3: the reply carries the same tag */
	memcpy(t, b, 12);
	put_be16(t + 12, 0x8100);
	put_be16(t + 14, 3 << 13 | 5);
	memcpy(t + 16, b + 12, 30);
	r = feed(t, 46, 1, NULL);
	cr_assert_not_null(r);
	cr_assert_eq(rte_pktmbuf_data_len(r), 46);
	d = rte_pktmbuf_mtod(r, const uint8_t *);
	cr_expect_eq(be16(d + 12), 0x8100);
	cr_expect_eq(be16(d + 14), 3 << 13 | 5);
	cr_expect_eq(be16(d + 16), 0x0806);
	cr_expect_eq(be16(d + 24), 2);
	cr_expect_arr_eq(d + 26, OUR_MAC, 6);
	rte_pktmbuf_free(r);
	cr_expect_eq(ctr(MWP_CTRL_ARP_REPLY_OUT), 2);
}

Test(ctrl, arp_for_other_hosts_is_counted_not_answered)
{
	static const uint8_t zero6[6];
	static const uint8_t other_ip[4] = { 10, 0, 0, 9 };
	static const uint8_t other_mac[6] = { 0x02, 0, 0, 0, 0, 9 };
	uint8_t b[64];
	bool taken;

	cr_expect_null(feed(b, arp(b, BCAST, 1, PEER_MAC, PEER_IP4, zero6, other_ip), 1,
			    &taken));
	cr_expect(taken);
	cr_expect_eq(ctr(MWP_CTRL_ARP_OTHER), 1);
	/* unicast to another MAC */
	cr_expect_null(feed(b, arp(b, other_mac, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4), 1,
			    &taken));
	cr_expect(taken);
	cr_expect_eq(ctr(MWP_CTRL_NOT_OURS), 1);
	cr_expect_eq(ctr(MWP_CTRL_ARP_REPLY_OUT), 0);
}

Test(ctrl, a_gratuitous_arp_teaches_the_table_an_unasked_reply_does_not)
{
	static const uint8_t zero6[6];
	static const uint8_t g_ip[4] = { 10, 0, 0, 7 };
	static const uint8_t g_mac[6] = { 0x02, 0, 0, 0, 0, 7 };
	uint8_t b[64], ip[16];
	struct mwp_neigh_entry e;

	/* a reply nobody asked for (Linux: arp_accept=0) */
	cr_expect_null(feed(b, arp(b, OUR_MAC, 2, PEER_MAC, PEER_IP4, OUR_MAC, OUR_IP4), 1,
			    NULL));
	cr_expect_eq(ctr(MWP_CTRL_ARP_REPLY_IN), 1);
	mapped(PEER_IP4, ip);
	cr_expect_not(neigh_of(ip, NULL));
	cr_expect_eq(nt->st.ignored, 1);
	/* gratuitous: sender and target the same */
	cr_expect_null(feed(b, arp(b, BCAST, 1, g_mac, g_ip, zero6, g_ip), 1, NULL));
	cr_expect_eq(ctr(MWP_CTRL_ARP_OTHER), 1);
	mapped(g_ip, ip);
	cr_assert(neigh_of(ip, &e));
	cr_expect_arr_eq(&e.mac, g_mac, 6);
}

Test(ctrl, an_arp_probe_from_0_0_0_0_is_answered_but_teaches_nothing)
{
	static const uint8_t zero6[6], zero4[4];
	uint8_t b[64], ip[16];
	struct rte_mbuf *r;

	r = feed(b, arp(b, BCAST, 1, PEER_MAC, zero4, zero6, OUR_IP4), 1, NULL);
	cr_assert_not_null(r);
	cr_expect_arr_eq(rte_pktmbuf_mtod(r, uint8_t *) + 38, zero4, 4);
	rte_pktmbuf_free(r);
	mapped(zero4, ip);
	cr_expect_not(neigh_of(ip, NULL));
	cr_expect_eq(nt->st.learned, 0);
}

Test(ctrl, arp_with_a_bad_field_is_malformed)
{
	static const uint8_t zero6[6];
	static const struct { unsigned int off; uint8_t v; } bad[] = {
		{ 15, 6 },	/* hardware type 6 */
		{ 16, 0x86 },	/* protocol 0x86dd */
		{ 18, 8 },	/* hardware length 8 */
		{ 19, 16 },	/* protocol length 16 */
		{ 21, 3 },	/* operation 3 */
		{ 20, 1 },	/* operation 0x0101 */
	};
	uint8_t b[64];
	unsigned int i;
	bool taken;

	for (i = 0; i < RTE_DIM(bad); i++) {
		uint16_t len = arp(b, BCAST, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4);

		b[bad[i].off] = bad[i].v;
		cr_expect_null(feed(b, len, 1, &taken), "case %u", i);
		cr_expect_not(taken, "case %u: the caller counts it too", i);
	}
	cr_expect_eq(ctr(MWP_CTRL_MALFORMED), RTE_DIM(bad));
	cr_expect_eq(ctr(MWP_CTRL_ARP_REPLY_OUT), 0);
	cr_expect_eq(nt->st.learned, 0);
}

/* ---- ICMP echo ---- */

Test(ctrl, an_icmp_echo_is_answered_with_its_payload_and_right_checksums)
{
	static const uint16_t sizes[] = { 0, 1, 56, 57, 1400 };
	unsigned int i;

	for (i = 0; i < RTE_DIM(sizes); i++) {
		uint8_t b[1500];
		uint16_t len = echo4(b, OUR_IP4, sizes[i]);
		struct rte_mbuf *r = feed(b, len, 1, NULL);
		const uint8_t *d, *ip, *ic;

		cr_assert_not_null(r, "size %u", sizes[i]);
		cr_assert_eq(rte_pktmbuf_data_len(r), len);
		d = rte_pktmbuf_mtod(r, const uint8_t *);
		ip = d + 14;
		ic = ip + 20;
		cr_expect_arr_eq(d, PEER_MAC, 6);
		cr_expect_arr_eq(d + 6, OUR_MAC, 6);
		cr_expect_eq(be16(d + 12), 0x0800);
		cr_expect_eq(ip[0], 0x45);
		cr_expect_eq(ip[1], 0x10, "the request's TOS");
		cr_expect_eq(be16(ip + 2), 28 + sizes[i]);
		cr_expect_eq(ip[9], 1);
		cr_expect(ip[8] > 0);
		cr_expect_arr_eq(ip + 12, OUR_IP4, 4);
		cr_expect_arr_eq(ip + 16, PEER_IP4, 4);
		cr_expect_eq(fold(sum16(0, ip, 20)), 0, "IPv4 header checksum");
		cr_expect_eq(ic[0], 0, "echo reply");
		cr_expect_eq(ic[1], 0);
		cr_expect_eq(fold(sum16(0, ic, 8u + sizes[i])), 0, "ICMP checksum");
		cr_expect_arr_eq(ic + 4, b + 38, 4u + sizes[i], "id, sequence, payload");
		rte_pktmbuf_free(r);
	}
	cr_expect_eq(ctr(MWP_CTRL_ECHO_IN), RTE_DIM(sizes));
	cr_expect_eq(ctr(MWP_CTRL_ECHO_OUT), RTE_DIM(sizes));
}

Test(ctrl, icmp_with_a_bad_checksum_a_fragment_or_another_type_is_not_answered)
{
	uint8_t b[200];
	uint16_t len;
	bool taken;

	len = echo4(b, OUR_IP4, 16);
	b[14 + 28 + 3] ^= 1;		/* payload */
	cr_expect_null(feed(b, len, 1, &taken));
	cr_expect(taken);
	cr_expect_eq(ctr(MWP_CTRL_BAD_CSUM), 1);

	len = echo4(b, OUR_IP4, 16);
	put_be16(b + 14 + 6, 0x2000);	/* more fragments */
	put_be16(b + 14 + 10, 0);
	put_be16(b + 14 + 10, fold(sum16(0, b + 14, 20)));
	cr_expect_null(feed(b, len, 1, NULL));

	len = echo4(b, OUR_IP4, 16);
	b[34] = 13;			/* timestamp request */
	put_be16(b + 36, 0);
	put_be16(b + 36, fold(sum16(0, b + 34, 24)));
	cr_expect_null(feed(b, len, 1, NULL));
	cr_expect_eq(ctr(MWP_CTRL_ICMP_OTHER), 2);
	cr_expect_eq(ctr(MWP_CTRL_ECHO_OUT), 0);
}

Test(ctrl, icmp_for_another_address_is_left_to_the_caller)
{
	static const uint8_t other[4] = { 10, 0, 0, 9 };
	uint8_t b[200];
	bool taken = true;

	cr_expect_null(feed(b, echo4(b, other, 8), 1, &taken));
	cr_expect_not(taken);
	cr_expect_eq(ctr(MWP_CTRL_NOT_OURS), 1);
	/* UDP is not ours either: the responder's parser had it */
	echo4(b, OUR_IP4, 8);
	b[14 + 9] = 17;
	cr_expect_null(feed(b, 50, 1, &taken));
	cr_expect_not(taken);
}

/* ---- IPv6 neighbour discovery ---- */

Test(ctrl, a_solicitation_for_our_address_gets_a_solicited_advertisement)
{
	uint8_t b[128];
	struct mwp_neigh_entry e;
	struct rte_mbuf *r;
	const uint8_t *d, *ip, *ic;

	r = feed(b, ns(b, PEER_IP6, OUR_IP6, true), 1, NULL);
	cr_assert_not_null(r);
	cr_assert_eq(rte_pktmbuf_data_len(r), 14 + 40 + 32);
	d = rte_pktmbuf_mtod(r, const uint8_t *);
	ip = d + 14;
	ic = ip + 40;
	cr_expect_arr_eq(d, PEER_MAC, 6, "to the source link-layer address");
	cr_expect_arr_eq(d + 6, OUR_MAC, 6);
	cr_expect_eq(be16(d + 12), 0x86dd);
	cr_expect_eq(ip[0] >> 4, 6);
	cr_expect_eq(be16(ip + 4), 32);
	cr_expect_eq(ip[6], 58);
	cr_expect_eq(ip[7], 255, "hop limit 255 (RFC 4861 7.1.2)");
	cr_expect_arr_eq(ip + 8, OUR_IP6, 16);
	cr_expect_arr_eq(ip + 24, PEER_IP6, 16);
	cr_expect_eq(ic[0], 136);
	cr_expect_eq(ic[1], 0);
	cr_expect_eq(ic[4], 0x60, "solicited and override, not router");
	cr_expect_arr_eq(ic + 8, OUR_IP6, 16);
	cr_expect(ic[24] == 2 && ic[25] == 1, "target link-layer address option");
	cr_expect_arr_eq(ic + 26, OUR_MAC, 6);
	cr_expect_eq(icmp6_sum(ip + 8, ip + 24, ic, 32), 0, "ICMPv6 checksum");
	rte_pktmbuf_free(r);
	cr_expect_eq(ctr(MWP_CTRL_NS_IN), 1);
	cr_expect_eq(ctr(MWP_CTRL_NA_OUT), 1);
	cr_assert(neigh_of(PEER_IP6, &e));
	cr_expect_arr_eq(&e.mac, PEER_MAC, 6);
}

Test(ctrl, duplicate_address_detection_is_answered_to_all_nodes)
{
	static const uint8_t unspec[16];
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	static const uint8_t all_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	uint8_t b[128];
	struct rte_mbuf *r;
	const uint8_t *d;

	r = feed(b, ns(b, unspec, OUR_IP6, false), 1, NULL);
	cr_assert_not_null(r);
	d = rte_pktmbuf_mtod(r, const uint8_t *);
	cr_expect_arr_eq(d, all_mac, 6);
	cr_expect_arr_eq(d + 14 + 24, all_nodes, 16);
	cr_expect_eq(d[54 + 4], 0x20, "override, not solicited");
	cr_expect_eq(icmp6_sum(d + 22, d + 38, d + 54, 32), 0);
	rte_pktmbuf_free(r);
	cr_expect_eq(nt->st.learned, 0, "nothing to learn from ::");
}

Test(ctrl, bad_neighbour_discovery_is_malformed_or_not_ours)
{
	static const uint8_t unspec[16];
	static const uint8_t other[16] = { 0xfd, [15] = 0x99 };
	uint8_t b[128];
	uint16_t len;

	/* a hop limit below 255: from off the link */
	len = ns(b, PEER_IP6, OUR_IP6, true);
	b[14 + 7] = 64;
	put_be16(b + 56, 0);
	put_be16(b + 56, icmp6_sum(b + 22, b + 38, b + 54, 32));
	cr_expect_null(feed(b, len, 1, NULL));
	/* an option of length zero */
	len = ns(b, PEER_IP6, OUR_IP6, true);
	b[54 + 25] = 0;
	put_be16(b + 56, 0);
	put_be16(b + 56, icmp6_sum(b + 22, b + 38, b + 54, 32));
	cr_expect_null(feed(b, len, 1, NULL));
	/* an option running past the end */
	len = ns(b, PEER_IP6, OUR_IP6, true);
	b[54 + 25] = 2;
	put_be16(b + 56, 0);
	put_be16(b + 56, icmp6_sum(b + 22, b + 38, b + 54, 32));
	cr_expect_null(feed(b, len, 1, NULL));
	/* DAD with a source link-layer address (RFC 4861 7.1.1) */
	cr_expect_null(feed(b, ns(b, unspec, OUR_IP6, true), 1, NULL));
	cr_expect_eq(ctr(MWP_CTRL_MALFORMED), 4);
	/* a bad checksum */
	len = ns(b, PEER_IP6, OUR_IP6, true);
	b[54 + 30] ^= 0x10;
	cr_expect_null(feed(b, len, 1, NULL));
	cr_expect_eq(ctr(MWP_CTRL_BAD_CSUM), 1);
	/* for another target (sent to our solicited-node group by chance) */
	len = ns(b, PEER_IP6, other, true);
	{
		uint8_t sn[16], smac[6];

		sn_of(OUR_IP6, sn, smac);
		memcpy(b, smac, 6);
		memcpy(b + 38, sn, 16);
		put_be16(b + 56, 0);
		put_be16(b + 56, icmp6_sum(b + 22, b + 38, b + 54, 32));
	}
	cr_expect_null(feed(b, len, 1, NULL));
	cr_expect_eq(ctr(MWP_CTRL_NOT_OURS), 1);
	cr_expect_eq(ctr(MWP_CTRL_NA_OUT), 0);
	cr_expect_eq(nt->st.learned, 0);
}

Test(ctrl, an_advertisement_teaches_the_table)
{
	uint8_t b[128];
	struct mwp_neigh_entry e;

	cr_expect_null(feed(b, na(b, PEER_IP6, 0x20, PEER_MAC), 1, NULL));
	cr_expect_eq(ctr(MWP_CTRL_NA_IN), 1);
	cr_assert(neigh_of(PEER_IP6, &e));
	cr_expect_arr_eq(&e.mac, PEER_MAC, 6);
	cr_expect_eq(e.state, MWP_NEIGH_STALE, "unsolicited: stale until confirmed");
}

Test(ctrl, an_icmpv6_echo_is_answered_and_a_multicast_one_is_not)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	uint8_t b[1500];
	uint16_t len = echo6(b, OUR_IP6, 100);
	struct rte_mbuf *r = feed(b, len, 1, NULL);
	const uint8_t *d;

	cr_assert_not_null(r);
	cr_assert_eq(rte_pktmbuf_data_len(r), len);
	d = rte_pktmbuf_mtod(r, const uint8_t *);
	cr_expect_arr_eq(d, PEER_MAC, 6);
	cr_expect_arr_eq(d + 22, OUR_IP6, 16);
	cr_expect_arr_eq(d + 38, PEER_IP6, 16);
	cr_expect_eq(d[54], 129, "echo reply");
	cr_expect_arr_eq(d + 58, b + 58, 4 + 100, "id, sequence, payload");
	cr_expect_eq(icmp6_sum(d + 22, d + 38, d + 54, 108), 0);
	rte_pktmbuf_free(r);
	cr_expect_eq(ctr(MWP_CTRL_ECHO6_OUT), 1);

	len = echo6(b, all_nodes, 8);
	b[0] = 0x33;
	b[1] = 0x33;
	cr_expect_null(feed(b, len, 1, NULL));
	cr_expect_eq(ctr(MWP_CTRL_ICMP_OTHER), 1);
}

/* ---- every truncation ---- */

Test(ctrl, every_truncation_of_every_request_is_refused_without_a_reply)
{
	static const uint8_t zero6[6];
	uint8_t f[4][1500];
	uint16_t n[4];
	unsigned int k, len;
	uint64_t before;

	n[0] = arp(f[0], BCAST, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4);
	n[1] = echo4(f[1], OUR_IP4, 40);
	n[2] = ns(f[2], PEER_IP6, OUR_IP6, true);
	n[3] = echo6(f[3], OUR_IP6, 40);
	for (k = 0; k < 4; k++) {
		for (len = 0; len < n[k]; len++) {
			bool taken;
			struct rte_mbuf *r;

			before = ctr(MWP_CTRL_MALFORMED) + ctr(MWP_CTRL_BAD_CSUM);
			r = feed(f[k], (uint16_t)len, 1, &taken);
			cr_expect_null(r, "frame %u cut at %u answered", k, len);
			rte_pktmbuf_free(r);
			/* past the Ethernet header, each cut is counted (a
			 * short IPv4 header is not ICMP: the caller's) */
			if (len >= 14 + (k == 1 ? 20u : 0u) + (k >= 2 ? 40u : 0u))
				cr_expect_gt(ctr(MWP_CTRL_MALFORMED) + ctr(MWP_CTRL_BAD_CSUM),
					     before, "frame %u cut at %u not counted", k, len);
		}
		/* whole, it is answered */
		{
			struct rte_mbuf *r = feed(f[k], n[k], 1, NULL);

			cr_expect_not_null(r, "frame %u whole", k);
			rte_pktmbuf_free(r);
		}
	}
	cr_expect_eq(nt->st.learned, 2, "only the whole ARP request and NS taught");
}

/* ---- rate and pool ---- */

Test(ctrl, an_arp_storm_meets_the_reply_rate)
{
	static const uint8_t zero6[6];
	uint8_t b[64];
	uint16_t len;
	unsigned int i, replies = 0;

	ctx_init(1000, 16);
	len = arp(b, BCAST, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4);
	/* 10 000 requests in 10 ms: 16 at once, then 1 a millisecond */
	for (i = 0; i < 10000; i++) {
		struct rte_mbuf *r = feed(b, len, HZ + (uint64_t)i * 1000, NULL);

		if (r != NULL)
			replies++;
		rte_pktmbuf_free(r);
	}
	cr_expect_geq(replies, 16 + 9);
	cr_expect_leq(replies, 16 + 11);
	cr_expect_eq(ctr(MWP_CTRL_ARP_REQUEST_IN), 10000);
	cr_expect_eq(ctr(MWP_CTRL_RATE_LIMITED), 10000 - replies);
	cr_expect_eq(ctr(MWP_CTRL_ARP_REPLY_OUT), replies);
	/* a second later the bucket is full again */
	for (i = 0, replies = 0; i < 20; i++) {
		struct rte_mbuf *r = feed(b, len, 3 * HZ, NULL);

		replies += r != NULL;
		rte_pktmbuf_free(r);
	}
	cr_expect_eq(replies, 16);
}

Test(ctrl, an_empty_pool_is_counted_and_nothing_leaks)
{
	static const uint8_t zero6[6];
	struct rte_mempool *tiny = rte_pktmbuf_pool_create("ctrl_tiny", 3, 0, 0,
							   RTE_MBUF_DEFAULT_BUF_SIZE,
							   SOCKET_ID_ANY);
	struct rte_mbuf *held[3], *r;
	uint8_t b[64];
	unsigned int i;

	cr_assert_not_null(tiny);
	cx.mp = tiny;
	for (i = 0; i < 3; i++)
		held[i] = rte_pktmbuf_alloc(tiny);
	cr_expect_null(feed(b, arp(b, BCAST, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4), 1,
			    NULL));
	cr_expect_null(mwp_ctrl_probe(&cx, PEER_IP6, NULL));
	cr_expect_eq(ctr(MWP_CTRL_NO_MBUF), 2);
	rte_pktmbuf_free(held[0]);
	r = feed(b, 42, 1, NULL);
	cr_expect_not_null(r);
	rte_pktmbuf_free(r);
	rte_pktmbuf_free(held[1]);
	rte_pktmbuf_free(held[2]);
	cr_expect_eq(rte_mempool_avail_count(tiny), 3);
	rte_mempool_free(tiny);
}

Test(ctrl, a_port_without_a_mac_has_no_control_path)
{
	static const uint8_t zero6[6];
	uint8_t b[64];
	bool taken = true;

	mwp_ctrl_ctx_init(&cx, &(struct mwp_port_conf){ .has_ipv4 = true }, nt, test_mp, 0, 0,
			  HZ);
	cr_expect_null(feed(b, arp(b, BCAST, 1, PEER_MAC, PEER_IP4, zero6, OUR_IP4), 1,
			    &taken));
	cr_expect_not(taken);
}

/* ---- probes ---- */

Test(ctrl, probes_ask_by_broadcast_or_solicited_node_multicast_or_unicast)
{
	static const uint8_t zero6[6];
	uint8_t ip[16], sn[16], smac[6];
	struct rte_mbuf *m;
	const uint8_t *d;

	mapped(PEER_IP4, ip);
	m = mwp_ctrl_probe(&cx, ip, NULL);
	cr_assert_not_null(m);
	cr_assert_eq(rte_pktmbuf_data_len(m), 42);
	d = rte_pktmbuf_mtod(m, const uint8_t *);
	cr_expect_arr_eq(d, BCAST, 6);
	cr_expect_eq(be16(d + 12), 0x0806);
	cr_expect_eq(be16(d + 20), 1, "a request");
	cr_expect_arr_eq(d + 22, OUR_MAC, 6);
	cr_expect_arr_eq(d + 28, OUR_IP4, 4);
	cr_expect_arr_eq(d + 32, zero6, 6);
	cr_expect_arr_eq(d + 38, PEER_IP4, 4);
	rte_pktmbuf_free(m);

	m = mwp_ctrl_probe(&cx, ip, (const struct rte_ether_addr *)PEER_MAC);
	cr_assert_not_null(m);
	cr_expect_arr_eq(rte_pktmbuf_mtod(m, uint8_t *), PEER_MAC, 6, "unicast");
	rte_pktmbuf_free(m);

	m = mwp_ctrl_probe(&cx, PEER_IP6, NULL);
	cr_assert_not_null(m);
	cr_assert_eq(rte_pktmbuf_data_len(m), 86);
	d = rte_pktmbuf_mtod(m, const uint8_t *);
	sn_of(PEER_IP6, sn, smac);
	cr_expect_arr_eq(d, smac, 6);
	cr_expect_eq(be16(d + 12), 0x86dd);
	cr_expect_eq(d[14 + 7], 255);
	cr_expect_arr_eq(d + 22, OUR_IP6, 16);
	cr_expect_arr_eq(d + 38, sn, 16);
	cr_expect_eq(d[54], 135);
	cr_expect_arr_eq(d + 62, PEER_IP6, 16, "target");
	cr_expect(d[78] == 1 && d[79] == 1, "source link-layer address option");
	cr_expect_arr_eq(d + 80, OUR_MAC, 6);
	cr_expect_eq(icmp6_sum(d + 22, d + 38, d + 54, 32), 0);
	rte_pktmbuf_free(m);
	cr_expect_eq(ctr(MWP_CTRL_ARP_REQUEST_OUT), 2);
	cr_expect_eq(ctr(MWP_CTRL_NS_OUT), 1);

	/* a family the port has no address of: nothing */
	cx.has_ipv6 = false;
	cr_expect_null(mwp_ctrl_probe(&cx, PEER_IP6, NULL));
}

/* Mbufs come back from the pool holding old frames: every byte of a
 * solicitation and an advertisement that is not a field (ICMPv6 code,
 * reserved bits) must still be zero. */
static void
dirty_the_pool(void)
{
	static struct rte_mbuf *m[1024];
	unsigned int n = rte_mempool_avail_count(test_mp);

	/* every mbuf: the pool has no cache, so the next is any of them */
	cr_assert_leq(n, RTE_DIM(m));
	cr_assert_eq(rte_pktmbuf_alloc_bulk(test_mp, m, n), 0);
	for (unsigned int i = 0; i < n; i++)
		memset(rte_pktmbuf_mtod(m[i], uint8_t *), 0xa5, rte_pktmbuf_tailroom(m[i]));
	rte_pktmbuf_free_bulk(m, n);
}

Test(ctrl, neighbour_discovery_from_a_dirty_pool_has_its_zero_fields_zero)
{
	static const uint8_t zero3[3];
	uint8_t b[128];
	struct rte_mbuf *r;
	const uint8_t *ic;

	dirty_the_pool();
	r = mwp_ctrl_probe(&cx, PEER_IP6, NULL);
	cr_assert_not_null(r);
	ic = rte_pktmbuf_mtod(r, const uint8_t *) + 14 + 40;
	cr_expect_eq(ic[0], 135);
	cr_expect_eq(ic[1], 0, "code");
	cr_expect_eq(ic[4], 0, "reserved");
	cr_expect_arr_eq(ic + 5, zero3, 3, "reserved");
	rte_pktmbuf_free(r);

	dirty_the_pool();
	r = feed(b, ns(b, PEER_IP6, OUR_IP6, true), 1, NULL);
	cr_assert_not_null(r);
	ic = rte_pktmbuf_mtod(r, const uint8_t *) + 14 + 40;
	cr_expect_eq(ic[0], 136);
	cr_expect_eq(ic[1], 0, "code");
	cr_expect_eq(ic[4], 0x60);
	cr_expect_arr_eq(ic + 5, zero3, 3, "reserved");
	rte_pktmbuf_free(r);
}

Test(ctrl, a_probe_answered_resolves_the_neighbour)
{
	uint8_t b[64], ip[16];
	struct rte_ether_addr mac;
	bool probe, uc;

	mapped(PEER_IP4, ip);
	cr_expect_eq(mwp_neigh_resolve(nt, ip, 10, &mac, &probe, &uc), MWP_NEIGH_WAIT);
	cr_expect(probe);
	cr_expect_null(feed(b, arp(b, OUR_MAC, 2, PEER_MAC, PEER_IP4, OUR_MAC, OUR_IP4), 20,
			    NULL));
	cr_expect_eq(mwp_neigh_resolve(nt, ip, 30, &mac, &probe, &uc), MWP_NEIGH_OK);
	cr_expect_arr_eq(&mac, PEER_MAC, 6);
}
