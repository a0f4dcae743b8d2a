/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs, the object: creation, attachment to a port and to the
 * engine that runs it, destruction, ERR.  Its attributes and states
 * (ibv_modify_qp, ibv_query_qp) are mwp_qp_attr.c's; what ibv_post_send
 * and ibv_post_recv take, mwp_post.c's and mwp_rq.c's; its send queue
 * runs in mwp_sq.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mwp_errno.h"
#include "mwp_port.h"
#include "mwp_qp.h"
#include "mwp_ring.h"
#include "mwp_sched.h"
#include "mwp_srq.h"
#include "mwp_verbs.h"

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
	/* QP0 does not exist on RoCE; QP1, the GSI, is a UD QP (the CM's) */
	if (qpn < 1 || qpn > ROCE_PSN_MASK || (qpn == 1 && a != NULL && a->qp_type != IBV_QPT_UD))
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

/* A port finds its QPs by QPN modulo MWP_PORT_QP_SLOTS: a number the
 * device picks must not share a slot with another QP of the device, or
 * attaching it to the port would fail (EEXIST) at random. */
static bool
qpn_slot_taken(const struct mwp_dev *d, uint32_t qpn)
{
	const struct mwp_qp *o;

	TAILQ_FOREACH(o, &d->qps, next)
		if (((o->ibqp.qp_num ^ qpn) & (MWP_PORT_QP_SLOTS - 1)) == 0)
			return true;
	return false;
}

unsigned int
mwp_dev_qp_count(const struct mwp_dev *d)
{
	const struct mwp_qp *o;
	unsigned int n = 0;

	TAILQ_FOREACH(o, &d->qps, next)
		n++;
	return n;
}

/* A QP's memory, made or half made (the rings and the window). */
static void
free_qp(struct mwp_qp *qp)
{
	mwp_wr_free(qp);
	mwp_ring_free(qp->sq);
	mwp_ring_free(qp->rq);
	free(qp->swq);
	free(qp);
}

void
mwp_qp_resp_clear(struct mwp_qp *qp)
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
	/* back at the line rate (the CNPs were about the old connection) */
	qp->dcqcn.limited = false;
	qp->dcqcn.next = 0;
}

/* qpn 0: the next free number from MWP_FIRST_QPN. */
static struct ibv_qp *
create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a, uint32_t qpn)
{
	struct mwp_dev *d = to_mdev(ibpd->context);
	struct ibv_qp_cap *cap = &a->cap;
	struct mwp_qp *qp;

	/* a QP may only receive (max_send_wr 0, as qperf's passive side
	 * makes), or take its receives from an SRQ */
	if ((a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC &&
	     a->qp_type != IBV_QPT_UD) ||
	    a->send_cq == NULL || a->recv_cq == NULL ||
	    a->send_cq->context != ibpd->context ||
	    a->recv_cq->context != ibpd->context ||
	    (a->srq != NULL && a->srq->context != ibpd->context) ||
	    cap->max_send_wr > 65536 ||
	    cap->max_recv_wr > 65536 || cap->max_send_sge > MWP_MAX_SGE ||
	    cap->max_recv_sge > MWP_MAX_SGE || cap->max_inline_data > MWP_MAX_INLINE)
		return mwp_null_errno(EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return mwp_null_errno(ENOMEM);
	qp->dev = d;
	qp->cap = *cap;
	if (a->srq != NULL)
		qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;	/* the SRQ's */
	else
		qp->cap.max_recv_wr = RTE_MAX(cap->max_recv_wr, 1u);
	qp->sq_sig_all = a->sq_sig_all != 0;
	/* Posting may come from several threads, one at a time (the QP's
	 * post lock, which also counts its slots); one thread executes.
	 * Each poster writes its WQE in place, only the bytes it uses (the
	 * zero-copy API; mwp_sq.c). */
	qp->sq = mwp_ring_make("sq", sizeof(struct mwp_wqe), RTE_MAX(qp->cap.max_send_wr, 1u),
			       d->socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
	/* The responder lcore and the ERR flush may both take receives:
	 * HTS keeps that safe and allows peeking. */
	qp->rq = mwp_ring_make("rq", sizeof(struct mwp_rwqe), RTE_MAX(qp->cap.max_recv_wr, 1u),
			       d->socket, RING_F_MC_HTS_DEQ);
	/* the window holds every WQE from execution to completion */
	qp->swq_mask = rte_align32pow2(RTE_MAX(qp->cap.max_send_wr, 1u)) - 1;
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
		/* every slot of a port's table taken: no number would attach */
		if (mwp_dev_qp_count(d) >= MWP_PORT_QP_SLOTS) {
			pthread_mutex_unlock(&d->lock);
			free_qp(qp);
			return mwp_null_errno(ENOSPC);
		}
		/* from the device's range (24 bits unless it was narrowed:
		 * 0 and 1 are the special QPs of InfiniBand), after its last
		 * the first again; or at random */
		do {
			if (!d->sequential) {
				qpn = d->qpn_lo + mwp_rand_below(d->qpn_hi + 1 - d->qpn_lo);
				continue;
			}
			qpn = d->next_qpn;
			d->next_qpn = qpn >= d->qpn_hi ? d->qpn_lo : qpn + 1;
		} while (qpn_slot_taken(d, qpn));
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
	mwp_qp_resp_clear(qp);
	qp->transport = a->qp_type == IBV_QPT_RC ? ROCE_TRANSPORT_RC :
			a->qp_type == IBV_QPT_UC ? ROCE_TRANSPORT_UC : ROCE_TRANSPORT_UD;
	if (a->srq != NULL) {
		qp->srq = to_msrq(a->srq);
		qp->srq->obj.users++;
		qp->ibqp.srq = a->srq;
	}
	qp->scq->obj.users++;
	qp->rcq->obj.users++;
	to_mpd(ibpd)->obj.users++;
	TAILQ_INSERT_TAIL(&d->qps, qp, next);
	mwp_sched_polled(qp, 1);	/* no owner yet */
	pthread_mutex_unlock(&d->lock);
	return &qp->ibqp;
}

/* The send opcodes an extended QP of each type may be made for. */
static uint64_t
send_ops_of(enum ibv_qp_type t)
{
	const uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	const uint64_t uc = ud | IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;

	switch (t) {
	case IBV_QPT_UD:
		return ud;
	case IBV_QPT_UC:
		return uc;
	case IBV_QPT_RC:
		return uc | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV |
		       IBV_QP_EX_WITH_ATOMIC_WRITE;
	default:
		return 0;
	}
}

struct ibv_qp *
mwp_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *ibqp;
	int ret;

	if (ctx == NULL || a == NULL)
		return mwp_null_errno(EINVAL);
	/* what the device has not: XRC, raw packet, RSS, TSO */
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD)
		return mwp_null_errno(EOPNOTSUPP);
	if (a->comp_mask & ~known)
		return mwp_null_errno(EOPNOTSUPP);
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL || a->pd->context != ctx)
		return mwp_null_errno(EINVAL);
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags != 0)
		return mwp_null_errno(EOPNOTSUPP);
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~send_ops_of(a->qp_type)))
		return mwp_null_errno(EOPNOTSUPP);
	ia = (struct ibv_qp_init_attr){
		.qp_context = a->qp_context, .send_cq = a->send_cq, .recv_cq = a->recv_cq,
		.srq = a->srq, .cap = a->cap, .qp_type = a->qp_type,
		.sq_sig_all = a->sq_sig_all,
	};
	ibqp = mwp_create_qp(a->pd, &ia);
	if (ibqp == NULL)
		return NULL;
	a->cap = ia.cap;
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = mwp_wr_init(to_mqp(ibqp));
		if (ret != 0) {
			mwp_destroy_qp(ibqp);
			return mwp_null_errno(ret);
		}
	}
	return ibqp;
}

struct ibv_qp_ex *
mwp_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct mwp_qp *qp = to_mqp(ibqp);

	return qp->wrb != NULL ? &qp->ibqp_ex : NULL;
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
		/* a UD QP's messages fit the port's MTU (it has no path) */
		if (qp->transport == ROCE_TRANSPORT_UD)
			qp->path_mtu = (enum ibv_mtu)(rte_bsf32(port->conf.mtu) - 7);
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
	mwp_sched_polled(qp, -1);	/* its owner, if any, has let go */
	qp->scq->obj.users--;
	qp->rcq->obj.users--;
	if (qp->srq != NULL)
		qp->srq->obj.users--;
	to_mpd(ibqp->pd)->obj.users--;
	pthread_mutex_unlock(&d->lock);
	/* an lcore may be answering it: free only once every lcore has
	 * passed a quiescent point since it left the port's table */
	if (qp->port != NULL)
		rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	free_qp(qp);
	return 0;
}

void
mwp_qp_err_events(struct mwp_qp *qp)
{
	/* no receive of its SRQ's will be taken for it any more */
	if (qp->srq != NULL)
		mwp_dev_async(qp->dev, (struct ibv_async_event){
			.element.qp = &qp->ibqp, .event_type = IBV_EVENT_QP_LAST_WQE_REACHED });
}

void
mwp_qp_to_err(struct mwp_qp *qp)
{
	if (__atomic_exchange_n(&qp->ibqp.state, IBV_QPS_ERR, __ATOMIC_ACQ_REL) != IBV_QPS_ERR)
		mwp_qp_err_events(qp);
	/* its runner flushes it: on its engine, on the next pass */
	mwp_sched_kick_sq(qp);
}

void
mwp_qp_overrun(struct mwp_qp *qp)
{
	const bool was_err = __atomic_load_n(&qp->ibqp.state, __ATOMIC_ACQUIRE) == IBV_QPS_ERR;

	mwp_qp_to_err(qp);
	if (!was_err)
		mwp_dev_async(qp->dev, (struct ibv_async_event){
			.element.qp = &qp->ibqp, .event_type = IBV_EVENT_QP_FATAL });
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

