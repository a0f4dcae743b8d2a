/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the wire layer: any byte string, as one segment and
 * split into two at a point chosen by the input, goes through mwp_parse
 * (and its fast path is held to the generic parser's answers),
 * every extension header accessor, the ICRC, and the burst entry points.
 * Buffers are exact-size heap copies so ASan sees any read past the frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mwpath.h"
#include "roce_parse_inline.h"

static volatile uint64_t sink;

static void
touch(const struct rte_mbuf *m, const struct mwp_pkt *p, enum mwp_drop why)
{
	uint64_t acc = why;

	if (why == MWP_DROP_NONE) {
		for (unsigned int eh = 0; eh < ROCE_EH__MAX; eh++) {
			const uint8_t *h = mwp_pkt_eh(m, p, eh);

			for (unsigned int i = 0; h != NULL && i < roce_eh_len[eh]; i++)
				acc += h[i];
		}
		/* payload and pad end where the ICRC starts, inside the frame */
		if ((uint32_t)p->payload_off + p->payload_len + p->pad != p->icrc_off ||
		    p->icrc_off + 4u > m->pkt_len)
			abort();
	}
	if (p->flags & MWP_PKT_BTH) {
		if (p->icrc_off + 4u > m->pkt_len)
			abort();
		acc += mwp_icrc_ok(m, p);
	}
	sink += acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf m, a, b, *pk[1];
	struct mwp_pkt p, q;
	enum mwp_drop why, why2;
	uint8_t *buf, *b1, *b2;
	uint16_t len, cut;

	if (size > UINT16_MAX)
		return 0;
	len = (uint16_t)size;
	buf = malloc(len ? len : 1);
	memcpy(buf, data, len);
	mwp_mbuf_wrap(&m, buf, len, len);
	why = mwp_parse(&m, &p);
	touch(&m, &p, why);
	/* the fast path for common frames is the generic parser's twin:
	 * it accepts only what that accepts, with the same view */
	{
		struct mwp_pkt f, g;

		memset(&f, 0x5a, sizeof(f));
		memset(&g, 0x5a, sizeof(g));
		if (mwp_parse_fast(&m, &f) &&
		    (mwp_parse_generic(&m, &g) != MWP_DROP_NONE || memcmp(&f, &g, sizeof(f)) != 0))
			abort();
	}

	/* Two segments, cut where the first byte says. */
	cut = len ? (uint16_t)(data[0] % (len + 1)) : 0;
	b1 = malloc(cut ? cut : 1);
	b2 = malloc(len - cut ? len - cut : 1);
	memcpy(b1, data, cut);
	memcpy(b2, data + cut, len - cut);
	mwp_mbuf_wrap(&a, b1, cut, cut);
	mwp_mbuf_wrap(&b, b2, len - cut, len - cut);
	a.next = &b;
	a.nb_segs = 2;
	a.pkt_len = len;
	why2 = mwp_parse(&a, &q);
	touch(&a, &q, why2);
	/* A split can only refuse what whole parsing took, never accept more. */
	if (why2 == MWP_DROP_NONE && why != MWP_DROP_NONE)
		abort();
	if (why2 == MWP_DROP_NONE && mwp_icrc_ok(&a, &q) != mwp_icrc_ok(&m, &p))
		abort();

	pk[0] = &m;
	mwp_parse_burst(pk, 1, &p, &why);
	mwp_icrc_verify_burst(pk, &p, &why, 1);

	free(b2);
	free(b1);
	free(buf);
	return 0;
}
