/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <isa-l/crc.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_prefetch.h>
#include <rte_udp.h>

#include "roce_crc_mb.h"
#include "roce_icrc_burst.h"

/* CRC state after the 8 x 0xff pseudo-LRH: crc32 of ff ff ff ff ff ff ff ff.
 * Linux rxe keeps the same state pre-inverted as 0xdebb20e3. */
#define ICRC_SEED_AFTER_LRH 0x2144df1cu

/* IP (at most 40) + UDP (8) + BTH (12). */
#define ICRC_MASKED_MAX (sizeof(struct rte_ipv6_hdr) + \
			 sizeof(struct rte_udp_hdr) + sizeof(struct roce_bth))

/* Up to this many bytes from the IP header to the ICRC, one masked copy and
 * one CRC call beat two calls: bench/bench_wire, 64-byte WRITE ONLY, 47 ns
 * -> 40 ns per verify on this project's machine; past it, hashing the
 * payload in place avoids the copy. */
#define ICRC_ONE_CALL_MAX 256

/* CRC over [off, end) of a possibly segmented mbuf, continuing from crc. */
static uint32_t
crc_mbuf_range(uint32_t crc, const struct rte_mbuf *m, uint32_t off,
	       uint32_t end)
{
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		end -= m->data_len;
		m = m->next;
	}
	while (m != NULL && off < end) {
		uint32_t seg_end = RTE_MIN(end, (uint32_t)m->data_len);

		crc = crc32_gzip_refl(crc,
			rte_pktmbuf_mtod_offset(m, unsigned char *, off),
			seg_end - off);
		if (end <= m->data_len)
			break;
		end -= m->data_len;
		off = 0;
		m = m->next;
	}
	return crc;
}

/* Mask the fields the ICRC does not cover (rocev2-wire.md) in a copy of
 * IP..BTH that starts at hdr. */
static inline void
mask_hdr(uint8_t *hdr, const struct mwp_pkt *p)
{
	const uint32_t udp = p->l4_off - p->l3_off;
	const uint32_t bth = p->bth_off - p->l3_off;

	if (p->flags & MWP_PKT_IPV6) {
		hdr[0] |= 0x0f;			/* traffic class, high nibble */
		hdr[1] = 0xff;			/* traffic class low, flow label */
		hdr[2] = 0xff;
		hdr[3] = 0xff;
		hdr[7] = 0xff;			/* hop limit */
	} else {
		hdr[1] = 0xff;			/* TOS: DSCP and ECN */
		hdr[8] = 0xff;			/* TTL */
		hdr[10] = 0xff;			/* header checksum */
		hdr[11] = 0xff;
	}
	hdr[udp + 6] = 0xff;			/* UDP checksum */
	hdr[udp + 7] = 0xff;
	hdr[bth + 4] = 0xff;			/* FECN, BECN, reserved */
}

uint32_t
mwp_icrc_compute(const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	uint8_t hdr[ICRC_ONE_CALL_MAX];
	const uint32_t hlen = p->bth_off + sizeof(struct roce_bth) - p->l3_off;
	const uint32_t all = p->icrc_off - p->l3_off;
	const bool one_call = all <= sizeof(hdr) &&
			      p->icrc_off <= rte_pktmbuf_data_len(m);
	uint32_t crc;

	RTE_BUILD_BUG_ON(ICRC_MASKED_MAX > ICRC_ONE_CALL_MAX);
	/* The parser guarantees IP..BTH sit in the first segment. */
	memcpy(hdr, rte_pktmbuf_mtod_offset(m, const uint8_t *, p->l3_off),
	       one_call ? all : hlen);
	mask_hdr(hdr, p);

	if (one_call)
		return crc32_gzip_refl(ICRC_SEED_AFTER_LRH, hdr, all);
	crc = crc32_gzip_refl(ICRC_SEED_AFTER_LRH, hdr, hlen);
	return crc_mbuf_range(crc, m, p->bth_off + sizeof(struct roce_bth),
			      p->icrc_off);
}

uint32_t
mwp_icrc_read(const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	uint32_t v;
	const void *t = rte_pktmbuf_read(m, p->icrc_off, sizeof(v), &v);

	if (t != &v)
		memcpy(&v, t, sizeof(v));
	return rte_le_to_cpu_32(v);
}

/* The masks of the multi-buffer path (roce_icrc_burst.h), for each IP
 * version and front padding, made once at load. */
struct mwp_crc_mask mwp_icrc_masks[2][16];	/* [IPv6][pad] */

static void
mask_set(struct mwp_crc_mask *mk, uint32_t at, uint8_t and_, uint8_t or_)
{
	if (at < sizeof(mk->and_)) {
		mk->and_[at / 16][at % 16] = and_;
		mk->or_[at / 16][at % 16] = or_;
	}
}

static void
make_masks(void)
{
	uint8_t ref[ICRC_MASKED_MAX];

	for (int v6 = 0; v6 < 2; v6++) {
		struct mwp_pkt p = {
			.flags = v6 ? MWP_PKT_IPV6 : 0, .l3_off = 0,
			.l4_off = v6 ? 40 : 20, .bth_off = v6 ? 48 : 28,
		};

		/* which bytes mask_hdr forces, and to what: run it on zeros */
		memset(ref, 0, sizeof(ref));
		mask_hdr(ref, &p);
		for (uint32_t pad = 0; pad < 16; pad++) {
			struct mwp_crc_mask *mk = &mwp_icrc_masks[v6][pad];

			memset(mk->and_, 0xff, sizeof(mk->and_));
			memset(mk->or_, 0, sizeof(mk->or_));
			for (uint32_t b = 0; b < pad; b++)
				mask_set(mk, b, 0, 0);
			for (uint32_t b = pad; b < pad + 4; b++)
				mask_set(mk, b, 0, 0xff);
			for (uint32_t b = 0; b < sizeof(ref); b++)
				if (ref[b] != 0)
					mask_set(mk, pad + 4 + b, ref[b] == 0xff ? 0 : 0xff, ref[b]);
			mk->nblocks = 0;
			for (uint32_t j = 0; j < MWP_CRC_MB_MASKED; j++)
				for (uint32_t b = 0; b < 16; b++)
					if (mk->and_[j][b] != 0xff || mk->or_[j][b] != 0)
						mk->nblocks = (uint8_t)(j + 1);
		}
	}
}

_Static_assert(MWP_PKT_IPV6 == 1, "mwp_icrc_masks is indexed by the IPv6 flag");
_Static_assert(16 * MWP_CRC_MB_MASKED >= 15 + 4 + ICRC_MASKED_MAX,
	       "the masked blocks cover IP, UDP and BTH at any padding");

/* Made once, when the library loads (CPUID needs no EAL), so that lcores
 * never race to make them. */
bool mwp_icrc_mb_ok;

RTE_INIT(icrc_mb_init)
{
	make_masks();
	mwp_icrc_mb_ok = mwp_crc32_mb_available();
}

static inline uint32_t
load_le32(const uint8_t *t)
{
	uint32_t v;

	memcpy(&v, t, sizeof(v));
	return rte_le_to_cpu_32(v);
}

uint16_t
mwp_icrc_set_check(struct mwp_icrc_set *s, enum mwp_drop *why)
{
	uint32_t crc[MWP_ICRC_SET_MAX];
	uint16_t bad = 0;

	if (s->n == 0)
		return 0;
	mwp_crc32_mb(s->lane, crc, s->n);
	for (uint16_t j = 0; j < s->n; j++)
		if (unlikely(~crc[j] != load_le32(mwp_icrc_set_trailer(s, j)))) {
			why[s->idx[j]] = MWP_DROP_BAD_ICRC;
			bad++;
		}
	s->n = 0;
	return bad;
}

uint16_t
mwp_icrc_verify_burst(struct rte_mbuf *const *pkts, const struct mwp_pkt *p,
		      enum mwp_drop *why, uint16_t n)
{
	struct mwp_icrc_set set;
	uint16_t bad = 0;

	mwp_icrc_set_init(&set);
	for (uint16_t i = 0; i < n; i++) {
		if (why[i] != MWP_DROP_NONE)
			continue;
		if (set.n == MWP_ICRC_SET_MAX)	/* only with the CPU's help */
			bad += mwp_icrc_set_check(&set, why);
		if (!mwp_icrc_set_add(&set, pkts[i], &p[i], i) && !mwp_icrc_ok(pkts[i], &p[i])) {
			why[i] = MWP_DROP_BAD_ICRC;
			bad++;
		}
	}
	return bad + mwp_icrc_set_check(&set, why);
}

void
mwp_icrc_fill(struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const uint32_t v = rte_cpu_to_le_32(mwp_icrc_compute(m, p));
	const uint8_t *src = (const uint8_t *)&v;
	uint32_t off = p->icrc_off;
	unsigned int done = 0;

	/* The trailer may straddle a segment boundary in a chained mbuf. */
	for (struct rte_mbuf *s = m; s != NULL && done < sizeof(v); s = s->next) {
		while (off < s->data_len && done < sizeof(v))
			*rte_pktmbuf_mtod_offset(s, uint8_t *, off++) = src[done++];
		off -= s->data_len;
	}
}

void
mwp_icrc_fill_burst(struct rte_mbuf *const *m, const struct mwp_pkt *p, uint16_t n)
{
	struct mwp_icrc_set set;
	uint32_t crc[MWP_ICRC_SET_MAX];

	mwp_icrc_set_init(&set);
	for (uint16_t base = 0; base < n; base += MWP_ICRC_SET_MAX) {
		const uint16_t end = RTE_MIN(n, (uint16_t)(base + MWP_ICRC_SET_MAX));

		for (uint16_t i = base; i < end; i++)
			if (!mwp_icrc_set_add(&set, m[i], &p[i], i))
				mwp_icrc_fill(m[i], &p[i]);
		if (set.n != 0)
			mwp_crc32_mb(set.lane, crc, set.n);
		for (uint16_t j = 0; j < set.n; j++) {
			const uint32_t v = rte_cpu_to_le_32(~crc[j]);

			memcpy(mwp_icrc_set_trailer(&set, j), &v, sizeof(v));
		}
		set.n = 0;
	}
}
