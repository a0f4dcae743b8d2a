/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_ACCESS_H
#define MWP_ACCESS_H

/**
 * @file
 * The responder's access decision for RDMA READ, WRITE and ATOMIC through
 * an R_Key, in the order of ../shared/spec/memory-windows.md section 3.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "mwp_deny.h"
#include "rkey_tbl.h"

/** One access through a key. */
struct mwp_access_req {
	uint32_t rkey;		/**< from the RETH or AtomicETH */
	uint32_t access;	/**< IBV_ACCESS_REMOTE_READ, _WRITE or _ATOMIC */
	uint64_t va;		/**< address (offset for zero-based keys) */
	uint64_t len;		/**< DMA length (8 for atomics) */
	uint32_t pd;		/**< the QP's PD handle */
	uint32_t qpn;		/**< the QP */
};

/**
 * Step 1: the QP's own qp_access_flags must allow the operation; checked
 * before any key work.
 */
static inline enum mwp_deny
mwp_qp_access_check(unsigned int qp_access_flags, uint32_t want)
{
	return (qp_access_flags & want) == want ? MWP_DENY_NONE :
						  MWP_DENY_QP_ACCESS;
}

/**
 * Steps 2-5 and 7: the decision for one access given the key's descriptor
 * (from mwp_keys_lookup_burst; NULL for an unknown key), each check in the
 * specification's order.
 *
 * @param b
 *   The descriptor, or NULL.
 * @param r
 *   The access.
 * @param addr
 *   On MWP_DENY_NONE: the host address of r->va (NULL for a zero-length
 *   READ/WRITE, whose key is not validated: C9-88).
 * @return
 *   MWP_DENY_NONE or the first reason to deny.  Bounds arithmetic cannot
 *   overflow.
 */
enum mwp_deny mwp_access_check(const struct mwp_binding *b,
			       const struct mwp_access_req *r, uint8_t **addr);

/** The longest DMA a request may name (C9-94). */
#define MWP_DMA_LEN_MAX (UINT64_C(1) << 31)

/* Is [off, off + len) inside [0, size)?  No sum that can wrap. */
static inline bool
mwp_inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/**
 * A local access through an L_Key's descriptor (an SGE of a work request):
 * the host address of addr, or NULL if the key is not a live region of the
 * PD, the access writes and the region lacks IBV_ACCESS_LOCAL_WRITE, or
 * [addr, addr + len) is not inside the region (in its iova space).  The
 * one region range check of local buffers (receives, requests, READ
 * results).
 *
 * @param b
 *   The descriptor mwp_keys_lookup gave for the L_Key, or NULL.
 */
static inline uint8_t *
mwp_local_addr(const struct mwp_binding *b, uint32_t pd, uint64_t addr,
	       uint64_t len, bool write)
{
	if (b == NULL || b->kind != MWP_KEY_MR || b->pd != pd ||
	    (write && !(b->local_access & IBV_ACCESS_LOCAL_WRITE)) || addr < b->va ||
	    !mwp_inside(addr - b->va, len, b->length))
		return NULL;
	return b->host + (addr - b->va);
}

/** mwp_access_check's two answers in one value. */
struct mwp_access_verdict {
	uint8_t *addr;		/**< as mwp_access_check's *addr */
	enum mwp_deny deny;	/**< as mwp_access_check's result */
};

/**
 * mwp_access_check with the request by value and the address in the
 * result: mwp_access_decide's rare path, so that neither its caller's
 * request nor its address has to live in memory on the common path.
 */
struct mwp_access_verdict mwp_access_check_v(const struct mwp_binding *b,
					     struct mwp_access_req r);

/**
 * mwp_access_check's answer, with an allowed access decided in one pass
 * (what the responder calls once per packet).  Every condition of the
 * ordered checks is tested at once, with the window's and the region's
 * bounds folded into the descriptor's fast_len at publication; anything
 * else, and every denial with its reason, goes to mwp_access_check.
 */
static __rte_always_inline enum mwp_deny
mwp_access_decide(const struct mwp_binding *b, const struct mwp_access_req *r,
		  uint8_t **addr)
{
	/* 1 <= len <= 2^31 (steps 2 and 3), and a key was found */
	if (likely(b != NULL && r->len - 1 < MWP_DMA_LEN_MAX)) {
		/* the offset into the binding; b->va is 0 when zero-based */
		const uint64_t off = r->va - b->va;
		const uint32_t x = (b->rkey ^ r->rkey) | (b->pd ^ r->pd) |
				   ((b->qpn ^ r->qpn) & b->qpn_mask) |
				   (r->access & ~(uint32_t)b->access);

		if (likely(x == 0 && off < b->fast_len && r->len <= b->fast_len - off)) {
			uintptr_t host = (uintptr_t)b->host + off;

			if (r->access != IBV_ACCESS_REMOTE_ATOMIC || (host & 7) == 0) {
				*addr = (uint8_t *)host;
				return MWP_DENY_NONE;
			}
		}
	}
	{
		/* copied field by field, not as "*r": a whole-struct read
		 * here would keep the caller's request in memory on the
		 * fast path as well (its stores made for this rare call) */
		const struct mwp_access_req q = {
			.rkey = r->rkey, .access = r->access, .va = r->va,
			.len = r->len, .pd = r->pd, .qpn = r->qpn,
		};
		const struct mwp_access_verdict v = mwp_access_check_v(b, q);

		*addr = v.addr;
		return v.deny;
	}
}

/**
 * Step 6: a WRITE packet's payload must agree with the DMA length still
 * to come: FIRST and MIDDLE carry exactly the path MTU and leave more to
 * come; LAST and ONLY carry exactly what is left, at most one MTU.
 *
 * @param first, last
 *   Where the packet sits (ONLY: both).
 * @param payload
 *   Its payload bytes.
 * @param remaining
 *   DMA bytes not yet written (the RETH's length for FIRST and ONLY).
 * @param mtu
 *   The QP's path MTU.
 */
static inline enum mwp_deny
mwp_write_len_check(bool first, bool last, uint32_t payload,
		    uint64_t remaining, uint32_t mtu)
{
	RTE_SET_USED(first);
	if (last)
		return payload == remaining && payload <= mtu ?
		       MWP_DENY_NONE : MWP_DENY_WRITE_LENGTH;
	return payload == mtu && remaining > payload ?
	       MWP_DENY_NONE : MWP_DENY_WRITE_LENGTH;
}

#endif /* MWP_ACCESS_H */
