/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_MR_H
#define MWP_MR_H

/* A memory region (mwp_mr.c).  Private. */

#include "mwp_access.h"
#include "mwp_device.h"

struct mwp_mr {
	struct ibv_mr ibmr;
	uint64_t iova;			/* address peers use for byte 0 */
	unsigned int access;
	uint32_t bound_mws;		/* windows bound to it */
};

/* [addr, addr + len) inside the region's addresses (its iova range),
 * checked without a sum that can wrap; *off is addr's offset in it.  The
 * one region range check of binds (mwp_sq.c) and DET binds (mwp_mw.c);
 * requests check through their key's descriptor (mwp_access.h). */
static inline bool
mwp_mr_range(const struct mwp_mr *mr, uint64_t addr, uint64_t len, uint64_t *off)
{
	if (addr < mr->iova || !mwp_inside(addr - mr->iova, len, mr->ibmr.length))
		return false;
	*off = addr - mr->iova;
	return true;
}

#define to_mmr(m)	container_of(m, struct mwp_mr, ibmr)

struct mwp_mr *mwp_mr_by_key(struct mwp_dev *d, uint32_t key);

#endif /* MWP_MR_H */
