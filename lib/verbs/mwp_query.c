/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The query API (mwp_query.h): what the mwpath program and other users
 * read of the verbs objects, so that nothing outside lib/ needs their
 * private layout.
 */
#include <errno.h>
#include <pthread.h>

#include "mwp_priv.h"
#include "mwp_query.h"

int
mwp_qp_query_info(const struct ibv_qp *ibqp, struct mwp_qp_info *info)
{
	const struct mwp_qp *qp;

	if (ibqp == NULL || info == NULL)
		return EINVAL;
	qp = to_mqp(ibqp);
	info->dest_qpn = qp->dest_qpn;
	info->sq_psn = qp->sq_psn;
	info->expected_psn = qp->resp.epsn;
	info->msn = qp->resp.msn;
	info->req_next_psn = qp->req.psn;
	info->req_unacked_psn = qp->req.una;
	info->port = qp->port;
	info->resp = qp->resp.st;
	info->req = qp->req.st;
	return 0;
}

int
mwp_mr_query_info(const struct ibv_mr *ibmr, struct mwp_mr_info *info)
{
	const struct mwp_mr *mr;
	struct mwp_dev *d;

	if (ibmr == NULL || info == NULL)
		return EINVAL;
	mr = to_mmr(ibmr);
	d = to_mdev(ibmr->context);
	pthread_mutex_lock(&d->lock);
	info->iova = mr->iova;
	info->access = mr->access;
	info->bound_mws = mr->bound_mws;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int
mwp_mw_query_info(const struct ibv_mw *ibmw, struct mwp_mw_info *info)
{
	const struct mwp_mw *mw;
	struct mwp_dev *d;

	if (ibmw == NULL || info == NULL)
		return EINVAL;
	mw = to_mmw(ibmw);
	d = to_mdev(ibmw->context);
	pthread_mutex_lock(&d->lock);
	info->rkey = mw->cur_rkey;
	info->valid = mw->state == MWP_MW_VALID;
	info->mr = info->valid ? &mw->mr->ibmr : NULL;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

uint64_t
mwp_cq_overruns(const struct ibv_cq *cq)
{
	return cq == NULL ? 0 : __atomic_load_n(&to_mcq(cq)->overruns, __ATOMIC_RELAXED);
}
