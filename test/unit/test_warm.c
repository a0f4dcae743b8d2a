/* SPDX-License-Identifier: BSD-3-Clause */
/* mwp_warm.c: the memory frames pass through is faulted in before the
 * first frame, and nothing in it changes. */
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "test_eal.h"
#include "mwp_pmd.h"

/* pages of [p, p + len) resident in this process */
static size_t
resident(void *p, size_t len)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char vec[1024];
	size_t n = 0;

	cr_assert_leq(len / pg, sizeof(vec));
	cr_assert_eq(mincore(p, len, vec), 0);
	for (size_t i = 0; i < len / pg; i++)
		n += vec[i] & 1;
	return n;
}

/* A shared mapping of a memfd of that name, nothing touched yet. */
static void *
memfd_map(const char *name, size_t len, int *fd)
{
	void *p;

	*fd = memfd_create(name, MFD_CLOEXEC);
	cr_assert_geq(*fd, 0);
	cr_assert_eq(ftruncate(*fd, (off_t)len), 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	cr_assert_neq(p, MAP_FAILED);
	return p;
}

Test(warm, memif_regions_are_faulted_in_and_keep_their_bytes)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 64 * pg;
	int fd, other_fd;
	uint8_t *r = memfd_map("memif_region_0", len, &fd);
	uint8_t *other = memfd_map("not_memif", len, &other_fd);
	size_t bytes;

	/* what a peer already wrote (a descriptor, a frame) stays */
	r[0] = 0xa5;
	r[5 * pg + 8] = 0x5a;
	cr_expect_leq(resident(r, len), 2);
	bytes = mwp_warm_memif();
	cr_expect_geq(bytes, len, "%zu bytes warmed", bytes);
	cr_expect_eq(resident(r, len), len / pg, "every page of the region");
	cr_expect_eq(r[0], 0xa5);
	cr_expect_eq(r[5 * pg + 8], 0x5a);
	for (size_t i = 1; i < len; i++)
		if (i != 5 * pg + 8)
			cr_assert_eq(r[i], 0, "byte %zu changed", i);
	cr_expect_eq(resident(other, len), 0, "another memfd is left alone");
	munmap(r, len);
	munmap(other, len);
	close(fd);
	close(other_fd);
}

Test(warm, no_memif_region_warms_nothing)
{
	cr_expect_eq(mwp_warm_memif(), 0);
}

Test(warm, an_mbuf_pool_is_faulted_in_and_its_mbufs_stay_whole)
{
	struct rte_mbuf *m;

	test_eal_init();
	cr_expect_gt(mwp_warm_mempool(test_mp), 0);
	cr_expect_eq(mwp_warm_mempool(NULL), 0);
	/* the pool still hands out sane mbufs */
	m = rte_pktmbuf_alloc(test_mp);
	cr_assert_not_null(m);
	cr_expect_eq(m->data_off, RTE_PKTMBUF_HEADROOM);
	cr_expect_eq(rte_pktmbuf_data_len(m), 0);
	cr_expect_eq(rte_mbuf_refcnt_read(m), 1);
	rte_pktmbuf_free(m);
}
