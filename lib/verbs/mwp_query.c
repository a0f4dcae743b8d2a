/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The query API (mwp_query.h): what the mwpath program and other users
 * read of the verbs objects, so that nothing outside lib/ needs their
 * private layout.
 */
#include <errno.h>
#include <pthread.h>

#include <rte_cycles.h>

#include "mwp_port.h"
#include "mwp_priv.h"
#include "mwp_query.h"

int
mwp_qp_query_info(const struct ibv_qp *ibqp, struct mwp_qp_info *info)
{
	const struct mwp_qp *qp;

	if (ibqp == NULL || info == NULL)
		return EINVAL;
	qp = to_mqp(ibqp);
	*info = (struct mwp_qp_info){
		.dest_qpn = qp->dest_qpn, .sq_psn = qp->sq_psn,
		.expected_psn = qp->resp.epsn, .msn = qp->resp.msn,
		.req_next_psn = qp->req.psn, .req_unacked_psn = qp->req.una,
		.port = qp->port,
		.resp = qp->resp.st, .req = qp->req.st,
		.cc = { .st = qp->cc_st, .limited = qp->dcqcn.limited,
			.cuts = qp->dcqcn.st.cuts, .paced = qp->dcqcn.st.paced },
	};
	if (qp->port != NULL && qp->port->conf.cc.react)
		mwp_dcqcn_read(&qp->dcqcn, &qp->port->dcqcn, rte_rdtsc(), &info->cc.rate,
			       &info->cc.target, &info->cc.alpha);
	return 0;
}

int
mwp_mr_query_info(const struct ibv_mr *ibmr, struct mwp_mr_info *info)
{
	const struct mwp_mr *mr = to_mmr(ibmr);
	struct mwp_dev *d;

	if (ibmr == NULL || info == NULL)
		return EINVAL;
	d = to_mdev(ibmr->context);
	pthread_mutex_lock(&d->lock);
	*info = (struct mwp_mr_info){ .iova = mr->iova, .access = mr->access,
				      .bound_mws = mr->bound_mws };
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int
mwp_mw_query_info(const struct ibv_mw *ibmw, struct mwp_mw_info *info)
{
	const struct mwp_mw *mw = to_mmw(ibmw);
	struct mwp_dev *d;
	bool valid;

	if (ibmw == NULL || info == NULL)
		return EINVAL;
	d = to_mdev(ibmw->context);
	pthread_mutex_lock(&d->lock);
	valid = mw->state == MWP_MW_VALID;
	*info = (struct mwp_mw_info){ .rkey = mw->cur_rkey, .valid = valid,
				      .mr = valid ? &mw->mr->ibmr : NULL };
	pthread_mutex_unlock(&d->lock);
	return 0;
}

uint64_t
mwp_device_wr_api_posted(const struct ibv_context *ctx)
{
	return __atomic_load_n(&to_mdev(ctx)->wr_api_posted, __ATOMIC_RELAXED);
}

unsigned int
mwp_device_qp_count(struct ibv_context *ctx)
{
	struct mwp_dev *d = to_mdev(ctx);
	unsigned int n;

	pthread_mutex_lock(&d->lock);
	n = mwp_dev_qp_count(d);
	pthread_mutex_unlock(&d->lock);
	return n;
}

uint64_t
mwp_cq_overruns(const struct ibv_cq *cq)
{
	return cq == NULL ? 0 : __atomic_load_n(&to_mcq(cq)->overruns, __ATOMIC_RELAXED);
}
