/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table (lib/net/mwp_neigh.c) on a fake clock (1 GHz): a miss
 * asks by broadcast and waits; answers make entries REACHABLE, time makes
 * them STALE (still used, confirmed by unicast probes); unanswered probes
 * fail them for a while; unsolicited news never evicts what is in use.
 */
#include <criterion/criterion.h>

#include "mwp_neigh_priv.h"
#include "test_eal.h"

#define HZ UINT64_C(1000000000)
#define MS(x) ((uint64_t)(x) * 1000000)

static struct mwp_neigh_table *t;
static const struct mwp_neigh_params prm = {
	.reachable_ms = 1000, .probe_ms = 100, .max_probes = 3, .failed_ms = 500,
	.gc_ms = 2000,
};

static void
setup(void)
{
	test_eal_init();
	t = mwp_neigh_create(8, &prm, HZ, SOCKET_ID_ANY);
	cr_assert_not_null(t);
}

static void
teardown(void)
{
	mwp_neigh_free(t);
}

TestSuite(neigh, .init = setup, .fini = teardown);

static void
v4(uint8_t ip[16], uint8_t last)
{
	static const uint8_t p[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0 };

	memcpy(ip, p, 16);
	ip[15] = last;
}

static struct rte_ether_addr
mac_of(uint8_t last)
{
	struct rte_ether_addr m = { { 0x02, 0, 0, 0, 0, last } };

	return m;
}

static enum mwp_neigh_res
resolve(const uint8_t ip[16], uint64_t now, struct rte_ether_addr *mac, bool *probe,
	bool *unicast)
{
	return mwp_neigh_resolve(t, ip, now, mac, probe, unicast);
}

Test(neigh, a_miss_asks_by_broadcast_then_paces_its_probes_then_fails)
{
	uint8_t ip[16];
	struct rte_ether_addr mac;
	bool probe, uc;

	v4(ip, 2);
	cr_expect_eq(resolve(ip, MS(1), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	cr_expect(probe && !uc, "the first probe is broadcast, at once");
	cr_expect_eq(resolve(ip, MS(50), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	cr_expect(!probe, "no second probe within probe_ms");
	cr_expect_eq(resolve(ip, MS(101), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	cr_expect(probe && !uc);
	cr_expect_eq(resolve(ip, MS(201), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	cr_expect(probe);
	/* three probes unanswered: failed */
	cr_expect_eq(resolve(ip, MS(301), &mac, &probe, &uc), MWP_NEIGH_UNREACH);
	cr_expect(!probe);
	cr_expect_eq(resolve(ip, MS(700), &mac, &probe, &uc), MWP_NEIGH_UNREACH,
		     "failed_ms not over");
	cr_expect_eq(t->st.failed, 1);
	/* failed_ms later it starts over */
	cr_expect_eq(resolve(ip, MS(802), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	cr_expect(probe && !uc);
	cr_expect_eq(t->st.probes, 4);
}

Test(neigh, an_answer_makes_it_reachable_and_time_makes_it_stale)
{
	uint8_t ip[16];
	struct rte_ether_addr mac, m2 = mac_of(2);
	bool probe, uc;

	v4(ip, 2);
	cr_assert_eq(resolve(ip, MS(1), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	mwp_neigh_learn(t, ip, &m2, true, true, MS(2));
	cr_assert_eq(resolve(ip, MS(3), &mac, &probe, &uc), MWP_NEIGH_OK);
	cr_expect(rte_is_same_ether_addr(&mac, &m2));
	cr_expect(!probe);
	/* reachable_ms after the answer: stale, still used, confirmed by a
	 * unicast probe to the MAC it has */
	cr_assert_eq(resolve(ip, MS(1003), &mac, &probe, &uc), MWP_NEIGH_OK);
	cr_expect(probe && uc);
	cr_expect(rte_is_same_ether_addr(&mac, &m2));
	/* an answer confirms it again */
	mwp_neigh_learn(t, ip, &m2, true, true, MS(1010));
	cr_assert_eq(resolve(ip, MS(1020), &mac, &probe, &uc), MWP_NEIGH_OK);
	cr_expect(!probe);
}

Test(neigh, a_stale_entry_that_stops_answering_fails)
{
	uint8_t ip[16];
	struct rte_ether_addr mac, m2 = mac_of(2);
	bool probe, uc;
	uint64_t now = MS(2000);

	v4(ip, 2);
	mwp_neigh_learn(t, ip, &m2, false, true, MS(1));	/* STALE */
	for (int i = 0; i < 3; i++, now += MS(100)) {
		cr_assert_eq(resolve(ip, now, &mac, &probe, &uc), MWP_NEIGH_OK);
		cr_expect(probe && uc);
	}
	cr_expect_eq(resolve(ip, now, &mac, &probe, &uc), MWP_NEIGH_UNREACH);
}

Test(neigh, unsolicited_news_never_evicts_and_a_reply_nobody_asked_for_is_ignored)
{
	uint8_t ip[16];
	struct rte_ether_addr mac, m = mac_of(9);
	bool probe, uc;

	/* the table full of addresses we resolve */
	for (uint8_t i = 0; i < 8; i++) {
		v4(ip, (uint8_t)(100 + i));
		cr_assert_eq(resolve(ip, MS(1), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	}
	/* a storm of news from spoofed senders */
	for (int i = 0; i < 1000; i++) {
		v4(ip, (uint8_t)i);
		ip[14] = (uint8_t)(i >> 8) + 1;
		mwp_neigh_learn(t, ip, &m, false, true, MS(2));
	}
	cr_expect_eq(t->st.ignored, 1000);
	cr_expect_eq(t->st.learned, 0);
	for (uint8_t i = 0; i < 8; i++) {
		v4(ip, (uint8_t)(100 + i));
		cr_expect_eq(resolve(ip, MS(3), &mac, &probe, &uc), MWP_NEIGH_WAIT,
			     "entry %u flushed", i);
	}
	/* an ARP reply to a question never asked (table full or not) */
	v4(ip, 77);
	mwp_neigh_learn(t, ip, &m, true, true, MS(4));
	cr_expect_eq(t->st.ignored, 1001);
}

Test(neigh, unsolicited_news_fills_a_free_slot_as_stale)
{
	uint8_t ip[16];
	struct rte_ether_addr mac, m = mac_of(5);
	bool probe, uc;

	v4(ip, 5);
	mwp_neigh_learn(t, ip, &m, false, true, MS(1));
	cr_expect_eq(t->st.learned, 1);
	cr_assert_eq(resolve(ip, MS(2), &mac, &probe, &uc), MWP_NEIGH_OK);
	cr_expect(rte_is_same_ether_addr(&mac, &m));
	cr_expect(probe && uc, "learned unsolicited: confirmed before it is trusted");
}

Test(neigh, a_new_mac_replaces_the_old_only_with_override)
{
	uint8_t ip[16];
	struct rte_ether_addr mac, a = mac_of(1), b = mac_of(2);
	bool probe, uc;

	v4(ip, 9);
	mwp_neigh_learn(t, ip, &a, false, true, MS(1));
	mwp_neigh_learn(t, ip, &b, false, false, MS(2));
	resolve(ip, MS(3), &mac, &probe, &uc);
	cr_expect(rte_is_same_ether_addr(&mac, &a), "an NA without O changed the MAC");
	mwp_neigh_learn(t, ip, &b, false, true, MS(4));
	resolve(ip, MS(5), &mac, &probe, &uc);
	cr_expect(rte_is_same_ether_addr(&mac, &b));
}

Test(neigh, a_new_address_evicts_an_old_unused_stale_one)
{
	uint8_t ip[16];
	struct rte_ether_addr mac, m = mac_of(3);
	bool probe, uc;

	for (uint8_t i = 0; i < 8; i++) {
		v4(ip, i);
		mwp_neigh_learn(t, ip, &m, false, true, MS(1));
	}
	v4(ip, 200);
	cr_expect_eq(resolve(ip, MS(100), &mac, &probe, &uc), MWP_NEIGH_UNREACH,
		     "nothing unused for gc_ms yet");
	cr_expect_eq(t->st.full, 1);
	cr_expect_eq(resolve(ip, MS(3000), &mac, &probe, &uc), MWP_NEIGH_WAIT);
	cr_expect_eq(t->st.evicted, 1);
}

static void
count_entry(const struct mwp_neigh_entry *e, uint64_t age_ms, void *arg)
{
	unsigned int *n = arg;

	cr_expect_eq(e->state, MWP_NEIGH_STALE);
	cr_expect_eq(age_ms, 0, "never confirmed");
	(*n)++;
}

Test(neigh, ipv4_mapped_and_ipv6_keys_are_distinct_and_walk_sees_all)
{
	uint8_t ip4[16], ip6[16] = { 0xfd, [15] = 2 };
	struct rte_ether_addr mac, a = mac_of(4), b = mac_of(6);
	unsigned int n = 0;
	bool probe, uc;

	v4(ip4, 2);
	memcpy(ip6 + 12, ip4 + 12, 4);	/* the same last four bytes */
	mwp_neigh_learn(t, ip4, &a, false, true, MS(1));
	mwp_neigh_learn(t, ip6, &b, false, true, MS(1));
	cr_expect_eq(t->st.learned, 2);
	cr_assert_eq(resolve(ip6, MS(2), &mac, &probe, &uc), MWP_NEIGH_OK);
	cr_expect(rte_is_same_ether_addr(&mac, &b));
	cr_expect_eq(mwp_neigh_walk(t, MS(2), count_entry, &n), 2);
	cr_expect_eq(n, 2);
	cr_expect_str_eq(mwp_neigh_state_name(MWP_NEIGH_REACHABLE), "reachable");
}
