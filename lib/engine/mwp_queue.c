/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queues (see mwp_engine.h): the rx/tx queue pairs of a port that an
 * engine polls.  A queue owns its share of the port's QPs; what it
 * receives is sorted in mwp_rx.c; what it sends unprompted -- frames
 * another queue handed over, READ responses owed, its QPs' requests --
 * is made here (mwp_queue_tx).
 */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "mwp_engine_priv.h"
#include "mwp_errno.h"
#include "roce_req.h"

/* Frames handed to a queue and not yet processed. */
#define QUEUE_HANDOFF_RING	1024

struct mwp_queue *
mwp_queue_create(struct mwp_engine *e, struct mwp_port *port, uint16_t queue_id,
		 struct mwp_stats *st)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];
	struct mwp_queue *q;

	if (queue_id >= MWP_PORT_MAX_QUEUES || port->owner[queue_id] != NULL ||
	    e->nb_queues == MWP_ENGINE_MAX_QUEUES || st == NULL)
		return mwp_null_rte_errno(EINVAL);
	q = rte_zmalloc("mwp_queue", sizeof(*q), RTE_CACHE_LINE_SIZE);
	if (q == NULL)
		return mwp_null_rte_errno(ENOMEM);
	snprintf(name, sizeof(name), "mwp_ho%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	q->handoff = rte_ring_create(name, QUEUE_HANDOFF_RING, SOCKET_ID_ANY,
				     RING_F_SC_DEQ);
	if (q->handoff == NULL) {
		rte_free(q);
		return mwp_null_rte_errno(ENOMEM);
	}
	q->eng = e;
	q->port = port;
	q->st = st;
	q->queue_id = queue_id;
	mwp_ctrl_ctx_init(&q->ctrl, &port->conf, port->neigh, port->mp,
			  port->conf.ctrl_rate != 0 ? port->conf.ctrl_rate : 10000, 0,
			  e->s.tsc_hz);
	mwp_guard_init(&q->guard, port->conf.guess_threshold,
		       port->conf.guess_block_ms != 0 ? port->conf.guess_block_ms : 1000,
		       e->s.tsc_hz);
	q->own.sched = &e->s;
	q->own.queue_id = queue_id;
	TAILQ_INIT(&q->own.tx_list);
	mwp_resp_queue_init(&q->resp, &q->own, port, st, &q->guard);
	e->queue[e->nb_queues++] = q;
	port->owner[queue_id] = &q->own;
	/* it owns its share of the port's QPs, the ones attached already too */
	for (unsigned int s = 0; s < MWP_PORT_QP_SLOTS; s++) {
		struct mwp_qp *qp = port->qp[s].qp;

		if (qp == NULL || qp->owner != NULL)
			continue;
		pthread_mutex_lock(&qp->dev->lock);
		mwp_sched_adopt(qp);
		pthread_mutex_unlock(&qp->dev->lock);
	}
	return q;
}

void
mwp_queue_free(struct mwp_queue *q)
{
	struct mwp_engine *e;
	struct rte_mbuf *m[32];
	unsigned int n;

	if (q == NULL)
		return;
	e = q->eng;
	while ((n = rte_ring_sc_dequeue_burst(q->handoff, (void **)m, RTE_DIM(m),
					      NULL)) != 0)
		rte_pktmbuf_free_bulk(m, n);
	rte_ring_free(q->handoff);
	rte_pktmbuf_free_bulk(q->host, q->nb_host);
	for (uint16_t i = 0; i < e->nb_queues; i++)
		if (e->queue[i] == q) {
			e->queue[i] = e->queue[--e->nb_queues];
			break;
		}
	if (q->port->owner[q->queue_id] == &q->own)
		q->port->owner[q->queue_id] = NULL;
	rte_free(q);
}

uint16_t
mwp_queue_host_take(struct mwp_queue *q, struct rte_mbuf **out, uint16_t room)
{
	const uint16_t n = RTE_MIN(room, q->nb_host);

	memcpy(out, q->host, n * sizeof(*out));
	q->nb_host -= n;
	memmove(q->host, q->host + n, q->nb_host * sizeof(*out));
	return n;
}

void
mwp_queue_ctrl_stats(const struct mwp_queue *q, struct mwp_ctrl_stats *st)
{
	*st = q->ctrl.st;
}

const struct mwp_guard *
mwp_queue_guard(const struct mwp_queue *q)
{
	return &q->guard;
}

void
mwp_queue_handoffs(const struct mwp_queue *q, uint64_t *out, uint64_t *in)
{
	*out = q->handoff_out;
	*in = q->handoff_in;
}

static uint16_t
send_asked(struct mwp_queue *q, struct rte_mbuf **txm, uint16_t room)
{
	struct mwp_port_ask a[8];
	unsigned int n = mwp_port_neigh_asked(q->port, a, RTE_MIN(room, RTE_DIM(a)));
	uint16_t nb = 0;

	q->ctrl.mp = q->port->mp;
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = mwp_ctrl_probe(&q->ctrl, a[i].ip,
						    a[i].unicast ? &a[i].mac : NULL);

		if (m != NULL)
			txm[nb++] = m;
	}
	return nb;
}

uint16_t
mwp_queue_tx(struct mwp_queue *q, struct rte_mbuf **txm, uint16_t room)
{
	struct mwp_resp_ctx c;
	uint16_t nb = 0;

	/* frames of our QPs that arrived on other queues */
	if (unlikely(!rte_ring_empty(q->handoff))) {
		struct rte_mbuf *m[MWP_BURST_MAX / 2];
		unsigned int n = rte_ring_sc_dequeue_burst(q->handoff, (void **)m,
							   RTE_DIM(m), NULL);

		if (n != 0)
			MWP_TSAN_ACQUIRE(q->handoff);
		q->handoff_in += n;
		nb = mwp_queue_rx_handed(q, m, (uint16_t)n, txm, room);
	}
	/* probes other threads asked for (the RDMA CM resolving an address);
	 * where the kernel resolves, its thread takes them */
	if (unlikely(!rte_ring_empty(q->port->asks)) && !q->port->conf.kernel_neigh)
		nb = (uint16_t)(nb + send_asked(q, txm + nb, (uint16_t)(room - nb)));
	if (!mwp_resp_owes(&q->resp) && TAILQ_EMPTY(&q->own.tx_list))
		return nb;
	/* one batch: the responder's READ responses, then the requests */
	mwp_resp_ctx_init(&c, &q->resp, txm + nb, (uint16_t)(room - nb), false);
	mwp_resp_read_owed(&c);
	mwp_req_send_all(&q->own, &c.tx, &q->ctrl);
	mwp_tx_finish(&c.tx);
	return (uint16_t)(nb + c.tx.n);
}
