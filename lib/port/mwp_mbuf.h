/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_MBUF_H
#define MWP_MBUF_H

/*
 * Freeing a burst of received frames (private to libmwpath).
 */

#include <rte_mbuf.h>

#include "roce_resp.h"

/*
 * Free n mbufs.  Those that are direct, unshared, in one segment and from
 * the pool of the first go back to that pool with one bulk put (what a
 * PMD's fast-free does); any other goes through rte_pktmbuf_free.  Cheaper
 * than rte_pktmbuf_free_bulk for the usual rx burst, which is all of the
 * first kind.
 */
static inline void
mwp_mbuf_free_burst(struct rte_mbuf *const *pkts, uint16_t n)
{
	void *put[MWP_BURST_MAX];
	struct rte_mempool *mp;
	unsigned int k = 0;

	if (n == 0)
		return;
	mp = pkts[0]->pool;
	for (uint16_t base = 0; base < n; base += MWP_BURST_MAX) {
		const uint16_t end = RTE_MIN(n, (uint16_t)(base + MWP_BURST_MAX));

		for (uint16_t i = base; i < end; i++) {
			struct rte_mbuf *m = pkts[i];

			/* one segment: next is NULL (rte_mbuf's contract), and
			 * the mbuf's second cache line stays untouched */
			if (likely(m->pool == mp && m->nb_segs == 1 &&
				   RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1))
				put[k++] = m;
			else
				rte_pktmbuf_free(m);
		}
		rte_mempool_put_bulk(mp, put, k);
		k = 0;
	}
}

#endif /* MWP_MBUF_H */
