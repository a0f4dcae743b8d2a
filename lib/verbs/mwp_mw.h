/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_MW_H
#define MWP_MW_H

/* A memory window, and its rules for binds and invalidations
 * (memory-windows.md sections 2 and 4; mwp_mw.c).  Private. */

#include "mwp_mr.h"

struct mwp_wqe;

enum mwp_mw_state {
	MWP_MW_FREE = 0,		/* Type 2: bindable; Type 1: unbound */
	MWP_MW_VALID,			/* bound: its key is in the table */
};

struct mwp_mw {
	struct ibv_mw ibmw;
	uint32_t index;
	uint32_t cur_rkey;		/* the key the device holds */
	enum mwp_mw_state state;
	struct mwp_mr *mr;		/* VALID: the region it is bound to */
	uint32_t qpn;			/* VALID Type 2: its QP */
	/* Type 1: the key bytes alloc and the binds posted gave it, which a
	 * rebind's new key byte avoids (mwp_post.c).  Made at alloc, then
	 * read and written only by whoever posts the window's binds, as
	 * ibmw.rkey is; after the fields execution and the responder read. */
	struct mwp_key_hist key_hist;
};

#define to_mmw(m)	container_of(m, struct mwp_mw, ibmw)

struct mwp_mw *mwp_mw_by_key(struct mwp_dev *d, uint32_t key);
struct ibv_mw *mwp_op_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int mwp_op_dealloc_mw(struct ibv_mw *mw);
uint32_t mwp_mw_unbind_locked(struct mwp_dev *d, struct mwp_mw *mw);

/*
 * A BIND_MW (memory-windows.md section 2) or LOCAL_INV (section 4) work
 * request of qp, executed by the window's rules (mwp_mw.c) when its send
 * queue reaches it, under the device lock.  *revoked: keys taken out of
 * the table (0 or 1); the caller completes the WQE after a grace period.
 */
enum ibv_wc_status mwp_mw_bind_exec(struct mwp_qp *qp, const struct mwp_wqe *w,
				    uint32_t *revoked);
enum ibv_wc_status mwp_mw_local_inv_exec(struct mwp_qp *qp, const struct mwp_wqe *w,
					 uint32_t *revoked);

/**
 * A received SEND with invalidate names rkey (section 4): invalidate it if
 * it is a VALID Type 2 window bound to qp with that key.  The caller
 * holds the device lock (the lcore only tries it: roce_resp_exec.c).  No
 * grace period is needed before the receive completes: a Type 2B window
 * is usable only through its QP, whose packets only the calling lcore
 * processes, so no other reader can still use it.
 *
 * @return
 *   0, or -EINVAL (unknown key, wrong key byte, a region, Type 1, FREE,
 *   or bound to another QP): nothing is invalidated.
 */
int mwp_mw_remote_invalidate_locked(struct mwp_qp *qp, uint32_t rkey);

#endif /* MWP_MW_H */
