/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_ERRNO_H
#define MWP_ERRNO_H

/* The failure of a constructor, in each layer's convention (mwpath.h):
 * `return mwp_null_errno(EINVAL);`.  Private. */

#include <errno.h>

#include <rte_errno.h>

/* verbs objects: NULL with errno set, as libibverbs' providers do */
static inline void *
mwp_null_errno(int e)
{
	errno = e;
	return NULL;
}

/* the port and the engine: NULL with rte_errno set, as DPDK does */
static inline void *
mwp_null_rte_errno(int e)
{
	rte_errno = e;
	return NULL;
}

#endif
