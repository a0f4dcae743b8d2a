/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exported libibverbs functions that take a context or an object and that
 * mwpath's devices do not support: EOPNOTSUPP for them (errno and NULL,
 * or the errno value, as each function reports errors), the real function
 * for any other device.  Without these, libibverbs would read parts of
 * mwpath's context that only its own providers have, or ask a kernel.
 */
#include <errno.h>

#include "mwp_ibv.h"

/* name(params) for a device of mwpath's (ctx: its context) fails with
 * `fail`; for another, calls the real name@version(args). */
#define UNSUPPORTED(ret, name, version, params, args, ctx, fail)		\
ret name params									\
{										\
	static ret (*real) params;						\
										\
	if (mwp_ibv_ctx_dev(ctx) != NULL) {					\
		errno = EOPNOTSUPP;						\
		return fail;							\
	}									\
	if (real == NULL)							\
		*(void **)&real = mwp_ibv_real_sym(#name, version);		\
	return real args;							\
}

UNSUPPORTED(int, ibv_resolve_eth_l2_from_gid, "IBVERBS_1.1",
	    (struct ibv_context *ctx, struct ibv_ah_attr *attr, uint8_t mac[6], uint16_t *vid),
	    (ctx, attr, mac, vid), ctx, EOPNOTSUPP)
UNSUPPORTED(int, ibv_attach_mcast, "IBVERBS_1.1",
	    (struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid), (qp, gid, lid),
	    qp->context, EOPNOTSUPP)
UNSUPPORTED(int, ibv_detach_mcast, "IBVERBS_1.1",
	    (struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid), (qp, gid, lid),
	    qp->context, EOPNOTSUPP)
UNSUPPORTED(int, ibv_resize_cq, "IBVERBS_1.1", (struct ibv_cq *cq, int cqe), (cq, cqe),
	    cq->context, EOPNOTSUPP)
UNSUPPORTED(struct ibv_mr *, ibv_reg_dmabuf_mr, "IBVERBS_1.12",
	    (struct ibv_pd *pd, uint64_t off, size_t len, uint64_t iova, int fd, int access),
	    (pd, off, len, iova, fd, access), pd->context, NULL)
UNSUPPORTED(struct ibv_pd *, ibv_import_pd, "IBVERBS_1.10",
	    (struct ibv_context *ctx, uint32_t handle), (ctx, handle), ctx, NULL)
UNSUPPORTED(struct ibv_mr *, ibv_import_mr, "IBVERBS_1.10",
	    (struct ibv_pd *pd, uint32_t handle), (pd, handle), pd->context, NULL)
UNSUPPORTED(struct ibv_dm *, ibv_import_dm, "IBVERBS_1.13",
	    (struct ibv_context *ctx, uint32_t handle), (ctx, handle), ctx, NULL)
UNSUPPORTED(int, ibv_query_ece, "IBVERBS_1.10", (struct ibv_qp *qp, struct ibv_ece *ece),
	    (qp, ece), qp->context, EOPNOTSUPP)
UNSUPPORTED(int, ibv_set_ece, "IBVERBS_1.10", (struct ibv_qp *qp, struct ibv_ece *ece),
	    (qp, ece), qp->context, EOPNOTSUPP)
