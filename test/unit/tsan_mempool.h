/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_TSAN_MEMPOOL_H
#define MWP_TEST_TSAN_MEMPOOL_H

/*
 * An mbuf pool whose hand-overs ThreadSanitizer can see.
 *
 * The mempool's ring driver lives in an uninstrumented library: TSan sees
 * an mbuf freed by one thread and taken by another as two unordered
 * accesses to the same bytes.  In a TSan build, test_pktmbuf_pool()
 * creates the pool with "mwp_tsan_ring" ops: the ring driver's own ops,
 * with a release before every put and an acquire after every get, which
 * is the ordering the ring gives.  In other builds it is
 * rte_pktmbuf_pool_create().
 */

#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "mwp_tsan.h"

#ifdef MWP_TSAN
static int tsan_ring_ops = -1;		/* the ring driver's index */

static const struct rte_mempool_ops *
tsan_base(void)
{
	return &rte_mempool_ops_table.ops[tsan_ring_ops];
}

static int
tsan_alloc(struct rte_mempool *mp)
{
	return tsan_base()->alloc(mp);
}

static void
tsan_free(struct rte_mempool *mp)
{
	tsan_base()->free(mp);
}

static int
tsan_enqueue(struct rte_mempool *mp, void * const *obj, unsigned int n)
{
	MWP_TSAN_RELEASE(mp);
	return tsan_base()->enqueue(mp, obj, n);
}

static int
tsan_dequeue(struct rte_mempool *mp, void **obj, unsigned int n)
{
	int ret = tsan_base()->dequeue(mp, obj, n);

	if (ret == 0)
		MWP_TSAN_ACQUIRE(mp);
	return ret;
}

static unsigned int
tsan_count(const struct rte_mempool *mp)
{
	return tsan_base()->get_count(mp);
}

static struct rte_mempool_ops tsan_ops = {
	.name = "mwp_tsan_ring",
	.alloc = tsan_alloc,
	.free = tsan_free,
	.enqueue = tsan_enqueue,
	.dequeue = tsan_dequeue,
	.get_count = tsan_count,
};

static inline struct rte_mempool *
test_pktmbuf_pool(const char *name, unsigned int n, unsigned int cache)
{
	if (tsan_ring_ops < 0) {
		for (unsigned int i = 0; i < rte_mempool_ops_table.num_ops; i++)
			if (strcmp(rte_mempool_ops_table.ops[i].name, "ring_mp_mc") == 0)
				tsan_ring_ops = (int)i;
		if (tsan_ring_ops < 0 || rte_mempool_register_ops(&tsan_ops) < 0)
			return NULL;
	}
	return rte_pktmbuf_pool_create_by_ops(name, n, cache, 0,
					      RTE_MBUF_DEFAULT_BUF_SIZE,
					      SOCKET_ID_ANY, "mwp_tsan_ring");
}
#else
static inline struct rte_mempool *
test_pktmbuf_pool(const char *name, unsigned int n, unsigned int cache)
{
	return rte_pktmbuf_pool_create(name, n, cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
}
#endif

#endif
