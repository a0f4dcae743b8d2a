/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What UD and shared receives need of libibverbs' exported functions:
 * address handles (ibv_create_ah, ibv_destroy_ah, and from a received
 * work completion, ibv_init_ah_from_wc and ibv_create_ah_from_wc, read
 * as rdma-core reads a RoCE v2 GRH area) and shared receive queues
 * (ibv_create_srq, the extended op behind ibv_create_srq_ex,
 * ibv_modify_srq, ibv_query_srq, ibv_destroy_srq).  ibv_post_srq_recv
 * is an inline of <infiniband/verbs.h>: the context's op.  For any other
 * device, the real functions.
 */
#include <errno.h>
#include <string.h>

#include "mwp_ibv.h"

/* The real function name@version, looked up once. */
#define REAL(fn, name, version)						\
	do {								\
		if ((fn) == NULL)					\
			*(void **)&(fn) = mwp_ibv_real_sym(name, version); \
	} while (0)

/* ---- address handles ---- */

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static struct ibv_ah *(*real)(struct ibv_pd *, struct ibv_ah_attr *);

	if (mwp_ibv_ctx_dev(pd->context) == NULL) {
		REAL(real, "ibv_create_ah", "IBVERBS_1.1");
		return real(pd, attr);
	}
	return mwp_create_ah(pd, attr);
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	static int (*real)(struct ibv_ah *);

	if (mwp_ibv_ctx_dev(ah->context) == NULL) {
		REAL(real, "ibv_destroy_ah", "IBVERBS_1.1");
		return real(ah);
	}
	return mwp_ibv_ret(mwp_destroy_ah(ah));
}

/* The index of the port's GID gid, or -1 with errno ENOENT (rdma-core's
 * ibv_find_gid_index). */
static int
gid_index(const struct mwp_ibv_dev *d, const union ibv_gid *gid)
{
	for (unsigned int i = 0; i < d->nb_gids; i++)
		if (memcmp(&d->gid[i], gid, sizeof(*gid)) == 0)
			return (int)i;
	errno = ENOENT;
	return -1;
}

/* The address attributes that answer a UD receive: its sender as the
 * GRH area and the completion tell it (mwp_ah_attr_from_grh), from the
 * port's GID it was sent to.  0, or -1 with errno (EINVAL: a multicast
 * destination or another port; ENOENT: sent to no GID of the port;
 * EPROTONOSUPPORT). */
static int
ah_attr_from_wc(struct mwp_ibv_dev *d, uint8_t port, const struct ibv_wc *wc,
		const struct ibv_grh *grh, struct ibv_ah_attr *a)
{
	union ibv_gid local;
	int idx, ret;

	if (port != 1) {
		errno = EINVAL;
		return -1;
	}
	ret = mwp_ah_attr_from_grh(wc, grh, a, &local);
	if (ret != 0) {
		errno = ret;
		return -1;
	}
	if (!a->is_global)
		return 0;
	idx = gid_index(d, &local);
	if (idx < 0)
		return -1;
	a->grh.sgid_index = (uint8_t)idx;
	return 0;
}

int
ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port, struct ibv_wc *wc,
		    struct ibv_grh *grh, struct ibv_ah_attr *attr)
{
	static int (*real)(struct ibv_context *, uint8_t, struct ibv_wc *, struct ibv_grh *,
			   struct ibv_ah_attr *);
	struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);

	if (d == NULL) {
		REAL(real, "ibv_init_ah_from_wc", "IBVERBS_1.1");
		return real(ctx, port, wc, grh, attr);
	}
	return ah_attr_from_wc(d, port, wc, grh, attr);
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
		      uint8_t port)
{
	static struct ibv_ah *(*real)(struct ibv_pd *, struct ibv_wc *, struct ibv_grh *,
				      uint8_t);
	struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(pd->context);
	struct ibv_ah_attr a;

	if (d == NULL) {
		REAL(real, "ibv_create_ah_from_wc", "IBVERBS_1.1");
		return real(pd, wc, grh, port);
	}
	if (ah_attr_from_wc(d, port, wc, grh, &a) != 0)
		return NULL;
	return mwp_create_ah(pd, &a);
}

/* ---- shared receive queues ---- */

/* What libibverbs' ibv_ack_async_event and a program's waits use. */
static struct ibv_srq *
srq_ready(struct ibv_srq *srq)
{
	if (srq == NULL)
		return NULL;
	srq->events_completed = 0;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	return srq;
}

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	static struct ibv_srq *(*real)(struct ibv_pd *, struct ibv_srq_init_attr *);

	if (mwp_ibv_ctx_dev(pd->context) == NULL) {
		REAL(real, "ibv_create_srq", "IBVERBS_1.1");
		return real(pd, attr);
	}
	return srq_ready(mwp_create_srq(pd, attr));
}

struct ibv_srq *
mwp_ibv_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_CQ;
	struct ibv_srq_init_attr basic;
	struct ibv_srq *srq;

	/* the basic type only: XRC and tag matching are not supported */
	if ((attr->comp_mask & ~known) != 0 ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL ||
	    attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	basic.srq_context = attr->srq_context;
	basic.attr = attr->attr;
	srq = srq_ready(mwp_create_srq(attr->pd, &basic));
	if (srq != NULL)
		attr->attr = basic.attr;
	return srq;
}

int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	static int (*real)(struct ibv_srq *, struct ibv_srq_attr *, int);

	if (mwp_ibv_ctx_dev(srq->context) == NULL) {
		REAL(real, "ibv_modify_srq", "IBVERBS_1.1");
		return real(srq, attr, mask);
	}
	return mwp_ibv_ret(mwp_modify_srq(srq, attr, mask));
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	static int (*real)(struct ibv_srq *, struct ibv_srq_attr *);

	if (mwp_ibv_ctx_dev(srq->context) == NULL) {
		REAL(real, "ibv_query_srq", "IBVERBS_1.1");
		return real(srq, attr);
	}
	return mwp_ibv_ret(mwp_query_srq(srq, attr));
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	static int (*real)(struct ibv_srq *);

	if (mwp_ibv_ctx_dev(srq->context) == NULL) {
		REAL(real, "ibv_destroy_srq", "IBVERBS_1.1");
		return real(srq);
	}
	mwp_ibv_async_forget(mwp_ibv_ctx_dev(srq->context), srq, &srq->mutex, &srq->cond,
			     &srq->events_completed);
	return mwp_ibv_ret(mwp_destroy_srq(srq));
}
