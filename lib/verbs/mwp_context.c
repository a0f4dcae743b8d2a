/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device as a program opens it (mwp_verbs.h): the software
 * ibv_context, whose ops the inline verbs of <infiniband/verbs.h> call;
 * its close, which frees whatever the program left of every kind of
 * object; and mwp_poll, which runs the send queues no engine runs.  The
 * index above the objects, each of which builds on the device's base
 * (mwp_device.c) alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mwp_errno.h"
#include "mwp_post.h"
#include "mwp_priv.h"
#include "mwp_srq.h"

/* The device's ops: the inline verbs of <infiniband/verbs.h> call these. */
static const struct ibv_context_ops mwp_ops = {
	.alloc_mw = mwp_op_alloc_mw,
	.bind_mw = mwp_op_bind_mw,
	.dealloc_mw = mwp_op_dealloc_mw,
	.poll_cq = mwp_op_poll_cq,
	.req_notify_cq = mwp_op_req_notify_cq,
	.post_send = mwp_op_post_send,
	.post_recv = mwp_op_post_recv,
	.post_srq_recv = mwp_op_post_srq_recv,
};

struct ibv_context *
mwp_open_device(const struct mwp_device_attr *attr)
{
	struct mwp_dev *d = mwp_dev_create(attr);

	if (d == NULL)
		return NULL;
	snprintf(d->ibdev.name, sizeof(d->ibdev.name), "mwpath%u", d->id);
	snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "mwpath%u", d->id);
	d->ibdev.node_type = IBV_NODE_RNIC;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	d->vctx.sz = sizeof(d->vctx);
	d->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	d->vctx.context.device = &d->ibdev;
	d->vctx.context.ops = mwp_ops;
	d->vctx.context.cmd_fd = -1;
	d->vctx.context.async_fd = -1;
	pthread_mutex_init(&d->vctx.context.mutex, NULL);
	return &d->vctx.context;
}

int
mwp_close_device(struct ibv_context *ctx)
{
	struct mwp_dev *d = to_mdev(ctx);
	struct mwp_dev_obj *o;
	struct mwp_qp *qp;

	if (__atomic_load_n(&d->nb_readers, __ATOMIC_RELAXED) != 0)
		return EBUSY;
	while ((qp = TAILQ_FIRST(&d->qps)) != NULL)
		mwp_destroy_qp(&qp->ibqp);
	for (uint32_t i = 0; i < d->max_keys; i++) {
		struct mwp_mw *mw = d->mw_by_idx[i];

		if (mw != NULL) {
			mwp_mw_unbind_locked(d, mw);
			free(mw);
		}
	}
	for (uint32_t i = 0; i < d->max_keys; i++)
		free(d->mr_by_idx[i]);
	/* their QPs, regions and windows are gone */
	while ((o = TAILQ_FIRST(&d->cqs)) != NULL) {
		o->users = 0;
		mwp_dev_obj_del(o);
	}
	while ((o = TAILQ_FIRST(&d->srqs)) != NULL) {
		o->users = 0;
		mwp_dev_obj_del(o);
	}
	while ((o = TAILQ_FIRST(&d->ahs)) != NULL)
		mwp_dev_obj_del(o);
	while ((o = TAILQ_FIRST(&d->pds)) != NULL) {
		o->users = 0;
		mwp_dev_obj_del(o);
	}
	mwp_dev_free(d);
	return 0;
}

int
mwp_poll(struct ibv_context *ctx)
{
	struct mwp_dev *d = to_mdev(ctx);
	struct mwp_qp *qp;
	int work = 0;

	/* every QP run by a running engine (the mwpath program's steady
	 * state): not even the lock, which the engines try */
	if (__atomic_load_n(&d->nb_polled, __ATOMIC_ACQUIRE) == 0)
		return 0;
	pthread_mutex_lock(&d->lock);
	TAILQ_FOREACH(qp, &d->qps, next) {
		/* a running engine runs its own QPs */
		if (mwp_sched_running(qp))
			continue;
		work += mwp_sq_run(qp, UINT32_MAX);
	}
	pthread_mutex_unlock(&d->lock);
	return work;
}
