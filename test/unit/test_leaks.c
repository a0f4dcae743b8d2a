/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * No descriptor, ring slot or memzone leaks: a whole device lifecycle --
 * regions, windows of both types, binds, rebinds, invalidations, an error
 * and its flush, QPs, CQs -- returns the EAL heap and the memzone count to
 * where they were, and every send ring and completion list is empty before
 * the objects go.  Without hugepages a device's key table lives on a heap
 * of its own (transparent huge pages); that heap goes with the device.
 */
#include <stdio.h>
#include <string.h>

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
	cr_expect_eq(to_mqp(qp)->pend_count, 0);
	cr_expect_eq(to_mqp(qp)->sq_used, 0);
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

/* Whether this kernel gives transparent huge pages to memory that asks. */
static bool
thp_on(void)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f == NULL)
		return false;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	return strstr(line, "[always]") != NULL || strstr(line, "[madvise]") != NULL;
}

/* The name of a device's key-table heap (mwp_device.c names it). */
static void
keys_heap_name(struct ibv_context *c, char *name, size_t len)
{
	unsigned int id;

	FIX_ASSERT(sscanf(c->device->name, "mwpath%u", &id) == 1);
	snprintf(name, len, "mwp%u_keys", id);
}

/* The socket of a device's key-table heap, or -1 if it has none. */
static int
keys_heap_socket(struct ibv_context *c)
{
	char name[32];

	keys_heap_name(c, name, sizeof(name));
	return rte_malloc_heap_get_socket(name);
}

/* Register a region and find its key the datapath's way. */
static void
key_works(struct ibv_context *c, uint8_t *mem)
{
	struct ibv_pd *p = mwp_alloc_pd(c);
	struct ibv_mr *m;
	const struct mwp_binding *b;
	const void *kp;
	uint32_t sig;

	FIX_ASSERT(p != NULL);
	m = mwp_reg_mr(p, mem, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	FIX_ASSERT(m != NULL);
	kp = &m->rkey;
	sig = mwp_keys_sig(m->rkey);
	cr_expect_eq(mwp_keys_lookup_bulk(mwp_device_keys(c), &kp, &sig, 1, &b), 1);
	cr_expect_eq(b->host, mem);
	FIX_ASSERT(mwp_dereg_mr(m) == 0);
	FIX_ASSERT(mwp_dealloc_pd(p) == 0);
}

Test(leaks, the_key_table_heap_lives_and_goes_with_its_device)
{
	static uint8_t mem[4096];
	struct ibv_context *c = mwp_open_device(NULL);
	char name[32];
	int s;

	FIX_ASSERT(c != NULL);
	keys_heap_name(c, name, sizeof(name));
	s = rte_malloc_heap_get_socket(name);
	if (thp_on()) {
		struct rte_malloc_socket_stats st;

		cr_assert_geq(s, 0, "no heap for the key table");
		rte_malloc_get_socket_stats(s, &st);
		cr_expect_gt(st.heap_allocsz_bytes, 0, "the table is not on it");
	} else {
		cr_expect_lt(s, 0, "a heap without transparent huge pages");
	}
	key_works(c, mem);
	FIX_ASSERT(mwp_close_device(c) == 0);
	cr_expect_lt(rte_malloc_heap_get_socket(name), 0, "the heap outlived its device");
}

Test(leaks, keys_small_pages_keeps_the_table_in_dpdk_memory)
{
	static uint8_t mem[4096];
	const struct mwp_device_attr a = { .socket = SOCKET_ID_ANY, .keys_small_pages = 1 };
	struct ibv_context *c = mwp_open_device(&a);

	FIX_ASSERT(c != NULL);
	cr_expect_lt(keys_heap_socket(c), 0);
	key_works(c, mem);
	FIX_ASSERT(mwp_close_device(c) == 0);
}

/* DPDK has room for 32 heaps in all: the devices past that keep their
 * tables in DPDK's memory, and every one works. */
Test(leaks, more_devices_than_dpdk_has_heaps)
{
	static uint8_t mem[4096];
	const struct mwp_device_attr a = { .max_keys = 64, .socket = SOCKET_ID_ANY };
	struct ibv_context *c[RTE_MAX_HEAPS + 8];
	unsigned int with = 0;

	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		c[i] = mwp_open_device(&a);
		FIX_ASSERT(c[i] != NULL);
		with += keys_heap_socket(c[i]) >= 0;
	}
	if (thp_on())
		cr_expect(with > 0 && with < RTE_DIM(c), "%u of %zu with a heap", with, RTE_DIM(c));
	for (unsigned int i = 0; i < RTE_DIM(c); i++)
		key_works(c[i], mem);
	for (unsigned int i = 0; i < RTE_DIM(c); i++)
		FIX_ASSERT(mwp_close_device(c[i]) == 0);
	/* and the heaps came back: as many can be made again */
	for (unsigned int i = 0; i < RTE_DIM(c); i++)
		c[i] = mwp_open_device(&a);
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		FIX_ASSERT(c[i] != NULL);
		with -= keys_heap_socket(c[i]) >= 0;
	}
	cr_expect_eq(with, 0);
	for (unsigned int i = 0; i < RTE_DIM(c); i++)
		FIX_ASSERT(mwp_close_device(c[i]) == 0);
}
