/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_ENGINE_PRIV_H
#define MWP_ENGINE_PRIV_H

/* Engines and their queues as the library sees them (mwp_engine.c,
 * mwp_queue.c, mwp_rx.c; the public face is mwp_engine.h).  Private. */

#include <pthread.h>

#include "mwp_ctrl_priv.h"
#include "mwp_engine.h"
#include "mwp_guard_priv.h"
#include "mwp_qp.h"
#include "mwp_sched.h"
#include "roce_resp.h"

/* Queues one engine polls. */
#define MWP_ENGINE_MAX_QUEUES	8

struct mwp_queue {
	struct mwp_owner own;		/* what its QPs see (first) */
	struct mwp_engine *eng;
	struct mwp_port *port;
	struct mwp_stats *st;		/* its thread's counters for the port */
	uint16_t queue_id;
	struct rte_ring *handoff;	/* frames for its QPs, from other queues */
	uint64_t handoff_out, handoff_in;
	struct mwp_resp_queue resp;	/* the responder's state on it */
	struct mwp_ctrl_ctx ctrl;	/* ARP, ND, ICMP echo on this queue */
	struct mwp_guard guard;		/* sources refused, and blocked */
	/* frames for the host's kernel (port->conf.host_path), until
	 * mwp_queue_host_take */
	struct rte_mbuf *host[MWP_BURST_MAX];
	uint16_t nb_host;
};

struct mwp_engine {
	struct mwp_sched s;		/* what its QPs see (first) */
	struct rte_ring *cmd;		/* control requests (struct mwp_engine_cmd) */
	TAILQ_HEAD(, mwp_qp) qps;	/* the QPs it owns */
	struct mwp_queue *queue[MWP_ENGINE_MAX_QUEUES];
	uint16_t nb_queues;
	struct mwp_engine_stats st;
};

/* mwp_queue_rx for frames another queue received and handed over (it
 * counted them received). */
uint16_t mwp_queue_rx_handed(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n,
			     struct rte_mbuf **tx, uint16_t tx_room);

/* The queue of an owner. */
static inline struct mwp_queue *
mwp_queue_of(const struct mwp_owner *o)
{
	return container_of(o, struct mwp_queue, own);
}

#endif /* MWP_ENGINE_PRIV_H */
