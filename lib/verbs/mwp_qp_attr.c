/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A QP's attributes and states: ibv_modify_qp's transitions with the
 * attributes each requires (the numeric ones and their ranges in one
 * table, num_attrs) and what each transition does to the send queue,
 * the receives, the requester and the responder; ibv_query_qp.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mwp_qp.h"
#include "mwp_rq.h"
#include "mwp_sched.h"
#include "mwp_sq.h"
#include "mwp_verbs.h"

/* RTR -> RTS: the requester's first PSN and its retry counts (before
 * anything can be posted). */
static void
req_start(struct mwp_qp *qp)
{
	struct mwp_req *r = &qp->req;

	r->psn = r->una = r->tx_psn = r->sent_psn = qp->sq_psn;
	r->tx_pos = qp->sq_tail;
	r->rd_out = 0;
	r->retry_left = qp->retry_cnt;
	r->rnr_left = qp->rnr_retry;
	r->rnr_wait = 0;
	r->retrying = 0;
	r->have_mac = 0;
}

/* Attributes each transition requires (IBA 11.2.4.2; ibv_modify_qp(3)). */
static int
required_mask(enum ibv_qp_type t, enum ibv_qp_state from, enum ibv_qp_state to)
{
	/* UD: a Q_Key, no peer; its messages fit the port's MTU */
	if (t == IBV_QPT_UD) {
		if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
			return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		if (from == IBV_QPS_RTR && to == IBV_QPS_RTS)
			return IBV_QP_STATE | IBV_QP_SQ_PSN;
		return IBV_QP_STATE;
	}
	if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       IBV_QP_ACCESS_FLAGS;
	if (from == IBV_QPS_INIT && to == IBV_QPS_RTR)
		return t == IBV_QPT_RC ?
		       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER :
		       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN;
	if (from == IBV_QPS_RTR && to == IBV_QPS_RTS)
		return t == IBV_QPT_RC ?
		       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC :
		       IBV_QP_STATE | IBV_QP_SQ_PSN;
	return IBV_QP_STATE;
}

static bool
transition_ok(enum ibv_qp_state from, enum ibv_qp_state to)
{
	switch (to) {
	case IBV_QPS_RESET:
	case IBV_QPS_ERR:
		return true;
	case IBV_QPS_INIT:
		return from == IBV_QPS_RESET || from == IBV_QPS_INIT;
	case IBV_QPS_RTR:
		return from == IBV_QPS_INIT;
	case IBV_QPS_RTS:
		return from == IBV_QPS_RTR || from == IBV_QPS_RTS;
	default:
		return false;		/* SQD, SQE: not supported */
	}
}

/*
 * The attributes that are one number, kept as given: the mask bit, the
 * range IBA and verbs allow, and where ibv_qp_attr has it and the QP keeps
 * it (a field of the same type).  pkey_index is checked, not kept: the
 * P_Key table has one entry.
 */
struct qp_num_attr {
	int bit;
	uint32_t lo, hi;
	uint16_t from, to;	/* offsets in ibv_qp_attr and mwp_qp */
	uint8_t size;
	bool kept;
};

#define ATTR_SIZE(f) sizeof(((struct ibv_qp_attr *)NULL)->f)
/* f in ibv_qp_attr, k in mwp_qp: the same size, or the build fails */
#define KEPT(bit, f, k, lo, hi) { (bit), (lo), (hi), offsetof(struct ibv_qp_attr, f),	\
	offsetof(struct mwp_qp, k) + 0 * sizeof(char[ATTR_SIZE(f) ==			\
						 sizeof(((struct mwp_qp *)NULL)->k) ? 1 : -1]), \
	ATTR_SIZE(f), true }
#define CHECKED(bit, f, lo, hi) { (bit), (lo), (hi), offsetof(struct ibv_qp_attr, f), 0,	\
	ATTR_SIZE(f), false }

static const struct qp_num_attr num_attrs[] = {
	KEPT(IBV_QP_PORT, port_num, port_num, 1, 1),	/* a device has one port */
	CHECKED(IBV_QP_PKEY_INDEX, pkey_index, 0, 0),
	KEPT(IBV_QP_PATH_MTU, path_mtu, path_mtu, IBV_MTU_256, IBV_MTU_4096),
	KEPT(IBV_QP_DEST_QPN, dest_qp_num, dest_qpn, 0, ROCE_PSN_MASK),	/* 24 bits */
	KEPT(IBV_QP_RQ_PSN, rq_psn, rq_psn, 0, ROCE_PSN_MASK),
	KEPT(IBV_QP_SQ_PSN, sq_psn, sq_psn, 0, ROCE_PSN_MASK),
	KEPT(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic, max_dest_rd_atomic, 0, UINT8_MAX),
	KEPT(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic, max_rd_atomic, 0, UINT8_MAX),
	/* IBA: a 5-bit timeout, 3-bit retry counts */
	KEPT(IBV_QP_TIMEOUT, timeout, timeout, 0, 31),
	KEPT(IBV_QP_RETRY_CNT, retry_cnt, retry_cnt, 0, 7),
	KEPT(IBV_QP_RNR_RETRY, rnr_retry, rnr_retry, 0, 7),
	KEPT(IBV_QP_QKEY, qkey, qkey, 0, UINT32_MAX),
};

static uint32_t
num_attr_value(const struct ibv_qp_attr *a, const struct qp_num_attr *t)
{
	const void *p = (const char *)a + t->from;

	switch (t->size) {
	case 1:
		return *(const uint8_t *)p;
	case 2:
		return *(const uint16_t *)p;
	default:
		return *(const uint32_t *)p;
	}
}

static int
check_attrs(const struct mwp_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	const unsigned int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	for (size_t i = 0; i < RTE_DIM(num_attrs); i++) {
		const struct qp_num_attr *t = &num_attrs[i];

		if (mask & t->bit) {
			uint32_t v = num_attr_value(a, t);

			if (v < t->lo || v > t->hi)
				return EINVAL;
		}
	}
	if ((mask & IBV_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~acc))
		return EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) && qp->ibqp.qp_type == IBV_QPT_UC &&
	    (a->qp_access_flags & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
		return EINVAL;
	/* RoCE addresses by GID: the global route is mandatory. */
	if ((mask & IBV_QP_AV) && !a->ah_attr.is_global)
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != qp->ibqp.state)
		return EINVAL;
	return 0;
}

static void
apply_attrs(struct mwp_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	for (size_t i = 0; i < RTE_DIM(num_attrs); i++) {
		const struct qp_num_attr *t = &num_attrs[i];

		if ((mask & t->bit) && t->kept)
			memcpy((char *)qp + t->to, (const char *)a + t->from, t->size);
	}
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV) {
		memcpy(qp->peer_gid, a->ah_attr.grh.dgid.raw, 16);
		qp->peer_ipv4 = memcmp(qp->peer_gid, v4mapped, 12) == 0;
		qp->tclass = a->ah_attr.grh.traffic_class;
	}
	if (mask & IBV_QP_RQ_PSN)
		qp->resp.epsn = a->rq_psn;	/* the responder expects it next */
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer & 0x1f;
}

int
mwp_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask)
{
	struct mwp_qp *qp = to_mqp(ibqp);
	enum ibv_qp_state from, to;
	int need, ret;

	pthread_mutex_lock(&qp->dev->lock);
	from = ibqp->state;
	to = (mask & IBV_QP_STATE) ? a->qp_state : from;
	need = required_mask(ibqp->qp_type, from, to);
	if (!transition_ok(from, to) || (mask & need) != need) {
		pthread_mutex_unlock(&qp->dev->lock);
		return EINVAL;
	}
	ret = check_attrs(qp, a, mask);
	if (ret != 0) {
		pthread_mutex_unlock(&qp->dev->lock);
		return ret;
	}
	apply_attrs(qp, a, mask);
	if ((to == IBV_QPS_ERR || to == IBV_QPS_RESET) && qp->port != NULL &&
	    from != IBV_QPS_RESET && from != IBV_QPS_INIT) {
		/*
		 * The responder state belongs to the lcore answering this
		 * QP.  Stop it (a packet sees ERR and leaves the state alone),
		 * wait until every lcore has passed a quiescent point, and
		 * only then touch the state here -- outside the lock, which
		 * an lcore may be waiting for.
		 */
		__atomic_store_n(&ibqp->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&qp->dev->lock);
		rte_rcu_qsbr_synchronize(qp->dev->rcu, RTE_QSBR_THRID_INVALID);
		pthread_mutex_lock(&qp->dev->lock);
		/* the receive a SEND in progress held: flushed (verbs) */
		if (to == IBV_QPS_ERR && qp->resp.recv_held) {
			qp->resp.recv_held = 0;
			qp->resp.in_msg = 0;
			mwp_rq_done(qp, &qp->resp.recv, IBV_WC_RECV, 0, 0, 0,
					 IBV_WC_WR_FLUSH_ERR);
		}
	}
	if (to == IBV_QPS_RESET) {
		/* its engine drops the QP's timers and lists first */
		if (qp->owner != NULL)
			mwp_sched_qp_op(qp, MWP_SCHED_RESET);
		mwp_qp_req_clear(qp);
		mwp_sq_reset(qp);	/* drops work without completions */
		mwp_qp_resp_clear(qp);
		/* and its completions not yet polled (its flushes, its
		 * errors), as mlx4 and mlx5 clean their CQs: a QP taken
		 * back to RTS starts afresh */
		mwp_cq_purge_qp(qp->scq, ibqp->qp_num);
		if (qp->rcq != qp->scq)
			mwp_cq_purge_qp(qp->rcq, ibqp->qp_num);
	}
	if (from == IBV_QPS_RTR && to == IBV_QPS_RTS)
		req_start(qp);	/* nothing can be posted before this */
	__atomic_store_n(&ibqp->state, to, __ATOMIC_RELEASE);
	if (to == IBV_QPS_ERR && from != IBV_QPS_ERR)
		mwp_qp_err_events(qp);
	/* ERR: its runner flushes what is posted and outstanding */
	if (to == IBV_QPS_ERR)
		mwp_sched_doorbell(qp);
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}

int
mwp_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int attr_mask,
	     struct ibv_qp_init_attr *init)
{
	struct mwp_qp *qp = to_mqp(ibqp);
	enum ibv_qp_state state;

	RTE_SET_USED(attr_mask);
	if (a == NULL || init == NULL)
		return EINVAL;
	pthread_mutex_lock(&qp->dev->lock);
	state = __atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE);
	*a = (struct ibv_qp_attr){
		.qp_state = state, .cur_qp_state = state,
		.path_mtu = qp->path_mtu, .path_mig_state = IBV_MIG_MIGRATED,
		.rq_psn = qp->rq_psn, .sq_psn = qp->sq_psn,
		.dest_qp_num = qp->dest_qpn,
		.qp_access_flags = (int)qp->access_flags,
		.cap = qp->cap,
		.ah_attr = { .is_global = 1, .grh.hop_limit = 64, .port_num = qp->port_num },
		.port_num = qp->port_num,
		.max_rd_atomic = qp->max_rd_atomic,
		.max_dest_rd_atomic = qp->max_dest_rd_atomic,
		.min_rnr_timer = qp->min_rnr_timer,
		.timeout = qp->timeout, .retry_cnt = qp->retry_cnt, .rnr_retry = qp->rnr_retry,
		.qkey = qp->qkey,
	};
	memcpy(a->ah_attr.grh.dgid.raw, qp->peer_gid, sizeof(a->ah_attr.grh.dgid.raw));
	a->ah_attr.grh.traffic_class = qp->tclass;
	*init = (struct ibv_qp_init_attr){
		.qp_context = ibqp->qp_context,
		.send_cq = ibqp->send_cq, .recv_cq = ibqp->recv_cq,
		.cap = qp->cap,
		.qp_type = ibqp->qp_type,
		.sq_sig_all = qp->sq_sig_all,
	};
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}
