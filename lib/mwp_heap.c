/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mwp_heap.h"
#include "mwp_log.h"

#define THP_SYSFS "/sys/kernel/mm/transparent_hugepage/"

struct mwp_heap {
	char name[32];		/* DPDK's heap names are shorter than 32 */
	void *map;		/* what mmap gave */
	size_t map_len;
	void *va;		/* the part aligned to huge pages, given to DPDK */
	size_t len;
	int socket;
};

/* Whether THP is on for memory that asks (enabled: [always] or
 * [madvise]), and the size of its pages. */
static size_t
thp_page_size(void)
{
	char line[128] = "";
	unsigned long long sz = 0;
	FILE *f = fopen(THP_SYSFS "enabled", "r");

	if (f == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	if (strstr(line, "[always]") == NULL && strstr(line, "[madvise]") == NULL)
		return 0;
	f = fopen(THP_SYSFS "hpage_pmd_size", "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &sz) != 1)
		sz = 0;
	fclose(f);
	return rte_is_power_of_2(sz) ? (size_t)sz : 0;
}

struct mwp_heap *
mwp_heap_create(const char *name, size_t len)
{
	size_t pg;
	struct mwp_heap *h;

	if (rte_eal_has_hugepages() || len == 0)
		return NULL;
	pg = thp_page_size();
	if (pg == 0)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (h == NULL || strlen(name) >= sizeof(h->name))
		goto fail;
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->len = RTE_ALIGN_CEIL(len, pg);
	h->map_len = h->len + pg;
	h->map = mmap(NULL, h->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (h->map == MAP_FAILED)
		goto fail;
	h->va = RTE_PTR_ALIGN_CEIL(h->map, pg);
	if (madvise(h->va, h->len, MADV_HUGEPAGE) != 0) {
		rte_errno = errno;
		goto fail_unmap;
	}
	if (rte_malloc_heap_create(h->name) != 0)
		goto fail_unmap;
	if (rte_malloc_heap_memory_add(h->name, h->va, h->len, NULL, 0, pg) != 0) {
		rte_malloc_heap_destroy(h->name);
		goto fail_unmap;
	}
	h->socket = rte_malloc_heap_get_socket(h->name);
	MWP_LOG(DEBUG, "heap %s: %zu MB on %zu KB transparent huge pages, socket %d",
		h->name, h->len >> 20, pg >> 10, h->socket);
	return h;
fail_unmap:
	MWP_LOG(INFO, "heap %s: not made (%s); the key table stays in DPDK's memory",
		h->name, rte_strerror(rte_errno));
	munmap(h->map, h->map_len);
fail:
	free(h);
	return NULL;
}

int
mwp_heap_socket(const struct mwp_heap *h)
{
	return h->socket;
}

void
mwp_heap_free(struct mwp_heap *h)
{
	if (h == NULL)
		return;
	if (rte_malloc_heap_memory_remove(h->name, h->va, h->len) != 0 ||
	    rte_malloc_heap_destroy(h->name) != 0) {
		MWP_LOG(ERR, "heap %s: still in use (%s); left mapped",
			h->name, rte_strerror(rte_errno));
		return;
	}
	munmap(h->map, h->map_len);
	free(h);
}
