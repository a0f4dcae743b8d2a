/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_FRAMES_H
#define MWP_TEST_FRAMES_H

/* Frames for unit tests without an EAL: an rte_mbuf header wrapped around a
 * caller buffer (as mwpath-inspect does), and exact-size heap copies so that
 * AddressSanitizer catches any read past a frame's end. */

#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <criterion/criterion.h>

#include "mwpath.h"

/* A frame being built: mbuf header + storage. */
struct tframe {
	struct rte_mbuf m;
	uint8_t data[9216];
};

static inline const struct mwp_flow *
test_flow(bool ipv6, bool vlan)
{
	static struct mwp_flow f;

	memset(&f, 0, sizeof(f));
	rte_ether_unformat_addr("02:00:00:00:00:02", &f.smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &f.dmac);
	f.ipv6 = ipv6;
	f.vlan = vlan;
	f.vlan_tci = 7;
	inet_pton(AF_INET, "192.0.2.2", &f.sip4);
	inet_pton(AF_INET, "192.0.2.1", &f.dip4);
	inet_pton(AF_INET6, "2001:db8::2", f.sip6);
	inet_pton(AF_INET6, "2001:db8::1", f.dip6);
	f.sport = 49152;
	return &f;
}

/* Build opcode with len payload bytes (i & 0xff) into t; returns its mbuf. */
static inline struct rte_mbuf *
build_frame(struct tframe *t, uint8_t opcode, uint32_t len, bool ipv6,
	    bool vlan, struct mwp_pkt *p)
{
	static uint8_t payload[9000];
	struct mwp_hdrs h = {
		.opcode = opcode, .dqpn = 0x000123, .psn = 0x000456,
		.ackreq = true,
		.reth = { .va = 0x1000, .rkey = 0xabcd01, .dmalen = len },
	};

	for (uint32_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	mwp_mbuf_wrap(&t->m, t->data, sizeof(t->data), 0);
	cr_assert_eq(mwp_build(&t->m, test_flow(ipv6, vlan), &h, payload, len, p), 0);
	return &t->m;
}

/* An exact-size heap copy of the first len bytes of a frame. */
static inline struct rte_mbuf *
heap_frame(struct rte_mbuf *m, const void *src, uint16_t len)
{
	void *buf = malloc(len ? len : 1);

	cr_assert_not_null(buf);
	memcpy(buf, src, len);
	return mwp_mbuf_wrap(m, buf, len, len);
}

static inline void
heap_free(struct rte_mbuf *m)
{
	free(m->buf_addr);
}

#endif
