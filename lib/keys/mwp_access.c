/* SPDX-License-Identifier: BSD-3-Clause */
#include <infiniband/verbs.h>
#include <rte_common.h>

#include "mwp_access.h"

enum mwp_deny
mwp_access_check(const struct mwp_binding *b, const struct mwp_access_req *r,
		 uint8_t **addr)
{
	uint64_t off, hoff;
	uintptr_t host;

	*addr = NULL;
	/* Step 2 (C9-88): a zero-length READ/WRITE touches nothing and its
	 * R_Key is not validated at all. */
	if (r->len == 0 && r->access != IBV_ACCESS_REMOTE_ATOMIC)
		return MWP_DENY_NONE;
	/* Step 3 (C9-94) */
	if (r->len > MWP_DMA_LEN_MAX)
		return MWP_DENY_DMA_TOO_LONG;
	/* Step 4: the key.  FREE and unbound windows are not in the table. */
	if (b == NULL || b->rkey != r->rkey)
		return MWP_DENY_UNKNOWN_KEY;
	if (b->length == 0)
		return MWP_DENY_INVALID;
	if (b->pd != r->pd)
		return MWP_DENY_PD_MISMATCH;
	if (b->kind == MWP_KEY_MW2 && b->qpn != r->qpn)
		return MWP_DENY_WRONG_QP;
	/* The window's rights govern, not the region's. */
	if ((r->access & ~(uint32_t)b->access) != 0)
		return MWP_DENY_ACCESS;
	/* Step 5: inside the window (an offset if zero-based) ... */
	if (b->zero_based) {
		off = r->va;
	} else {
		if (r->va < b->va)
			return MWP_DENY_BOUNDS;
		off = r->va - b->va;
	}
	if (!mwp_inside(off, r->len, b->length))
		return MWP_DENY_BOUNDS;
	/* ... and always inside the region (integer arithmetic: the
	 * address is only formed once it is known to be in bounds). */
	host = (uintptr_t)b->host + off;
	if (host < (uintptr_t)b->mr_host)
		return MWP_DENY_MR_BOUNDS;
	hoff = host - (uintptr_t)b->mr_host;
	if (!mwp_inside(hoff, r->len, b->mr_length))
		return MWP_DENY_MR_BOUNDS;
	/* Step 7: after the key, like rxe. */
	if (r->access == IBV_ACCESS_REMOTE_ATOMIC && (host & 7) != 0)
		return MWP_DENY_UNALIGNED;
	*addr = (uint8_t *)host;
	return MWP_DENY_NONE;
}

struct mwp_access_verdict
mwp_access_check_v(const struct mwp_binding *b, struct mwp_access_req r)
{
	struct mwp_access_verdict v;

	v.deny = mwp_access_check(b, &r, &v.addr);
	return v;
}
