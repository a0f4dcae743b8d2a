/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault in, before the first frame, the memory frames pass through.
 *
 * The kernel gives a shared mapping its pages at first touch.  memif's
 * regions (a memfd the client creates and both sides map when the link
 * comes up: its rings and their packet buffers) and an mbuf pool's data
 * rooms were first touched by the datapath, a fault a page and a process,
 * for as long as the rings took to go round once: two libibverbs devices
 * on memif ran their first ~1000 operations at a tenth of their rate
 * (ib_read_bw, 10000 64 B READs: 50 of its 65 ms in the first 1000,
 * frames taking 300-700 us from one process to the other).
 * MADV_POPULATE_WRITE (Linux 5.14) maps every page in one call; then each
 * page is written once from this process -- an atomic add of 0, as the
 * peer may be writing the same page -- for on a virtual machine the first
 * write to a page costs the hypervisor's fault besides the kernel's
 * (here, populating alone halved the stall; the writes took most of the
 * rest).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_mempool.h>

#include "mwp_pmd.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static size_t
populate(void *addr, size_t len)
{
	const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	const uintptr_t start = (uintptr_t)addr & ~(pg - 1);
	const uintptr_t end = RTE_ALIGN_CEIL((uintptr_t)addr + len, pg);

	if (len == 0)
		return 0;
	(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
	for (uintptr_t p = start; p < end; p += pg)
		__atomic_fetch_add((uint64_t *)p, 0, __ATOMIC_RELAXED);
	return end - start;
}

static void
pool_chunk(struct rte_mempool *mp __rte_unused, void *opaque,
	   struct rte_mempool_memhdr *memhdr, unsigned int idx __rte_unused)
{
	*(size_t *)opaque += populate(memhdr->addr, memhdr->len);
}

size_t
mwp_warm_mempool(struct rte_mempool *mp)
{
	size_t bytes = 0;

	if (mp != NULL)
		rte_mempool_mem_iter(mp, pool_chunk, &bytes);
	return bytes;
}

size_t
mwp_warm_memif(void)
{
	char line[512];
	size_t bytes = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		char perm[5];

		/* "lo-hi rw-s off dev inode /memfd:memif_region_N (deleted)" */
		if (strstr(line, "/memfd:memif_region_") == NULL ||
		    sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) != 3 || perm[1] != 'w')
			continue;
		bytes += populate((void *)lo, hi - lo);
	}
	fclose(f);
	return bytes;
}
