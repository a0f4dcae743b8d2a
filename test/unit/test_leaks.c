/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * No descriptor, ring slot or memzone leaks: a whole device lifecycle --
 * regions, windows of both types, binds, rebinds, invalidations, an error
 * and its flush, QPs, CQs -- returns the EAL heap and the memzone count to
 * where they were, and every send ring and completion list is empty before
 * the objects go.
 */
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "verbs_fixture.h"

static void
count_mz(const struct rte_memzone *mz, void *arg)
{
	RTE_SET_USED(mz);
	(*(unsigned int *)arg)++;
}

static void
heap(size_t *bytes, unsigned int *zones)
{
	struct rte_malloc_socket_stats st;

	rte_malloc_get_socket_stats(0, &st);
	*bytes = st.heap_allocsz_bytes;
	*zones = 0;
	rte_memzone_walk(count_mz, zones);
}

static void
lifecycle(void)
{
	struct ibv_mw *w1, *w2;
	struct ibv_wc wc;

	verbs_setup();
	w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	for (int i = 0; i < 100; i++) {
		FIX_ASSERT(bind1(qp, w1, mr, (uintptr_t)buf, 64 + i, IBV_ACCESS_REMOTE_READ, 1) == 0);
		FIX_ASSERT(post_bind2(qp, w2, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ,
				      (uint8_t)i, 2) == 0);
		FIX_ASSERT(post_local_inv(qp, w2->rkey, 3, true) == 0);
		for (int k = 0; k < 3; k++)
			FIX_ASSERT(next_wc(&wc) && wc.status == IBV_WC_SUCCESS);
	}
	/* an error and its flush */
	FIX_ASSERT(post_local_inv(qp, 0x12345678, 4, true) == 0);
	FIX_ASSERT(post_local_inv(qp, 0x12345678, 5, true) == 0);
	FIX_ASSERT(next_wc(&wc) && wc.status == IBV_WC_LOC_QP_OP_ERR);
	FIX_ASSERT(next_wc(&wc) && wc.status == IBV_WC_WR_FLUSH_ERR);
	cr_expect_eq(rte_ring_count(to_mqp(qp)->sq), 0);
	cr_expect_eq(to_mqp(qp)->sq_tail - to_mqp(qp)->sq_head, 0);
	cr_expect_eq(mwp_qp_sq_outstanding(qp), 0);
	cr_expect_eq(mwp_keys_count(mwp_device_keys(ctx)), 3, "two MRs and the Type 1 window");
	FIX_ASSERT(ibv_dealloc_mw(w1) == 0);
	FIX_ASSERT(ibv_dealloc_mw(w2) == 0);
	cr_expect_eq(mwp_keys_count(mwp_device_keys(ctx)), 2);
	verbs_teardown();
}

TestSuite(leaks, .init = test_eal_init);

Test(leaks, a_device_lifecycle_returns_every_byte_and_memzone)
{
	size_t b0, b1;
	unsigned int z0, z1;

	lifecycle();		/* first use may set up DPDK's own tables */
	heap(&b0, &z0);
	lifecycle();
	heap(&b1, &z1);
	cr_expect_eq(b1, b0, "heap: %zu bytes before, %zu after", b0, b1);
	cr_expect_eq(z1, z0, "memzones: %u before, %u after", z0, z1);
}
