/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs: creation, attachment to a port, the verbs state machine
 * with its attributes, destruction.  What ibv_post_send and
 * ibv_post_recv take is mwp_post.c's; the send queue runs in mwp_sq.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "mwp_errno.h"
#include "mwp_port.h"
#include "mwp_qp.h"
#include "mwp_sched.h"
#include "mwp_verbs.h"

static unsigned int next_ring_id;

static struct rte_ring *
make_ring(const char *what, size_t esize, uint32_t count, int socket,
	  unsigned int flags)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "mwp_%s%u", what,
		 __atomic_fetch_add(&next_ring_id, 1, __ATOMIC_RELAXED));
	return rte_ring_create_elem(name, (unsigned int)esize, count, socket,
				    flags | RING_F_EXACT_SZ);
}

static struct ibv_qp *create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a,
				uint32_t qpn);

struct ibv_qp *
mwp_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a)
{
	return create_qp(ibpd, a, 0);
}

struct ibv_qp *
mwp_create_qp_num(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a, uint32_t qpn)
{
	if (qpn < 2 || qpn > ROCE_PSN_MASK)
		return mwp_null_errno(EINVAL);
	return create_qp(ibpd, a, qpn);
}

static bool
qpn_in_use(const struct mwp_dev *d, uint32_t qpn)
{
	const struct mwp_qp *o;

	TAILQ_FOREACH(o, &d->qps, next)
		if (o->ibqp.qp_num == qpn)
			return true;
	return false;
}

/* A QP's memory, made or half made (the rings and the window). */
static void
free_qp(struct mwp_qp *qp)
{
	rte_ring_free(qp->sq);
	rte_ring_free(qp->rq);
	free(qp->swq);
	free(qp);
}

/* The responder's state as a QP in RESET has it: nothing but who it is. */
static void
resp_reset(struct mwp_qp *qp)
{
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->resp.own_pd = qp->ibqp.pd->handle;
	qp->resp.own_qpn = qp->ibqp.qp_num;
}

void
mwp_qp_req_clear(struct mwp_qp *qp)
{
	const struct mwp_req_stats st = qp->req.st;
	const mwp_timer_fn fn = qp->req.tmr.fn;

	memset(&qp->req, 0, sizeof(qp->req));
	mwp_timer_init(&qp->req.tmr, fn);
	qp->req.st = st;	/* counters live on */
}

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

/* qpn 0: the next free number from MWP_FIRST_QPN. */
static struct ibv_qp *
create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a, uint32_t qpn)
{
	struct mwp_dev *d = to_mdev(ibpd->context);
	struct ibv_qp_cap *cap = &a->cap;
	struct mwp_qp *qp;

	if ((a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC) ||
	    a->send_cq == NULL || a->recv_cq == NULL || a->srq != NULL ||
	    a->send_cq->context != ibpd->context ||
	    a->recv_cq->context != ibpd->context ||
	    cap->max_send_wr == 0 || cap->max_send_wr > 65536 ||
	    cap->max_recv_wr > 65536 || cap->max_send_sge > MWP_MAX_SGE ||
	    cap->max_recv_sge > MWP_MAX_SGE || cap->max_inline_data > MWP_MAX_INLINE)
		return mwp_null_errno(EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return mwp_null_errno(ENOMEM);
	qp->dev = d;
	qp->cap = *cap;
	qp->cap.max_recv_wr = RTE_MAX(cap->max_recv_wr, 1u);
	qp->sq_sig_all = a->sq_sig_all != 0;
	/* Posting may come from several threads; one thread executes. */
	qp->sq = make_ring("sq", sizeof(struct mwp_wqe), qp->cap.max_send_wr,
			   d->socket, RING_F_SC_DEQ);
	/* The responder lcore and the ERR flush may both take receives:
	 * HTS keeps that safe and allows peeking. */
	qp->rq = make_ring("rq", sizeof(struct mwp_rwqe), qp->cap.max_recv_wr,
			   d->socket, RING_F_MC_HTS_DEQ);
	/* the window holds every WQE from execution to completion */
	qp->swq_mask = rte_align32pow2(qp->cap.max_send_wr) - 1;
	qp->swq = calloc(qp->swq_mask + 1, sizeof(*qp->swq));
	if (qp->sq == NULL || qp->rq == NULL || qp->swq == NULL) {
		free_qp(qp);
		return mwp_null_errno(ENOMEM);
	}
	mwp_qp_req_clear(qp);
	qp->scq = to_mcq(a->send_cq);
	qp->rcq = to_mcq(a->recv_cq);
	qp->path_mtu = IBV_MTU_1024;

	pthread_mutex_lock(&d->lock);
	if (qpn != 0) {
		if (qpn_in_use(d, qpn)) {
			pthread_mutex_unlock(&d->lock);
			free_qp(qp);
			return mwp_null_errno(EEXIST);
		}
	} else {
		/* 24 bits: after 0xffffff comes the first again (0 and 1 are
		 * the special QPs of InfiniBand); or at random */
		do {
			if (!d->sequential) {
				qpn = MWP_FIRST_QPN +
				      mwp_rand_below(ROCE_PSN_MASK + 1 - MWP_FIRST_QPN);
				continue;
			}
			qpn = d->next_qpn;
			d->next_qpn = qpn >= ROCE_PSN_MASK ? MWP_FIRST_QPN : qpn + 1;
		} while (qpn_in_use(d, qpn));
	}
	qp->ibqp.context = ibpd->context;
	qp->ibqp.qp_context = a->qp_context;
	qp->ibqp.pd = ibpd;
	qp->ibqp.send_cq = a->send_cq;
	qp->ibqp.recv_cq = a->recv_cq;
	qp->ibqp.qp_num = qpn;
	qp->ibqp.handle = qp->ibqp.qp_num;
	qp->ibqp.state = IBV_QPS_RESET;
	qp->ibqp.qp_type = a->qp_type;
	resp_reset(qp);
	qp->transport = a->qp_type == IBV_QPT_RC ? ROCE_TRANSPORT_RC : ROCE_TRANSPORT_UC;
	qp->scq->obj.users++;
	qp->rcq->obj.users++;
	to_mpd(ibpd)->obj.users++;
	TAILQ_INSERT_TAIL(&d->qps, qp, next);
	pthread_mutex_unlock(&d->lock);
	return &qp->ibqp;
}

void
mwp_sched_adopt(struct mwp_qp *qp)
{
	const struct mwp_port *port = qp->port;
	const uint16_t n = RTE_MIN(port->conf.nb_queues, MWP_PORT_MAX_QUEUES);
	/* the QPs of a port are spread over the queues it is to have, by
	 * QPN (a peer's QPs to one port usually have consecutive numbers...
	 * ours do: round robin) */
	struct mwp_owner *o = port->owner[n > 1 ? qp->ibqp.qp_num % n : 0];

	if (qp->owner != NULL || o == NULL)
		return;
	qp->owner = o;
	mwp_sched_qp_op(qp, MWP_SCHED_ATTACH);
}

int
mwp_port_attach_qp(struct mwp_port *port, struct ibv_qp *ibqp)
{
	struct mwp_port_qp_slot *s = &port->qp[ibqp->qp_num & (MWP_PORT_QP_SLOTS - 1)];
	struct mwp_qp *qp = to_mqp(ibqp);
	struct mwp_dev *d = qp->dev;
	int ret = 0;

	if (port->ctx != NULL && port->ctx != ibqp->context)
		return EINVAL;
	pthread_mutex_lock(&d->lock);
	if (qp->port != NULL && qp->port != port) {
		ret = EINVAL;
	} else if (s->qp != NULL && s->qp != qp) {
		ret = EEXIST;
	} else if (port->owner[0] != NULL && port->owner[0]->sched->dev != NULL &&
		   port->owner[0]->sched->dev != d) {
		ret = EINVAL;
	} else {
		port->ctx = ibqp->context;
		port->keys = mwp_device_keys(ibqp->context);
		qp->port = port;
		s->qpn = ibqp->qp_num;
		s->qp = qp;
		/* the engine of its queue runs it from now on */
		mwp_sched_adopt(qp);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int
mwp_destroy_qp(struct ibv_qp *ibqp)
{
	struct mwp_qp *qp = to_mqp(ibqp);
	struct mwp_dev *d = qp->dev;

	pthread_mutex_lock(&d->lock);
	if (qp->port != NULL) {
		struct mwp_port_qp_slot *s =
			&qp->port->qp[ibqp->qp_num & (MWP_PORT_QP_SLOTS - 1)];

		if (s->qp == qp) {
			s->qp = NULL;
			s->qpn = 0;
		}
	}
	/* its engine lets go of it (timers, lists, doorbells) */
	if (qp->owner != NULL)
		mwp_sched_qp_op(qp, MWP_SCHED_DETACH);
	TAILQ_REMOVE(&d->qps, qp, next);
	qp->scq->obj.users--;
	qp->rcq->obj.users--;
	to_mpd(ibqp->pd)->obj.users--;
	pthread_mutex_unlock(&d->lock);
	/* an lcore may be answering it: free only once every lcore has
	 * passed a quiescent point since it left the port's table */
	if (qp->port != NULL)
		rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	free_qp(qp);
	return 0;
}

/* Attributes each transition requires (IBA 11.2.4.2; ibv_modify_qp(3)). */
static int
required_mask(enum ibv_qp_type t, enum ibv_qp_state from, enum ibv_qp_state to)
{
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
			mwp_cq_recv_done(qp, &qp->resp.recv, IBV_WC_RECV, 0, 0, 0,
					 IBV_WC_WR_FLUSH_ERR);
		}
	}
	if (to == IBV_QPS_RESET) {
		/* its engine drops the QP's timers and lists first */
		if (qp->owner != NULL)
			mwp_sched_qp_op(qp, MWP_SCHED_RESET);
		mwp_qp_req_clear(qp);
		mwp_sq_reset(qp);	/* drops work without completions */
		resp_reset(qp);
	}
	if (from == IBV_QPS_RTR && to == IBV_QPS_RTS)
		req_start(qp);	/* nothing can be posted before this */
	__atomic_store_n(&ibqp->state, to, __ATOMIC_RELEASE);
	/* ERR: its runner flushes what is posted and outstanding */
	if (to == IBV_QPS_ERR)
		mwp_sched_doorbell(qp);
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}

void
mwp_qp_to_err(struct mwp_qp *qp)
{
	__atomic_store_n(&qp->ibqp.state, IBV_QPS_ERR, __ATOMIC_RELEASE);
	/* its runner flushes it: on its engine, on the next pass */
	mwp_sched_kick_sq(qp);
}

int
mwp_qp_set_peer_mac(struct ibv_qp *ibqp, const struct rte_ether_addr *mac)
{
	struct mwp_qp *qp = to_mqp(ibqp);

	if (mac == NULL || !rte_is_unicast_ether_addr(mac))
		return EINVAL;
	pthread_mutex_lock(&qp->dev->lock);
	rte_ether_addr_copy(mac, &qp->peer_mac);
	__atomic_store_n(&qp->has_peer_mac, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&qp->dev->lock);
	/* its engine looks at it again */
	mwp_sched_doorbell(qp);
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
	};
	memcpy(a->ah_attr.grh.dgid.raw, qp->peer_gid, sizeof(a->ah_attr.grh.dgid.raw));
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
