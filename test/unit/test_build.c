/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's answers built from a flow's template (mwp_build_answer)
 * and the requester's requests built from theirs (mwp_build_tmpl) are the
 * frames the generic builder makes (mwp_build_deferred), byte for byte
 * and view for view, for every opcode, IPv4 and IPv6, with and without a
 * VLAN tag, over payload lengths that take every pad; and the template
 * paths refuse what they cannot build.
 */
#include <rte_ip.h>

#include "test_frames.h"

static struct tframe ta, tg;

/* Field by field (the padding of struct mwp_pkt is nobody's). */
static bool
same_view(const struct mwp_pkt *a, const struct mwp_pkt *b)
{
	return a->mask == b->mask && a->qpn == b->qpn && a->psn == b->psn &&
	       a->l3_off == b->l3_off && a->l4_off == b->l4_off &&
	       a->bth_off == b->bth_off && a->payload_off == b->payload_off &&
	       a->payload_len == b->payload_len && a->icrc_off == b->icrc_off &&
	       a->vlan_tci == b->vlan_tci && a->opcode == b->opcode &&
	       a->pad == b->pad && a->flags == b->flags && a->tos == b->tos;
}

/* ta and tg empty, their views filled with garbage. */
static void
fresh_frames(struct mwp_pkt *pa, struct mwp_pkt *pg)
{
	mwp_mbuf_wrap(&ta.m, ta.data, sizeof(ta.data), 0);
	mwp_mbuf_wrap(&tg.m, tg.data, sizeof(tg.data), 0);
	memset(pa, 0x5a, sizeof(*pa));
	memset(pg, 0x5a, sizeof(*pg));
}

/* ta and tg, built with their ICRCs left to do (views pa, pg): the
 * ICRCs made, the same bytes and the same view. */
static void
expect_same_frames(struct mwp_pkt *pa, struct mwp_pkt *pg, const char *what, uint32_t len,
		   int v6, int vlan)
{
	mwp_icrc_fill(&ta.m, pa);
	mwp_icrc_fill(&tg.m, pg);
	cr_assert_eq(ta.m.data_len, tg.m.data_len, "%s len %u", what, len);
	cr_assert(memcmp(ta.data, tg.data, tg.m.data_len) == 0,
		  "bytes differ: %s len %u v6 %d vlan %d", what, len, v6, vlan);
	cr_assert(same_view(pa, pg), "views differ: %s len %u v6 %d vlan %d", what, len, v6,
		  vlan);
}

/* A flow with values in every field the template carries. */
static struct mwp_flow
answer_flow(bool ipv6, bool vlan, unsigned int k)
{
	struct mwp_flow f = *test_flow(ipv6, vlan);

	f.tos = (uint8_t)(k * 36);		/* DSCP values, ECN bits clear */
	f.sport = (uint16_t)(49152 + k * 977);
	f.vlan_tci = (uint16_t)(k * 411);
	return f;
}

Test(build, answers_from_a_template_equal_the_generic_builder)
{
	const uint8_t ops[] = { ROCE_OP_RC_ACKNOWLEDGE, ROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
				ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
				ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
				ROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
				ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY };
	const uint32_t lens[] = { 0, 1, 2, 3, 4, 7, 8, 64, 1023, 1024, 4096 };
	static uint8_t payload[4096];
	unsigned int k = 0, built = 0;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	for (int v6 = 0; v6 < 2; v6++)
		for (int vlan = 0; vlan < 2; vlan++, k++) {
			const struct mwp_flow f = answer_flow(v6, vlan, k);
			struct mwp_flow_tmpl t;

			mwp_flow_tmpl_make(&t, &f);
			cr_assert(t.usable);
			for (size_t o = 0; o < sizeof(ops); o++)
				for (size_t l = 0; l < RTE_DIM(lens); l++) {
					const bool data = roce_opcode[ops[o]].mask & ROCE_M_PAYLOAD;
					const uint32_t len = data ? lens[l] : 0;
					const struct mwp_answer a = {
						.opcode = ops[o], .syndrome = (uint8_t)(0x1f + l),
						.dqpn = 0xabcdef + (uint32_t)l, .psn = 0xfffff0 + (uint32_t)o,
						.msn = 0x123456 + (uint32_t)l,
						.orig = 0x0102030405060708ull * (l + 1),
					};
					struct mwp_hdrs h;
					struct mwp_pkt pa, pg;

					if (!data && l != 0)
						continue;
					fresh_frames(&pa, &pg);
					cr_assert_eq(mwp_build_answer(&ta.m, &t, &a, payload, len, &pa), 1);
					mwp_answer_hdrs(&h, &a);
					cr_assert_eq(mwp_build_deferred(&tg.m, &f, &h, payload, len, &pg), 1);
					expect_same_frames(&pa, &pg, roce_opcode[ops[o]].name, len, v6,
							   vlan);
					built++;
				}
		}
	cr_expect_eq(built, 4 * (2 + 4 * RTE_DIM(lens)));
}

/* Every request opcode (RC, UC, UD; each extension header with values in
 * every field), from a template and from the generic builder. */
Test(build, requests_from_a_template_equal_the_generic_builder)
{
	const uint32_t lens[] = { 0, 1, 2, 3, 4, 7, 8, 64, 1023, 1024, 4096 };
	static uint8_t payload[4096];
	unsigned int k = 0, built = 0, ops = 0;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 5 + 3);
	for (unsigned int op = 0; op < 256; op++) {
		const uint32_t mask = roce_opcode[op].mask;

		if (mask == 0 || !(mask & ROCE_M_REQ))
			continue;
		ops++;
		for (int v6 = 0; v6 < 2; v6++)
			for (int vlan = 0; vlan < 2; vlan++, k++) {
				const struct mwp_flow f = answer_flow(v6, vlan, k % 7);
				struct mwp_flow_tmpl t;

				mwp_flow_tmpl_make(&t, &f);
				cr_assert(t.usable);
				for (size_t l = 0; l < RTE_DIM(lens); l++) {
					const bool data = mask & ROCE_M_PAYLOAD;
					const uint32_t len = data ? lens[l] : 0;
					const struct mwp_hdrs h = {
						.opcode = (uint8_t)op, .se = l & 1, .mig = l & 2,
						.ackreq = l & 4, .fecn = l == 3, .becn = l == 5,
						.pkey = l == 6 ? 0x8001 : 0,
						.dqpn = 0xabcdef + (uint32_t)l,
						.psn = 0xfffff0 + (uint32_t)l,
						.reth = { 0x1122334455667788ull + l, 0x9abc0000 + (uint32_t)l,
							  65536 + (uint32_t)l },
						.atmeth = { 0x0807060504030201ull, 0x4242 + (uint32_t)l,
							    0x1111222233334444ull, 0x5555666677778888ull },
						.imm = 0xfeedbeef, .ieth_rkey = 0x80000142 + (uint32_t)l,
						.deth = { 0x80010000 + (uint32_t)l, 0x000123 + (uint32_t)l },
					};
					struct mwp_pkt pa, pg;

					if (!data && l != 0)
						continue;
					fresh_frames(&pa, &pg);
					cr_assert_eq(mwp_build_tmpl(&ta.m, &t, &h, payload, len, &pa), 1,
						     "%s", roce_opcode[op].name);
					cr_assert_eq(mwp_build_deferred(&tg.m, &f, &h, payload, len, &pg), 1);
					expect_same_frames(&pa, &pg, roce_opcode[op].name, len, v6, vlan);
					built++;
				}
			}
	}
	cr_expect_eq(ops, 32, "request opcodes: %u", ops);
	cr_expect_gt(built, ops * 4);
}

Test(build, the_request_template_path_refuses_what_it_cannot_build)
{
	const struct mwp_flow f = answer_flow(false, false, 1);
	const struct mwp_hdrs read = { .opcode = ROCE_OP_RC_RDMA_READ_REQUEST };
	const struct mwp_hdrs none = { .opcode = 0x1f };	/* no such opcode */
	const struct mwp_hdrs send = { .opcode = ROCE_OP_RC_SEND_ONLY };
	struct mwp_flow_tmpl t;
	struct mwp_pkt p;
	uint8_t small[64];
	struct rte_mbuf m;

	mwp_flow_tmpl_make(&t, &f);
	mwp_mbuf_wrap(&ta.m, ta.data, sizeof(ta.data), 0);
	cr_expect_eq(mwp_build_tmpl(&ta.m, &t, &read, "x", 1, &p), -EINVAL, "payload on a READ");
	cr_expect_eq(mwp_build_tmpl(&ta.m, &t, &none, NULL, 0, &p), -EINVAL);
	cr_expect_eq(ta.m.data_len, 0);
	/* a 66-byte SEND ONLY with 8 bytes does not fit 64 */
	mwp_mbuf_wrap(&m, small, sizeof(small), 0);
	cr_expect_eq(mwp_build_tmpl(&m, &t, &send, "12345678", 8, &p), -ENOSPC);
	cr_expect_eq(m.data_len, 0);
	/* nor into an mbuf that holds a frame already */
	mwp_mbuf_wrap(&m, small, sizeof(small), 10);
	cr_expect_eq(mwp_build_tmpl(&m, &t, &send, NULL, 0, &p), -EINVAL);
}

Test(build, the_template_path_takes_only_answers_that_fit)
{
	const struct mwp_flow f = answer_flow(false, false, 1);
	const struct mwp_answer req = { .opcode = ROCE_OP_RC_RDMA_WRITE_ONLY };
	const struct mwp_answer ack = { .opcode = ROCE_OP_RC_ACKNOWLEDGE };
	struct mwp_flow_tmpl t;
	struct mwp_pkt p;
	uint8_t small[60];
	struct rte_mbuf m;

	mwp_flow_tmpl_make(&t, &f);
	mwp_mbuf_wrap(&ta.m, ta.data, sizeof(ta.data), 0);
	cr_expect_eq(mwp_build_answer(&ta.m, &t, &req, NULL, 0, &p), -EINVAL);
	cr_expect_eq(mwp_build_answer(&ta.m, &t, &ack, "x", 1, &p), -EINVAL);
	/* a 62-byte ACK does not fit 60 bytes, nor do the header blocks */
	mwp_mbuf_wrap(&m, small, sizeof(small), 0);
	cr_expect_eq(mwp_build_answer(&m, &t, &ack, NULL, 0, &p), -ENOSPC);
	cr_expect_eq(m.data_len, 0);
}

Test(build, a_flow_with_an_ipv6_udp_checksum_has_no_template)
{
	struct mwp_flow f = answer_flow(true, false, 2);
	struct mwp_flow_tmpl t;

	f.udp6_csum = true;
	mwp_flow_tmpl_make(&t, &f);
	cr_expect(!t.usable);
}

/* The IPv4 header checksum the builder sums in registers is the one
 * rte_ipv4_cksum() computes over the header as written, for every TOS and
 * TTL byte, addresses whose halves carry, and lengths up to a jumbo
 * frame's. */
Test(build, the_ipv4_checksum_is_the_headers_own)
{
	static uint8_t payload[9000];
	uint32_t x = 0x9e3779b9;
	unsigned int built = 0;

	for (unsigned int k = 0; k < 4096; k++) {
		struct mwp_flow f = *test_flow(false, k & 1);
		const struct mwp_hdrs h = { .opcode = ROCE_OP_RC_RDMA_WRITE_ONLY,
					    .dqpn = 0x12 + k, .psn = k,
					    .reth = { 0x1000, 0x4242, 0 } };
		struct rte_ipv4_hdr *ip;
		struct mwp_pkt p;
		uint32_t len;
		rte_be16_t sum;

		x = x * 1664525 + 1013904223;
		f.tos = (uint8_t)k;
		f.ttl = (uint8_t)(k >> 4);		/* 0 is the default, 64 */
		f.sip4 = k < 16 ? 0xffffffff : x;	/* all ones: every carry */
		f.dip4 = k < 16 ? 0xfeffffff : x * 7 + k;
		len = k < 16 ? 8192 : (x >> 8) % (sizeof(payload) - 64);
		mwp_mbuf_wrap(&tg.m, tg.data, sizeof(tg.data), 0);
		if (mwp_build(&tg.m, &f, &h, payload, len, &p) != 0)
			continue;
		ip = (struct rte_ipv4_hdr *)(tg.data + p.l3_off);
		sum = ip->hdr_checksum;
		ip->hdr_checksum = 0;
		cr_assert_eq(sum, rte_ipv4_cksum(ip), "tos %u ttl %u len %u: %#x against %#x",
			     f.tos, f.ttl, len, sum, rte_ipv4_cksum(ip));
		built++;
	}
	cr_expect_gt(built, 3000);
}
