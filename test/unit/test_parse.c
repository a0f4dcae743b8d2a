/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parser: well-formed frames give the right view; each malformed frame
 * gives its own drop reason and never a read past the frame (exact-size heap
 * copies, checked by ASan in the sanitizer build).
 */
#include <rte_ip.h>
#include <rte_udp.h>

#include "test_frames.h"
#include "roce_parse_inline.h"

#define ETH 14
#define IP4 20
#define UDP 8

static struct tframe tf;

/* Parse an exact-size copy of data[0, len) after applying nothing. */
static enum mwp_drop
parse_copy(const uint8_t *data, uint16_t len, struct mwp_pkt *p)
{
	struct rte_mbuf m;
	enum mwp_drop e;

	heap_frame(&m, data, len);
	e = mwp_parse(&m, p);
	heap_free(&m);
	return e;
}

/* A valid IPv4 RC WRITE ONLY with 16 bytes of payload, to mutate. */
static uint8_t *
base_v4(uint16_t *len)
{
	struct rte_mbuf *m = build_frame(&tf, ROCE_OP_RC_RDMA_WRITE_ONLY, 16,
					 false, false, NULL);

	*len = m->data_len;
	return tf.data;
}

static void
expect_reason(const uint8_t *d, uint16_t len, enum mwp_drop want)
{
	struct mwp_pkt p;
	enum mwp_drop got = parse_copy(d, len, &p);

	cr_expect_eq(got, want, "got %s, want %s", mwp_drop_name(got),
		     mwp_drop_name(want));
}

Test(parse, ipv4_write_only_gives_every_field)
{
	struct mwp_pkt p;
	struct rte_mbuf m;
	const struct roce_reth *reth;
	uint16_t len;
	uint8_t *d = base_v4(&len);

	heap_frame(&m, d, len);
	cr_assert_eq(mwp_parse(&m, &p), MWP_DROP_NONE);
	cr_expect_eq(p.l3_off, ETH);
	cr_expect_eq(p.l4_off, ETH + IP4);
	cr_expect_eq(p.bth_off, ETH + IP4 + UDP);
	cr_expect_eq(p.opcode, ROCE_OP_RC_RDMA_WRITE_ONLY);
	cr_expect_eq(p.qpn, 0x123);
	cr_expect_eq(p.psn, 0x456);
	cr_expect_eq(p.payload_off, ETH + IP4 + UDP + 12 + 16);
	cr_expect_eq(p.payload_len, 16);
	cr_expect_eq(p.pad, 0);
	cr_expect_eq(p.icrc_off, len - 4);
	cr_expect(!(p.flags & (MWP_PKT_IPV6 | MWP_PKT_VLAN)));
	reth = mwp_pkt_eh(&m, &p, ROCE_EH_RETH);
	cr_assert_not_null(reth);
	cr_expect_eq(reth_va(reth), 0x1000);
	cr_expect_eq(reth_rkey(reth), 0xabcd01);
	cr_expect_eq(reth_dmalen(reth), 16);
	cr_expect_null(mwp_pkt_eh(&m, &p, ROCE_EH_AETH));
	cr_expect(bth_ackreq(mwp_pkt_bth(&m, &p)));
	cr_expect(mwp_icrc_ok(&m, &p));
	heap_free(&m);
}

Test(parse, ipv6_with_vlan_and_pad)
{
	struct mwp_pkt p, built;
	struct rte_mbuf *m = build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 5, true,
					 true, &built);

	cr_assert_eq(parse_copy(tf.data, m->data_len, &p), MWP_DROP_NONE);
	cr_expect_eq(p.l3_off, ETH + 4);
	cr_expect_eq(p.bth_off, ETH + 4 + 40 + UDP);
	cr_expect(p.flags & MWP_PKT_IPV6);
	cr_expect(p.flags & MWP_PKT_VLAN);
	cr_expect_eq(p.vlan_tci, 7);
	cr_expect_eq(p.pad, 3);
	cr_expect_eq(p.payload_len, 5);
	cr_expect_eq(memcmp(&p, &built, offsetof(struct mwp_pkt, tos)), 0,
		     "parse(build(x)) differs from build's view");
}

Test(parse, ethernet_padding_after_the_datagram_is_ignored)
{
	struct mwp_pkt p;
	uint16_t len;
	uint8_t *d = base_v4(&len);

	memset(d + len, 0, 8);
	cr_assert_eq(parse_copy(d, len + 8, &p), MWP_DROP_NONE);
	cr_expect_eq(p.icrc_off, len - 4);
}

Test(parse, runt_frame)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	expect_reason(d, 13, MWP_DROP_RUNT);
	expect_reason(d, 0, MWP_DROP_RUNT);
}

Test(parse, not_ip_arp_roce_v1_and_stacked_vlans)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[12] = 0x08, d[13] = 0x06;		/* ARP */
	expect_reason(d, len, MWP_DROP_NOT_IP);
	d[12] = 0x89, d[13] = 0x15;		/* RoCEv1 */
	expect_reason(d, len, MWP_DROP_NOT_IP);
	build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 0, false, true, NULL);
	tf.data[16] = 0x81, tf.data[17] = 0x00; /* inner tag: QinQ */
	expect_reason(tf.data, 60, MWP_DROP_NOT_IP);
	expect_reason(tf.data, 16, MWP_DROP_RUNT); /* tag cut short */
}

Test(parse, truncated_ip_header)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	expect_reason(d, ETH + IP4 - 1, MWP_DROP_IP_TRUNC);
	build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 0, true, false, NULL);
	expect_reason(tf.data, ETH + 39, MWP_DROP_IP_TRUNC);
}

Test(parse, ip_version_disagrees_with_ethertype)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH] = 0x65;
	expect_reason(d, len, MWP_DROP_IP_BAD_VERSION);
}

Test(parse, ipv4_options)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH] = 0x46;
	expect_reason(d, len, MWP_DROP_IPV4_OPTIONS);
}

Test(parse, ip_length_disagrees_with_frame)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	expect_reason(d, len - 1, MWP_DROP_IP_BAD_LEN);	/* cut in flight */
	d[ETH] = 0x44;					/* IHL 4 < 5 */
	expect_reason(d, len, MWP_DROP_IP_BAD_LEN);
	d = base_v4(&len);
	d[ETH + 2] = 0, d[ETH + 3] = 19;		/* total < header */
	expect_reason(d, len, MWP_DROP_IP_BAD_LEN);
	build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 0, true, false, NULL);
	tf.data[ETH + 5] += 1;				/* IPv6 payload +1 */
	expect_reason(tf.data, ETH + 40 + UDP + 16, MWP_DROP_IP_BAD_LEN);
}

Test(parse, ipv4_fragments)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH + 6] = 0x20;				/* MF */
	expect_reason(d, len, MWP_DROP_IP_FRAGMENT);
	d[ETH + 6] = 0x40, d[ETH + 7] = 0x01;		/* DF, offset 8 */
	expect_reason(d, len, MWP_DROP_IP_FRAGMENT);
}

Test(parse, not_udp)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH + 9] = 6;
	expect_reason(d, len, MWP_DROP_NOT_UDP);
	build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 0, true, false, NULL);
	tf.data[ETH + 6] = 0;				/* hop-by-hop ext */
	expect_reason(tf.data, ETH + 40 + UDP + 16, MWP_DROP_NOT_UDP);
}

Test(parse, udp_header_truncated)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH + 2] = 0, d[ETH + 3] = IP4 + 7;
	expect_reason(d, ETH + IP4 + 7, MWP_DROP_UDP_TRUNC);
}

Test(parse, udp_port_is_not_roce)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH + IP4 + 3] = 0xb6;			/* 4790 */
	expect_reason(d, len, MWP_DROP_NOT_ROCE_PORT);
}

Test(parse, udp_length_disagrees_with_ip)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH + IP4 + 5] -= 1;
	expect_reason(d, len, MWP_DROP_UDP_BAD_LEN);
	d[ETH + IP4 + 5] += 2;
	expect_reason(d, len, MWP_DROP_UDP_BAD_LEN);
}

Test(parse, bth_or_icrc_does_not_fit)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);
	uint16_t short_udp = UDP + 12 + 3;		/* no room for ICRC */

	d[ETH + 2] = 0, d[ETH + 3] = (uint8_t)(IP4 + short_udp);
	d[ETH + IP4 + 4] = 0, d[ETH + IP4 + 5] = (uint8_t)short_udp;
	expect_reason(d, ETH + IP4 + short_udp, MWP_DROP_BTH_TRUNC);
}

Test(parse, transport_version_not_zero)
{
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH + IP4 + UDP + 1] |= 0x01;
	expect_reason(d, len, MWP_DROP_BAD_TVER);
}

Test(parse, unknown_opcode_still_locates_the_icrc)
{
	struct mwp_pkt p;
	uint16_t len;
	uint8_t *d = base_v4(&len);

	d[ETH + IP4 + UDP] = 0x15;
	cr_expect_eq(parse_copy(d, len, &p), MWP_DROP_UNKNOWN_OPCODE);
	cr_expect(p.flags & MWP_PKT_BTH);
	cr_expect_eq(p.icrc_off, len - 4);
	cr_expect_eq(p.qpn, 0x123);
}

Test(parse, extension_headers_do_not_fit)
{
	/* A WRITE ONLY opcode in a frame with room only for BTH + ICRC. */
	struct rte_mbuf *m = build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 0, false,
					 false, NULL);

	tf.data[ETH + IP4 + UDP] = ROCE_OP_RC_RDMA_WRITE_ONLY;
	expect_reason(tf.data, m->data_len, MWP_DROP_HDR_TRUNC);
	tf.data[ETH + IP4 + UDP] = ROCE_OP_RC_COMPARE_SWAP;
	expect_reason(tf.data, m->data_len, MWP_DROP_HDR_TRUNC);
}

Test(parse, pad_larger_than_payload)
{
	struct mwp_pkt p;
	struct rte_mbuf *m = build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 0, false,
					 false, NULL);

	tf.data[ETH + IP4 + UDP + 1] |= 0x30;		/* pad 3, payload 0 */
	expect_reason(tf.data, m->data_len, MWP_DROP_BAD_PAD);
	m = build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 2, false, false, NULL);
	/* payload 2 + pad 2: raw 4, pad 3 is still within it */
	tf.data[ETH + IP4 + UDP + 1] |= 0x30;
	cr_expect_eq(parse_copy(tf.data, m->data_len, &p), MWP_DROP_NONE);
	cr_expect_eq(p.payload_len, 1);
}

Test(parse, headers_split_across_segments)
{
	struct rte_mbuf seg0, seg1;
	struct mwp_pkt p;
	uint16_t len;
	uint8_t *d = base_v4(&len);

	mwp_mbuf_wrap(&seg0, d, 40, 40);
	mwp_mbuf_wrap(&seg1, d + 40, len - 40, len - 40);
	seg0.next = &seg1;
	seg0.nb_segs = 2;
	seg0.pkt_len = len;
	cr_expect_eq(mwp_parse(&seg0, &p), MWP_DROP_SEG_SPLIT);
}

Test(parse, every_truncation_of_a_valid_frame_is_refused_without_overread)
{
	/* Each prefix of valid frames: parse must fail (ASan checks reads). */
	const uint8_t ops[] = { ROCE_OP_RC_RDMA_WRITE_ONLY, ROCE_OP_RC_FETCH_ADD,
				ROCE_OP_RC_ATOMIC_ACKNOWLEDGE, ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE };

	for (size_t o = 0; o < sizeof(ops); o++)
		for (int v6 = 0; v6 < 2; v6++) {
			uint32_t plen = roce_opcode[ops[o]].mask & ROCE_M_PAYLOAD ? 9 : 0;
			struct rte_mbuf *m = build_frame(&tf, ops[o], plen, v6, v6, NULL);
			struct mwp_pkt p;

			for (uint16_t l = 0; l < m->data_len; l++)
				cr_expect_neq(parse_copy(tf.data, l, &p), MWP_DROP_NONE,
					      "%s len %u", roce_opcode[ops[o]].name, l);
			cr_expect_eq(parse_copy(tf.data, m->data_len, &p), MWP_DROP_NONE);
		}
}

Test(parse, burst_counts_good_frames)
{
	static struct tframe a, b;
	struct rte_mbuf *pk[2];
	struct mwp_pkt p[2];
	enum mwp_drop why[2];

	pk[0] = build_frame(&a, ROCE_OP_RC_RDMA_READ_REQUEST, 0, false, false, NULL);
	pk[1] = build_frame(&b, ROCE_OP_RC_SEND_ONLY, 4, true, false, NULL);
	b.data[12] = 0x08, b.data[13] = 0x06;
	cr_expect_eq(mwp_parse_burst(pk, 2, p, why), 1);
	cr_expect_eq(why[0], MWP_DROP_NONE);
	cr_expect_eq(why[1], MWP_DROP_NOT_IP);
}

/* The fast path for the common frame and the generic parser agree: on
 * thousands of frames made by mutating one byte of a valid frame's
 * headers (or its lengths), the fast path either declines and leaves the
 * view alone, or accepts a frame the generic parser accepts and fills
 * every field as it does.  It must accept the unmutated untagged IPv4
 * frames. */
Test(parse, fast_path_agrees_with_the_generic_parser)
{
	const uint8_t ops[] = { ROCE_OP_RC_RDMA_WRITE_ONLY, ROCE_OP_RC_RDMA_WRITE_MIDDLE,
				ROCE_OP_RC_RDMA_READ_REQUEST, ROCE_OP_RC_FETCH_ADD,
				ROCE_OP_RC_SEND_ONLY_WITH_IMMEDIATE, ROCE_OP_RC_ACKNOWLEDGE,
				ROCE_OP_UC_RDMA_WRITE_ONLY, ROCE_OP_CNP };
	const uint8_t values[] = { 0x00, 0x01, 0x04, 0x06, 0x11, 0x12, 0x20, 0x3f, 0x45,
				   0x46, 0x7f, 0x80, 0x86, 0xb7, 0xdd, 0xff };
	unsigned int accepted = 0, tried = 0;
	srand(9);

	for (size_t o = 0; o < sizeof(ops); o++)
		for (int v6 = 0; v6 < 2; v6++)
			for (int vlan = 0; vlan < 2; vlan++) {
				uint32_t plen = roce_opcode[ops[o]].mask & ROCE_M_PAYLOAD ?
						(uint32_t)(o * 7) % 40 : 0;
				struct rte_mbuf *m = build_frame(&tf, ops[o], plen, v6, vlan, NULL);
				const uint16_t len = m->data_len;
				uint8_t orig[256];

				memcpy(orig, tf.data, len);
				for (int k = -3; k < 70 * (int)sizeof(values); k++) {
					struct mwp_pkt a, b, untouched;
					struct rte_mbuf f;
					bool fast;
					enum mwp_drop e;
					uint16_t l = len;

					memcpy(tf.data, orig, len);
					if (k == -3)
						l = (uint16_t)(len - 1 - rand() % 8);	/* short */
					else if (k == -2)
						l = (uint16_t)(len + 1 + rand() % 8);	/* padded */
					else if (k >= 0)
						tf.data[k / sizeof(values)] = values[k % sizeof(values)];
					mwp_mbuf_wrap(&f, tf.data, sizeof(tf.data), l);
					memset(&a, 0xa5, sizeof(a));
					memset(&b, 0xa5, sizeof(b));
					memset(&untouched, 0xa5, sizeof(untouched));
					fast = mwp_parse_fast(&f, &a);
					e = mwp_parse_generic(&f, &b);
					tried++;
					if (!fast) {
						cr_assert(memcmp(&a, &untouched, sizeof(a)) == 0,
							  "declined but wrote: %s k %d",
							  roce_opcode[ops[o]].name, k);
						cr_assert(k != -1 || v6 || vlan || e != MWP_DROP_NONE,
							  "declined a plain IPv4 %s",
							  roce_opcode[ops[o]].name);
						continue;
					}
					accepted++;
					cr_assert_eq(e, MWP_DROP_NONE, "fast accepted what generic drops "
						     "(%s): %s k %d", mwp_drop_name(e),
						     roce_opcode[ops[o]].name, k);
					cr_assert(memcmp(&a, &b, sizeof(a)) == 0,
						  "views differ: %s k %d", roce_opcode[ops[o]].name, k);
				}
			}
	cr_expect_gt(accepted, 1000, "the fast path took %u of %u", accepted, tried);
}
