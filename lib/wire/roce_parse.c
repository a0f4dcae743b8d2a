/* SPDX-License-Identifier: BSD-3-Clause */
/* The parser's entry points; the parser itself is in roce_parse_inline.h. */
#include <rte_prefetch.h>

#include "roce_parse_inline.h"

enum mwp_drop
mwp_parse(const struct rte_mbuf *m, struct mwp_pkt *p)
{
	return mwp_parse_inline(m, p);
}

uint16_t
mwp_parse_burst(struct rte_mbuf *const *pkts, uint16_t n, struct mwp_pkt *p,
		enum mwp_drop *why)
{
	uint16_t ok = 0;

	for (uint16_t i = 0; i < n; i++) {
		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		why[i] = mwp_parse_inline(pkts[i], &p[i]);
		ok += why[i] == MWP_DROP_NONE;
	}
	return ok;
}
