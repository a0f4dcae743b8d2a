/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exported libibverbs functions mwpath defines: for a device, context
 * or object of mwpath's, mwpath's answer; for any other, the real one.
 * Names that <infiniband/verbs.h> also defines as macros are written in
 * parentheses.  docs/verbs-device.md lists what each does and what is not
 * supported yet (those fail with EOPNOTSUPP on mwpath's devices).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "mwp_ibv.h"

#define MWP_IBV_MAX_QP		4096
#define MWP_IBV_MAX_QP_WR	65536
#define MWP_IBV_MAX_CQE		MWP_MAX_CQE
#define MWP_IBV_MAX_RD_ATOM	16
#define MWP_IBV_MAX_SGE		MWP_MAX_SGE
#define MWP_IBV_MAX_SRQ_WR	65536

/* RoCE v2 in the private ibv_query_gid_type's numbering. */
#define GID_TYPE_SYSFS_ROCE_V2	1

/* ---- devices ---- */

/* A list is [the real list][devices...][NULL]: the program gets &[1]. */
struct ibv_device **
(ibv_get_device_list)(int *num)
{
	struct ibv_device **real = NULL, **out;
	struct mwp_ibv_dev *devs;
	unsigned int n = mwp_ibv_devices(&devs);
	int nb_real = 0, k = 0;

	if (mwp_ibv_real_init() == 0)
		real = mwp_ibv_real.get_device_list(&nb_real);
	if (real == NULL)
		nb_real = 0;
	out = calloc((size_t)nb_real + n + 2, sizeof(*out));
	if (out == NULL) {
		if (real != NULL)
			mwp_ibv_real.free_device_list(real);
		errno = ENOMEM;
		return NULL;
	}
	out[k++] = (struct ibv_device *)real;
	for (int i = 0; i < nb_real; i++)
		out[k++] = real[i];
	for (unsigned int i = 0; i < n; i++)
		out[k++] = &devs[i].dev;
	if (num != NULL)
		*num = k - 1;
	return out + 1;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	struct ibv_device **real;

	if (list == NULL)
		return;
	real = (struct ibv_device **)list[-1];
	if (real != NULL)
		mwp_ibv_real.free_device_list(real);
	free(list - 1);
}

const char *
ibv_get_device_name(struct ibv_device *dev)
{
	if (mwp_ibv_dev_of(dev) != NULL)
		return dev->name;
	return mwp_ibv_real.get_device_name(dev);
}

__be64
ibv_get_device_guid(struct ibv_device *dev)
{
	const struct mwp_ibv_dev *d = mwp_ibv_dev_of(dev);

	return d != NULL ? d->guid : mwp_ibv_real.get_device_guid(dev);
}

int
ibv_get_device_index(struct ibv_device *dev)
{
	/* no kernel index: what a kernel without them answers */
	return mwp_ibv_dev_of(dev) != NULL ? -1 : mwp_ibv_real.get_device_index(dev);
}

/* the extended ops (below, with the queries) */
static int ext_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a,
			  size_t size);
static int ext_query_device(struct ibv_context *ctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *a, size_t size);

/* poll_cq of mwpath's contexts: the datapath's turn, then the CQ */
static int (*lib_poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);

static int
poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	mwp_ibv_app_poll(mwp_ibv_ctx_dev(cq->context));
	return lib_poll_cq(cq, n, wc);
}

/* req_notify_cq of mwpath's contexts: a program that arms a CQ is about
 * to wait for its event, so the progress thread stands aside no longer */
static int (*lib_req_notify_cq)(struct ibv_cq *cq, int solicited_only);

static int
req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	int ret = lib_req_notify_cq(cq, solicited_only);

	mwp_ibv_app_waits(mwp_ibv_ctx_dev(cq->context));
	return ret;
}

struct ibv_context *
ibv_open_device(struct ibv_device *dev)
{
	struct mwp_ibv_dev *d = mwp_ibv_dev_of(dev);
	struct ibv_context *ctx;

	if (d == NULL)
		return mwp_ibv_real.open_device(dev);
	ctx = mwp_ibv_open(d);
	if (ctx != NULL && ctx->ops.poll_cq != poll_cq) {
		struct verbs_context *v = verbs_get_ctx(ctx);

		lib_poll_cq = ctx->ops.poll_cq;
		ctx->ops.poll_cq = poll_cq;
		lib_req_notify_cq = ctx->ops.req_notify_cq;
		ctx->ops.req_notify_cq = req_notify_cq;
		v->query_port = ext_query_port;
		v->query_device_ex = ext_query_device;
		v->create_srq_ex = mwp_ibv_create_srq_ex;
		v->create_cq_ex = mwp_ibv_create_cq_ex;
		v->create_qp_ex = mwp_ibv_create_qp_ex;
	}
	return ctx;
}

int
ibv_close_device(struct ibv_context *ctx)
{
	struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);

	return d != NULL ? mwp_ibv_close(d) : mwp_ibv_real.close_device(ctx);
}

/* ---- queries ---- */

int
ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	const struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);
	const uint32_t keys = d != NULL && d->conf.max_keys != 0 ? d->conf.max_keys : 65536;

	if (d == NULL)
		return mwp_ibv_real.query_device(ctx, a);
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "mwpath %s", mwp_version());
	a->node_guid = d->guid;
	a->sys_image_guid = d->guid;
	a->max_mr_size = UINT64_C(1) << 31;
	a->page_size_cap = 4096;
	a->vendor_id = 0xffffff;	/* no IEEE OUI: what rxe and siw say */
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = MWP_IBV_MAX_QP;
	a->max_qp_wr = MWP_IBV_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
			      IBV_DEVICE_SRQ_RESIZE;
	a->max_sge = MWP_IBV_MAX_SGE;
	a->max_sge_rd = MWP_IBV_MAX_SGE;
	a->max_cq = MWP_IBV_MAX_QP;
	a->max_cqe = MWP_IBV_MAX_CQE;
	a->max_mr = (int)keys;
	a->max_pd = MWP_IBV_MAX_QP;
	a->max_ah = MWP_IBV_MAX_QP * 16;
	a->max_srq = MWP_IBV_MAX_QP;
	a->max_srq_wr = MWP_IBV_MAX_SRQ_WR;
	a->max_srq_sge = MWP_IBV_MAX_SGE;
	a->max_qp_rd_atom = MWP_IBV_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = MWP_IBV_MAX_RD_ATOM;
	a->max_res_rd_atom = MWP_IBV_MAX_QP * MWP_IBV_MAX_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_mw = (int)keys;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	return 0;
}

/* The port's attributes up to size bytes of a: the compat struct's
 * fields for the exported ibv_query_port (a caller built against an older
 * verbs.h passes that much; the inline clears the rest), all of them for
 * the extended op. */
static int
port_attr(const struct mwp_ibv_dev *d, uint8_t port, struct ibv_port_attr *a, size_t size)
{
	if (port != 1)
		return EINVAL;
	memset(a, 0, RTE_MIN(size, sizeof(*a)));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = (enum ibv_mtu)(rte_bsf32(d->pc.mtu) - 7);
	a->gid_tbl_len = (int)d->nb_gids;
	a->port_cap_flags = IBV_PORT_CM_SUP;
	a->max_msg_sz = UINT32_C(1) << 31;
	a->pkey_tbl_len = 1;
	a->active_width = 1;	/* 1x */
	a->active_speed = 32;	/* EDR, 25 Gb/s a lane */
	a->phys_state = 5;	/* LinkUp */
	a->max_vl_num = 1;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	if (size >= sizeof(*a)) {
		a->flags = 0;
		a->port_cap_flags2 = 0;
	}
	return 0;
}

int
(ibv_query_port)(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *compat)
{
	const struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);

	if (d == NULL)
		return mwp_ibv_real.query_port(ctx, port, compat);
	return port_attr(d, port, (struct ibv_port_attr *)compat,
			 offsetof(struct ibv_port_attr, flags));
}

/* The extended ops libibverbs' inline verbs call on mwpath's contexts. */
static int
ext_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t size)
{
	return port_attr(mwp_ibv_ctx_dev(ctx), port, a, size);
}

static int
ext_query_device(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
		 struct ibv_device_attr_ex *a, size_t size)
{
	/* IB_UVERBS_DEVICE_ATOMIC_WRITE of the kernel's uapi ib_user_verbs.h
	 * (bit 40 of device_cap_flags_ex; rxe sets it as
	 * IB_DEVICE_ATOMIC_WRITE): RDMA ATOMIC WRITE is supported.  rdma-core
	 * 44's copy of the header predates it, hence the number. */
	const uint64_t atomic_write = UINT64_C(1) << 40;
	int ret;

	if (input != NULL && input->comp_mask != 0)
		return EINVAL;
	if (size < offsetof(struct ibv_device_attr_ex, comp_mask) + sizeof(a->comp_mask))
		return EINVAL;
	memset(a, 0, RTE_MIN(size, sizeof(*a)));
	ret = ibv_query_device(ctx, &a->orig_attr);
	if (ret != 0)
		return ret;
	if (size >= offsetof(struct ibv_device_attr_ex, device_cap_flags_ex) +
		    sizeof(a->device_cap_flags_ex))
		a->device_cap_flags_ex = a->orig_attr.device_cap_flags | atomic_write;
	if (size >= offsetof(struct ibv_device_attr_ex, phys_port_cnt_ex) +
		    sizeof(a->phys_port_cnt_ex))
		a->phys_port_cnt_ex = a->orig_attr.phys_port_cnt;
	return 0;
}

int
ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	const struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);

	if (d == NULL)
		return mwp_ibv_real.query_gid(ctx, port, index, gid);
	if (port != 1 || index < 0 || (unsigned int)index >= MWP_IBV_MAX_GIDS)
		return -1;
	/* an empty entry reads as zeros, as on a NIC */
	if ((unsigned int)index < d->nb_gids)
		*gid = d->gid[index];
	else
		memset(gid, 0, sizeof(*gid));
	return 0;
}

int
ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index, int *type)
{
	const struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);

	if (d == NULL)
		return mwp_ibv_real.query_gid_type(ctx, port, index, type);
	if (port != 1 || index >= d->nb_gids) {
		errno = EINVAL;
		return -1;
	}
	*type = GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

static void
gid_entry(const struct mwp_ibv_dev *d, uint32_t index, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->gid = d->gid[index];
	e->gid_index = index;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;	/* a DPDK port, not a kernel netdev */
}

int
_ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t size)
{
	const struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);

	if (d == NULL)
		return mwp_ibv_real.query_gid_ex(ctx, port, index, entry, flags, size);
	if (flags != 0 || size < sizeof(*entry))
		return EINVAL;
	if (port != 1 || index >= d->nb_gids)
		return ENODATA;
	gid_entry(d, index, entry);
	return 0;
}

ssize_t
_ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries, size_t max,
		     uint32_t flags, size_t size)
{
	const struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);

	if (d == NULL)
		return mwp_ibv_real.query_gid_table(ctx, entries, max, flags, size);
	if (flags != 0 || size < sizeof(*entries))
		return -EINVAL;
	if (max < d->nb_gids)
		return -EINVAL;
	for (uint32_t i = 0; i < d->nb_gids; i++)
		gid_entry(d, i, (struct ibv_gid_entry *)((uint8_t *)entries + i * size));
	return d->nb_gids;
}

int
ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	if (mwp_ibv_ctx_dev(ctx) == NULL)
		return mwp_ibv_real.query_pkey(ctx, port, index, pkey);
	if (port != 1 || index != 0)
		return -1;
	*pkey = rte_cpu_to_be_16(0xffff);	/* the default partition */
	return 0;
}

int
ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	if (mwp_ibv_ctx_dev(ctx) == NULL)
		return mwp_ibv_real.get_pkey_index(ctx, port, pkey);
	return port == 1 && pkey == rte_cpu_to_be_16(0xffff) ? 0 : -1;
}

/* ---- protection domains and memory regions ---- */

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *ctx)
{
	if (mwp_ibv_ctx_dev(ctx) == NULL)
		return mwp_ibv_real.alloc_pd(ctx);
	return mwp_alloc_pd(ctx);
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	if (mwp_ibv_ctx_dev(pd->context) == NULL)
		return mwp_ibv_real.dealloc_pd(pd);
	return mwp_ibv_ret(mwp_dealloc_pd(pd));
}

/* Access bits a program may pass that ask for nothing mwpath must do:
 * relaxed ordering (perftest sets it) is a hint. */
#define MR_ACCESS_HINTS	IBV_ACCESS_RELAXED_ORDERING

static struct ibv_mr *
reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access)
{
	return mwp_reg_mr_iova(pd, addr, len, iova, (int)(access & ~MR_ACCESS_HINTS));
}

struct ibv_mr *
(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	if (mwp_ibv_ctx_dev(pd->context) == NULL)
		return mwp_ibv_real.reg_mr(pd, addr, len, access);
	return reg_mr(pd, addr, len, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *
(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
	if (mwp_ibv_ctx_dev(pd->context) == NULL)
		return mwp_ibv_real.reg_mr_iova(pd, addr, len, iova, access);
	return reg_mr(pd, addr, len, iova, (unsigned int)access);
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
		 unsigned int access)
{
	if (mwp_ibv_ctx_dev(pd->context) == NULL)
		return mwp_ibv_real.reg_mr_iova2(pd, addr, len, iova, access);
	return reg_mr(pd, addr, len, iova, access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	if (mwp_ibv_ctx_dev(mr->context) == NULL)
		return mwp_ibv_real.dereg_mr(mr);
	return mwp_ibv_ret(mwp_dereg_mr(mr));
}

/* ---- completion queues ---- */

int
mwp_ibv_cq_init(struct ibv_cq *cq, void *cq_context, struct ibv_comp_channel *channel)
{
	cq->cq_context = cq_context;
	cq->channel = NULL;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
	if (channel != NULL) {
		int ret = mwp_ibv_channel_attach(cq, channel);

		if (ret != 0) {
			mwp_destroy_cq(cq);
			return ret;
		}
	}
	return 0;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq *cq;
	int ret;

	if (mwp_ibv_ctx_dev(ctx) == NULL)
		return mwp_ibv_real.create_cq(ctx, cqe, cq_context, channel, comp_vector);
	if (comp_vector < 0 || comp_vector >= ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = mwp_create_cq(ctx, cqe);
	if (cq == NULL)
		return NULL;
	ret = mwp_ibv_cq_init(cq, cq_context, channel);
	if (ret != 0) {
		errno = ret;
		return NULL;
	}
	return cq;
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	struct ibv_comp_channel *ch;
	int ret;

	if (mwp_ibv_ctx_dev(cq->context) == NULL)
		return mwp_ibv_real.destroy_cq(cq);
	mwp_ibv_async_forget(mwp_ibv_ctx_dev(cq->context), cq, &cq->mutex, &cq->cond,
			     &cq->async_events_completed);
	ch = cq->channel;
	mwp_ibv_channel_detach(cq);
	ret = mwp_destroy_cq(cq);
	if (ret != 0 && ch != NULL)
		mwp_ibv_channel_attach(cq, ch);	/* still in use: as it was */
	return mwp_ibv_ret(ret);
}

/* ---- queue pairs ---- */

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(pd->context);

	if (d == NULL)
		return mwp_ibv_real.create_qp(pd, attr);
	/* types verbs knows and mwpath has not: not supported (what test
	 * suites skip on), not invalid */
	if (attr->qp_type == IBV_QPT_RAW_PACKET ||
	    attr->qp_type == IBV_QPT_XRC_SEND || attr->qp_type == IBV_QPT_XRC_RECV ||
	    attr->qp_type == IBV_QPT_DRIVER) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mwp_ibv_qp_caps(&attr->cap);
	return mwp_ibv_qp_attach(d, mwp_create_qp(pd, attr));
}

void
mwp_ibv_qp_caps(struct ibv_qp_cap *cap)
{
	/* no SGE asked for is one (rdma-core's providers make one) */
	if (cap->max_send_sge == 0)
		cap->max_send_sge = 1;
	if (cap->max_recv_sge == 0)
		cap->max_recv_sge = 1;
}

struct ibv_qp *
mwp_ibv_qp_attach(struct mwp_ibv_dev *d, struct ibv_qp *qp)
{
	int ret;

	if (qp == NULL)
		return NULL;
	/* on the port, with its datapath stopped */
	mwp_ibv_pause(d);
	ret = mwp_port_attach_qp(d->port, qp);
	mwp_ibv_resume(d);
	if (ret != 0) {
		mwp_destroy_qp(qp);
		errno = ret;
		return NULL;
	}
	qp->events_completed = 0;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	return qp;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	if (mwp_ibv_ctx_dev(qp->context) == NULL)
		return mwp_ibv_real.modify_qp(qp, attr, mask);
	return mwp_ibv_ret(mwp_modify_qp(qp, attr, mask));
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
	     struct ibv_qp_init_attr *init)
{
	if (mwp_ibv_ctx_dev(qp->context) == NULL)
		return mwp_ibv_real.query_qp(qp, attr, mask, init);
	return mwp_ibv_ret(mwp_query_qp(qp, attr, mask, init));
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(qp->context);
	int ret;

	if (d == NULL)
		return mwp_ibv_real.destroy_qp(qp);
	mwp_ibv_async_forget(d, qp, &qp->mutex, &qp->cond, &qp->events_completed);
	mwp_ibv_pause(d);
	ret = mwp_destroy_qp(qp);
	mwp_ibv_resume(d);
	return mwp_ibv_ret(ret);
}
