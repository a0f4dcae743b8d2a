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
#include <rte_common.h>

#include "rkey_tbl.h"

/** Denials: _(SYM, NAK syndrome, text), in check order. */
#define MWP_FOREACH_DENY(_)						\
	_(QP_ACCESS,    0x61, "QP access flags do not allow the operation") \
	_(DMA_TOO_LONG, 0x61, "DMA length above 2^31 (C9-94)")		\
	_(UNKNOWN_KEY,  0x62, "no such R_Key (unknown, freed, or stale key byte)") \
	_(INVALID,      0x62, "key not valid (zero-length window)")	\
	_(PD_MISMATCH,  0x62, "key's PD is not the QP's PD")		\
	_(WRONG_QP,     0x62, "Type 2B window bound to another QP (o10-37.2.43)") \
	_(ACCESS,       0x62, "access not granted by the key")		\
	_(BOUNDS,       0x62, "outside the window or region")		\
	_(MR_BOUNDS,    0x62, "outside the memory region")		\
	_(WRITE_LENGTH, 0x61, "WRITE payload disagrees with the DMA length") \
	_(UNALIGNED,    0x61, "ATOMIC address not 8-byte aligned")

/** Why an access was denied; MWP_DENY_NONE: allowed. */
enum mwp_deny {
	MWP_DENY_NONE = 0,
#define _(sym, syn, str) MWP_DENY_##sym,
	MWP_FOREACH_DENY(_)
#undef _
	MWP_DENY__MAX
};

/** The AETH NAK syndrome of a denial (0x61 or 0x62); 0 for NONE. */
uint8_t mwp_deny_syndrome(enum mwp_deny d);

/** Lower-case name of a denial ("wrong_qp"). */
const char *mwp_deny_name(enum mwp_deny d);

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
 * (from mwp_keys_lookup_burst; NULL for an unknown key).
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

/** mwp_access_check, inline: what the responder calls once per packet. */
static __rte_always_inline enum mwp_deny
mwp_access_decide(const struct mwp_binding *b, const struct mwp_access_req *r,
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
