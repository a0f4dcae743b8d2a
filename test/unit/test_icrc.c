/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICRC: mwp_icrc_compute (ISA-L, in place, segment by segment) against an
 * independent reference (zlib crc32 over one masked copy of the whole
 * region, as rocev2-wire.md states it), on many random frames, whole and
 * split into segments; masked fields must not matter, every other byte
 * must.  That the rule itself matches real NICs is shown on the captures
 * by test/py/test_captures.py.
 */
#include <zlib.h>

#include "roce_crc_mb.h"
#include "test_frames.h"

static struct tframe tf;

/* zlib reference: 8 x 0xff, then IP..ICRC with the variant fields masked. */
static uint32_t
ref_icrc(const uint8_t *frame, const struct mwp_pkt *p)
{
	uint8_t buf[9216 + 8];
	uint32_t n = p->icrc_off - p->l3_off;
	uint32_t udp = p->l4_off - p->l3_off;

	memset(buf, 0xff, 8);
	memcpy(buf + 8, frame + p->l3_off, n);
	if (p->flags & MWP_PKT_IPV6) {
		buf[8] |= 0x0f;
		memset(buf + 9, 0xff, 3);
		buf[8 + 7] = 0xff;
	} else {
		buf[8 + 1] = 0xff;
		buf[8 + 8] = 0xff;
		buf[8 + 10] = buf[8 + 11] = 0xff;
	}
	buf[8 + udp + 6] = buf[8 + udp + 7] = 0xff;
	buf[8 + udp + 8 + 4] = 0xff;
	return (uint32_t)crc32(0, buf, n + 8);
}

static const uint8_t ops[] = {
	ROCE_OP_RC_SEND_ONLY, ROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	ROCE_OP_RC_RDMA_READ_REQUEST, ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
	ROCE_OP_RC_ATOMIC_ACKNOWLEDGE, ROCE_OP_RC_COMPARE_SWAP,
	ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE, ROCE_OP_UC_RDMA_WRITE_FIRST,
	ROCE_OP_UD_SEND_ONLY, ROCE_OP_CNP,
};

static struct rte_mbuf *
random_frame(unsigned int i, struct mwp_pkt *p)
{
	uint8_t op = ops[i % sizeof(ops)];
	uint32_t len = roce_opcode[op].mask & ROCE_M_PAYLOAD ?
		       (uint32_t)(rand() % 4097) : 0;
	struct rte_mbuf *m = build_frame(&tf, op, len, i & 1, i & 2, p);

	/* random payload and variant fields */
	for (uint32_t b = p->payload_off; b < p->payload_off + len; b++)
		tf.data[b] = (uint8_t)rand();
	mwp_icrc_fill(m, p);
	return m;
}

Test(icrc, matches_independent_reference_on_random_frames)
{
	srand(1);
	for (unsigned int i = 0; i < 400; i++) {
		struct mwp_pkt p;
		struct rte_mbuf *m = random_frame(i, &p);

		cr_assert_eq(mwp_icrc_compute(m, &p), ref_icrc(tf.data, &p),
			     "frame %u (%s)", i, roce_opcode[p.opcode].name);
		cr_assert(mwp_icrc_ok(m, &p));
	}
}

Test(icrc, masked_fields_do_not_change_it)
{
	struct mwp_pkt p;
	struct rte_mbuf *m = build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 33, false,
					 false, &p);
	uint32_t c = mwp_icrc_compute(m, &p);
	const unsigned int v4_masked[] = { 1, 8, 10, 11 };	/* TOS TTL csum */

	for (size_t i = 0; i < RTE_DIM(v4_masked); i++) {
		tf.data[p.l3_off + v4_masked[i]] ^= 0x5a;
		cr_expect_eq(mwp_icrc_compute(m, &p), c, "IPv4 byte %u", v4_masked[i]);
	}
	tf.data[p.l4_off + 6] ^= 0x12;				/* UDP csum */
	tf.data[p.bth_off + 4] ^= 0xc0;				/* FECN BECN */
	cr_expect_eq(mwp_icrc_compute(m, &p), c);

	m = build_frame(&tf, ROCE_OP_RC_SEND_ONLY, 33, true, false, &p);
	c = mwp_icrc_compute(m, &p);
	tf.data[p.l3_off] ^= 0x0f;				/* TC high */
	tf.data[p.l3_off + 1] ^= 0xff;				/* TC low, FL */
	tf.data[p.l3_off + 3] ^= 0x77;				/* flow label */
	tf.data[p.l3_off + 7] ^= 0x20;				/* hop limit */
	cr_expect_eq(mwp_icrc_compute(m, &p), c);
}

Test(icrc, every_unmasked_byte_changes_it)
{
	struct mwp_pkt p;
	struct rte_mbuf *m = build_frame(&tf, ROCE_OP_RC_RDMA_WRITE_ONLY, 7, true,
					 true, &p);
	uint32_t c = mwp_icrc_compute(m, &p);

	for (uint32_t b = p.l3_off; b < p.icrc_off; b++) {
		uint32_t r = b - p.l3_off, u = b - p.l4_off;
		bool masked = r == 0 || r == 1 || r == 2 || r == 3 || r == 7 ||
			      (b >= p.l4_off && (u == 6 || u == 7)) ||
			      b == (uint32_t)p.bth_off + 4u;

		if (masked)
			continue;
		tf.data[b] ^= 0x01;
		cr_expect_neq(mwp_icrc_compute(m, &p), c, "byte %u", b);
		tf.data[b] ^= 0x01;
	}
	/* The version nibble of IPv6 byte 0 is covered. */
	tf.data[p.l3_off] ^= 0x10;
	cr_expect_neq(mwp_icrc_compute(m, &p), c);
}

Test(icrc, segmented_frames_give_the_same_crc_and_fill_straddles)
{
	static uint8_t s1[9216], s2[9216];
	srand(2);
	for (unsigned int i = 0; i < 200; i++) {
		struct mwp_pkt p;
		struct rte_mbuf *m = random_frame(i, &p);
		struct rte_mbuf a, b, c;
		uint32_t total = m->data_len, want = mwp_icrc_compute(m, &p);
		uint32_t cut1 = p.payload_off + (uint32_t)rand() % (total - p.payload_off);
		uint32_t cut2 = cut1 + (uint32_t)rand() % (total - cut1 + 1);

		memcpy(s1, tf.data + cut1, total - cut1);
		memcpy(s2, tf.data + cut2, total - cut2);
		mwp_mbuf_wrap(&a, tf.data, cut1, cut1);
		mwp_mbuf_wrap(&b, s1, cut2 - cut1, cut2 - cut1);
		mwp_mbuf_wrap(&c, s2, total - cut2, total - cut2);
		a.next = &b;
		b.next = &c;
		a.nb_segs = 3;
		a.pkt_len = total;
		cr_assert_eq(mwp_icrc_compute(&a, &p), want, "frame %u cuts %u %u",
			     i, cut1, cut2);
		/* Clobber the trailer in whichever segments hold it. */
		for (uint32_t k = p.icrc_off; k < p.icrc_off + 4u; k++) {
			if (k < cut1)
				tf.data[k] ^= 0xff;
			else if (k < cut2)
				s1[k - cut1] ^= 0xff;
			else
				s2[k - cut2] ^= 0xff;
		}
		cr_assert(!mwp_icrc_ok(&a, &p), "frame %u clobbered", i);
		mwp_icrc_fill(&a, &p);
		cr_assert(mwp_icrc_ok(&a, &p), "frame %u after fill", i);
	}
}

Test(icrc, burst_verify_marks_only_bad_frames)
{
	static struct tframe f[4];
	struct rte_mbuf *pk[4];
	struct mwp_pkt p[4];
	enum mwp_drop why[4];

	for (int i = 0; i < 4; i++)
		pk[i] = build_frame(&f[i], ROCE_OP_RC_SEND_ONLY, 10 + i, i & 1,
				    false, &p[i]);
	f[1].data[p[1].payload_off] ^= 1;		/* corrupt payload */
	f[3].data[p[3].icrc_off] ^= 1;			/* corrupt trailer */
	for (int i = 0; i < 4; i++)
		why[i] = MWP_DROP_NONE;
	why[2] = MWP_DROP_NOT_IP;			/* skipped */
	cr_expect_eq(mwp_icrc_verify_burst(pk, p, why, 4), 2);
	cr_expect_eq(why[0], MWP_DROP_NONE);
	cr_expect_eq(why[1], MWP_DROP_BAD_ICRC);
	cr_expect_eq(why[2], MWP_DROP_NOT_IP);
	cr_expect_eq(why[3], MWP_DROP_BAD_ICRC);
}

/* The multi-buffer CRC equals zlib's on every length it takes, in groups
 * of four (lock step, then the longer ones alone) and alone. */
Test(icrc, multi_buffer_crc_matches_zlib)
{
	static uint8_t data[9][16 * 80];
	struct mwp_crc_lane lane[9];
	uint16_t nb[9];
	uint32_t crc[9];

	if (!mwp_crc32_mb_available())
		cr_skip_test("no carry-less multiply on this CPU (PCLMULQDQ, PMULL)");
	srand(5);
	for (int round = 0; round < 200; round++) {
		unsigned int n = 1 + (unsigned int)round % 9;

		for (unsigned int i = 0; i < n; i++) {
			nb[i] = (uint16_t)(1 + rand() % (round < 100 ? 18 : 80));
			for (int k = 0; k < 16 * nb[i]; k++)
				data[i][k] = (uint8_t)rand();
			lane[i].base = data[i];
			lane[i].mask = NULL;
			lane[i].nblocks = nb[i];
		}
		mwp_crc32_mb(lane, crc, n);
		for (unsigned int i = 0; i < n; i++) {
			/* zlib starts from ~0 and inverts: fold ~0 into the
			 * first four bytes and invert back */
			uint8_t tmp[16 * 80];
			uint32_t want;

			memcpy(tmp, data[i], 16u * nb[i]);
			for (int k = 0; k < 4; k++)
				tmp[k] ^= 0xff;
			want = (uint32_t)crc32(0, tmp, 16u * nb[i]);
			cr_assert_eq(~crc[i], want, "round %d buffer %u (%u blocks)", round, i,
				     nb[i]);
		}
	}
}

/* A burst of frames of every size the multi-buffer path takes and some it
 * does not, IPv4 and IPv6: each verdict is the single-frame one. */
Test(icrc, burst_verify_agrees_with_single_frames)
{
	static struct tframe f[32];
	struct rte_mbuf *pk[32];
	struct mwp_pkt p[32];
	enum mwp_drop why[32];

	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < 32; i++) {
			pk[i] = build_frame(&f[i], ROCE_OP_RC_RDMA_WRITE_ONLY,
					    (uint32_t)(round * 37 + i * 13) % 400, (i + round) & 1,
					    i % 5 == 0, &p[i]);
			why[i] = MWP_DROP_NONE;
			if ((i + round) % 7 == 3)
				f[i].data[p[i].icrc_off - 1 - i % 3] ^= 0x10;
		}
		mwp_icrc_verify_burst(pk, p, why, 32);
		for (int i = 0; i < 32; i++)
			cr_assert_eq(why[i] == MWP_DROP_BAD_ICRC, !mwp_icrc_ok(pk[i], &p[i]),
				     "round %d frame %d", round, i);
	}
}

/* Bursts of frames of one shape (what the multi-buffer CRC takes eight at
 * a time with one mask for all): a damaged unmasked byte is caught in
 * whichever lane it is, a changed masked field (TTL, hop limit, TOS,
 * traffic class) is not, at every length and both IP versions. */
Test(icrc, bursts_of_one_shape)
{
	static struct tframe f[32];
	const uint32_t lens[] = { 0, 1, 4, 13, 16, 31, 64, 100, 255, 256, 1000, 4096 };
	struct rte_mbuf *pk[32];
	struct mwp_pkt p[32];
	enum mwp_drop why[32];

	for (size_t l = 0; l < RTE_DIM(lens); l++) {
		for (int v6 = 0; v6 < 2; v6++) {
			for (int i = 0; i < 32; i++) {
				uint8_t *d;

				pk[i] = build_frame(&f[i], ROCE_OP_RC_RDMA_WRITE_ONLY, lens[l], v6,
						    false, &p[i]);
				/* headroom before the frame, as an rx mbuf has, so
				 * that every frame can be read in place */
				memmove(f[i].data + 64, f[i].data, pk[i]->data_len);
				pk[i]->data_off = 64;
				d = rte_pktmbuf_mtod(pk[i], uint8_t *);
				why[i] = MWP_DROP_NONE;
				if (i % 8 == 3)		/* an unmasked byte, lane by lane:
							 * addresses, port, P_Key, PSN */
					d[p[i].l3_off + (v6 ? 8 : 12) + (uint32_t)i] ^= 0x04;
				if (i % 8 == 5) {	/* masked: TTL / hop limit, TOS */
					d[p[i].l3_off + (v6 ? 7 : 8)] ^= 0x33;
					d[p[i].l3_off + 1] ^= 0x0c;
				}
			}
			mwp_icrc_verify_burst(pk, p, why, 32);
			for (int i = 0; i < 32; i++) {
				cr_assert_eq(why[i] == MWP_DROP_BAD_ICRC, i % 8 == 3,
					     "len %u %s frame %d", lens[l], v6 ? "IPv6" : "IPv4", i);
				cr_assert_eq(why[i] == MWP_DROP_BAD_ICRC, !mwp_icrc_ok(pk[i], &p[i]));
			}
		}
	}
}
