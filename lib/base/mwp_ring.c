/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rings without memzones (see mwp_ring.h).
 */
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "mwp_ring.h"

static unsigned int next_ring_id;

struct rte_ring *
mwp_ring_make(const char *what, unsigned int esize, unsigned int count, int socket,
	      unsigned int flags)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;
	ssize_t sz;

	flags |= RING_F_EXACT_SZ;
	/* what rte_ring_create_elem() sizes: the header and
	 * rte_align32pow2(count + 1) slots */
	sz = rte_ring_get_memsize_elem(esize, rte_align32pow2(count + 1));
	if (sz < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	r = rte_zmalloc_socket(what, (size_t)sz, RTE_CACHE_LINE_SIZE, socket);
	if (r == NULL && socket != SOCKET_ID_ANY)
		r = rte_zmalloc_socket(what, (size_t)sz, RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (r == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "mwp_%s%u", what,
		 __atomic_fetch_add(&next_ring_id, 1, __ATOMIC_RELAXED));
	if (rte_ring_init(r, name, count, flags) != 0) {
		rte_free(r);
		rte_errno = EINVAL;
		return NULL;
	}
	return r;
}

void
mwp_ring_free(struct rte_ring *r)
{
	rte_free(r);
}
