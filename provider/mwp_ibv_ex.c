/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended verbs of mwpath's devices: the ops behind libibverbs'
 * inline ibv_create_cq_ex and ibv_create_qp_ex (the device's
 * verbs_context names them), and the exported ibv_qp_to_qp_ex,
 * ibv_rereg_mr and ibv_query_qp_data_in_order.  Polling and posting
 * through them is the library's (lib/verbs/mwp_cq_ex.c, mwp_wr.c); here
 * each extended CQ's start_poll and next_poll first give the datapath its
 * turn, as ibv_poll_cq does.
 */
#include <errno.h>

#include "mwp_ibv.h"

/* the library's poll functions of extended CQs (the same for all) */
static int (*lib_start_poll)(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr);
static int (*lib_next_poll)(struct ibv_cq_ex *cq);

static int
start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	mwp_ibv_app_poll(mwp_ibv_ctx_dev(cq->context));
	return lib_start_poll(cq, attr);
}

static int
next_poll(struct ibv_cq_ex *cq)
{
	int ret = lib_next_poll(cq);

	/* none left of what was there: the datapath may have more */
	if (ret == ENOENT && mwp_ibv_app_poll(mwp_ibv_ctx_dev(cq->context)) != 0)
		ret = lib_next_poll(cq);
	return ret;
}

struct ibv_cq_ex *
mwp_ibv_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cq;
	int ret;

	if (attr->comp_vector >= (uint32_t)ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = mwp_create_cq_ex(ctx, attr);
	if (cq == NULL)
		return NULL;
	ret = mwp_ibv_cq_init(ibv_cq_ex_to_cq(cq), attr->cq_context, attr->channel);
	if (ret != 0) {
		errno = ret;
		return NULL;
	}
	if (cq->start_poll != start_poll) {
		lib_start_poll = cq->start_poll;
		lib_next_poll = cq->next_poll;
	}
	cq->start_poll = start_poll;
	cq->next_poll = next_poll;
	return cq;
}

struct ibv_qp *
mwp_ibv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	mwp_ibv_qp_caps(&attr->cap);
	return mwp_ibv_qp_attach(mwp_ibv_ctx_dev(ctx), mwp_create_qp_ex(ctx, attr));
}

struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	static struct ibv_qp_ex *(*real)(struct ibv_qp *qp);

	if (mwp_ibv_ctx_dev(qp->context) != NULL)
		return mwp_qp_to_qp_ex(qp);
	if (real == NULL)
		*(void **)&real = mwp_ibv_real_sym("ibv_qp_to_qp_ex", "IBVERBS_1.6");
	return real(qp);
}

/* libibverbs' checks of its arguments, its return codes, then mwpath's
 * rereg (the keys stay; mwp_rereg_mr). */
int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
	     int access)
{
	static int (*real)(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			   size_t length, int access);
	int ret;

	if (mwp_ibv_ctx_dev(mr->context) == NULL) {
		if (real == NULL)
			*(void **)&real = mwp_ibv_real_sym("ibv_rereg_mr", "IBVERBS_1.1");
		return real(mr, flags, pd, addr, length, access);
	}
	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (length == 0 || addr == NULL)) ||
	    (access != 0 && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	ret = mwp_rereg_mr(mr, flags, pd, addr, length, access);
	if (ret != 0) {
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	return 0;
}

/* Whether a poller that sees a message's last byte in memory may trust
 * the bytes before it.  Not on mwpath: a packet's payload is copied with
 * memcpy, which may store its first bytes last (glibc's does, for large
 * copies), so neither the whole message nor a 128-byte block is written
 * in order.  0, as rxe answers; no error. */
int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	static int (*real)(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);

	if (mwp_ibv_ctx_dev(qp->context) == NULL) {
		if (real == NULL)
			*(void **)&real = mwp_ibv_real_sym("ibv_query_qp_data_in_order",
							   "IBVERBS_1.14");
		return real(qp, op, flags);
	}
	return 0;
}

/* A context from a command descriptor (shared PDs and MRs between
 * processes): not for mwpath's devices, whose state lives in this
 * process's DPDK; EOPNOTSUPP, which programs and rdma-core's tests take
 * for "not supported".  Any other descriptor: libibverbs'. */
struct ibv_context *
ibv_import_device(int cmd_fd)
{
	static struct ibv_context *(*real)(int cmd_fd);

	if (mwp_ibv_fd_dev(cmd_fd) != NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (real == NULL)
		*(void **)&real = mwp_ibv_real_sym("ibv_import_device", "IBVERBS_1.10");
	return real(cmd_fd);
}
