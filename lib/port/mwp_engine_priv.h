/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_ENGINE_PRIV_H
#define MWP_ENGINE_PRIV_H

/* Engines and their queues as the library sees them (mwp_engine.c; the
 * public face is mwp_engine.h).  Private. */

#include <pthread.h>

#include "mwp_ctrl.h"
#include "mwp_engine.h"
#include "mwp_guard.h"
#include "mwp_qp.h"

/* QPs with READ responses pending that a queue lists by name. */
#define MWP_QUEUE_RD_PENDING	64
/* Queues one engine polls. */
#define MWP_ENGINE_MAX_QUEUES	8

struct mwp_queue {
	struct mwp_engine *eng;
	struct mwp_port *port;
	struct mwp_stats *st;		/* its thread's counters for the port */
	uint16_t queue_id;
	uint64_t bursts;		/* mwp_resp_burst calls: a burst's number */
	/* QPs with READ responses still to send, so that a pass does not
	 * scan the QP table; past the end, a full scan until none is left */
	struct {
		uint32_t qpn;
		struct mwp_qp *qp;
	} rd_pending[MWP_QUEUE_RD_PENDING];
	uint16_t nb_rd_pending;
	bool rd_pending_overflow;
	TAILQ_HEAD(, mwp_qp) tx_list;	/* owned QPs with requests to send */
	struct rte_ring *handoff;	/* frames for its QPs, from other queues */
	struct mwp_ctrl_ctx ctrl;	/* ARP, ND, ICMP echo on this queue */
	uint64_t handoff_out, handoff_in;
	struct mwp_guard guard;		/* sources refused, and blocked */
};

struct mwp_engine {
	unsigned int id;
	bool active;			/* a thread runs it */
	pthread_t thread;		/* ... this one */
	struct mwp_dev *dev;		/* of its QPs (one device per engine) */
	uint64_t now;			/* the time of this pass (TSC) */
	uint64_t tsc_hz;
	struct rte_ring *db;		/* QPs whose send queue was rung */
	struct rte_ring *cmd;		/* control requests (struct mwp_engine_cmd) */
	TAILQ_HEAD(, mwp_qp) qps;	/* the QPs it owns */
	TAILQ_HEAD(, mwp_qp) sq_list;	/* ... whose send queue must run */
	uint32_t nb_sq;			/* QPs on sq_list */
	struct mwp_timer_wheel tw;
	struct mwp_queue *queue[MWP_ENGINE_MAX_QUEUES];
	uint16_t nb_queues;
	struct mwp_engine_stats st;
};

/* A QP's send queue must run on its engine soon (the engine's thread, or
 * mwp_poll's under the device lock while the engine is stopped). */
void mwp_engine_kick_sq(struct mwp_qp *qp);
/* The QP's requester has packets to send (the same threads). */
void mwp_engine_kick_tx(struct mwp_qp *qp);
/* Any thread: work was posted to the QP's send queue. */
void mwp_engine_doorbell(struct mwp_qp *qp);

/* What a control thread asks of a QP's engine. */
enum mwp_engine_op {
	MWP_ENGINE_ATTACH,	/* own the QP (it was attached to a port) */
	MWP_ENGINE_DETACH,	/* forget the QP (it is being destroyed) */
	MWP_ENGINE_RESET,	/* the QP went to RESET: clear its state */
};

/*
 * Run op for qp on the thread of its engine and wait until it is done (or
 * do it here, if the engine is stopped).  Called with the device lock
 * held; returns with it held (it is dropped while waiting).
 */
void mwp_engine_qp_op(struct mwp_qp *qp, enum mwp_engine_op op);

/* Give a QP attached to a port its owner (the port's queue 0, if any).
 * Device lock held. */
void mwp_engine_adopt(struct mwp_qp *qp);

#endif /* MWP_ENGINE_PRIV_H */
