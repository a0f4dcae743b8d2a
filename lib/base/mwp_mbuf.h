/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_MBUF_H
#define MWP_MBUF_H

/*
 * Freeing a burst of received frames (private to libmwpath).
 */

#include <rte_mbuf.h>

/* Mbufs one bulk put gives back at most (a larger set goes in pieces). */
#define MWP_MBUF_PUT_MAX 64

/* An mbuf that can go straight back to mp: in one segment (next is then
 * NULL, rte_mbuf's contract, and its second cache line stays untouched),
 * direct, unshared, and from mp.  The pool is tested last: tested first,
 * GCC peeled it out of mwp_mbuf_free_burst's first loop, which came out
 * longer. */
static inline bool
mwp_mbuf_plain(const struct rte_mbuf *m, const struct rte_mempool *mp)
{
	return m->nb_segs == 1 && RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 &&
	       m->pool == mp;
}

/*
 * Free n mbufs.  Those plain for the pool of the first (mwp_mbuf_plain)
 * go back to that pool with one bulk put (what a PMD's fast-free does);
 * any other goes through rte_pktmbuf_free.  Cheaper
 * than rte_pktmbuf_free_bulk for the usual rx burst, which is all of the
 * first kind: that one is put back from pkts itself, without a copy.
 */
static inline void
mwp_mbuf_free_burst(struct rte_mbuf *const *pkts, uint16_t n)
{
	struct rte_mbuf *const *const last = pkts + n, *const *at;
	void *put[MWP_MBUF_PUT_MAX];
	struct rte_mempool *mp;
	unsigned int k = 0;

	if (n == 0)
		return;
	mp = pkts[0]->pool;
	for (at = pkts; at != last && mwp_mbuf_plain(*at, mp); at++)
		;
	if (likely(at == last)) {
		rte_mempool_put_bulk(mp, (void * const *)pkts, n);
		return;
	}
	for (uint16_t base = 0; base < n; base += MWP_MBUF_PUT_MAX) {
		const uint16_t end = RTE_MIN(n, (uint16_t)(base + MWP_MBUF_PUT_MAX));

		for (uint16_t i = base; i < end; i++) {
			struct rte_mbuf *m = pkts[i];

			if (mwp_mbuf_plain(m, mp))
				put[k++] = m;
			else
				rte_pktmbuf_free(m);
		}
		rte_mempool_put_bulk(mp, put, k);
		k = 0;
	}
}

#endif /* MWP_MBUF_H */
