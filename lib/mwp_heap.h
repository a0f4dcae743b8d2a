/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_HEAP_H
#define MWP_HEAP_H

/*
 * A device's own DPDK malloc heap on transparent huge pages, for its key
 * table when DPDK runs without hugepages (private to libmwpath).
 *
 * With --no-huge DPDK's memory is 4 KB pages of a memfd, which the kernel
 * does not back with huge pages under the usual shmem_enabled=never.  A
 * large key table then spreads its hash buckets, key slots and
 * descriptors over many thousands of pages, and each lookup misses the
 * first-level TLB several times.  Private anonymous memory advised
 * MADV_HUGEPAGE gets 2 MB pages wherever THP is enabled; DPDK takes it as
 * an external heap (rte_malloc_heap_memory_add), and rte_hash and the
 * descriptors are allocated from it by the heap's socket id.
 */

#include <stddef.h>

struct mwp_heap;

/**
 * Make a heap of at least len bytes, if this process runs without
 * hugepages and the kernel offers transparent huge pages.  DPDK zeroes
 * the whole of it at once, so it is sized for what it will hold.
 *
 * @return
 *   The heap, or NULL: then the caller allocates as it would otherwise.
 */
struct mwp_heap *mwp_heap_create(const char *name, size_t len);

/** The socket id that allocates from the heap. */
int mwp_heap_socket(const struct mwp_heap *h);

/**
 * Give the heap's memory back.  Everything allocated from it must have
 * been freed; if not, the memory is left mapped (and logged), never
 * unmapped under a live allocation.  NULL is a no-op.
 */
void mwp_heap_free(struct mwp_heap *h);

#endif /* MWP_HEAP_H */
