/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_SCHED_H
#define MWP_SCHED_H

/*
 * Who runs a QP, as the layers below the engine see it.
 *
 * An engine (one polling thread; engine/) embeds a struct mwp_sched, and
 * each of its queues a struct mwp_owner; a QP attached to a port gets the
 * owner of one of the port's queues (qp->owner, set by mwp_sched_adopt).
 * From then on one thread touches the QP's send queue, requester,
 * responder and timer: its engine's.  The verbs objects and the protocol
 * engines reach that thread only through what is here -- the doorbell
 * from any thread; the lists of work and the timer wheel from the thread
 * itself; for what must wait until the engine has done it, the ops the
 * engine installs -- never by calling up into the engine.
 *
 * A QP with no owner, or whose engine is stopped, is run by mwp_poll()
 * under the device lock instead.  Private.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_ring.h>

#include "mwp_qp.h"
#include "mwp_timer.h"
#include "mwp_tsan.h"

/* What a control thread asks of a QP's engine, and waits for. */
enum mwp_sched_op {
	MWP_SCHED_ATTACH,	/* own the QP (it was attached to a port) */
	MWP_SCHED_DETACH,	/* forget the QP (it is being destroyed) */
	MWP_SCHED_RESET,	/* the QP went to RESET: its lists and timer go */
};

struct mwp_sched;

/* What the engine installs. */
struct mwp_sched_ops {
	/* Run op for qp on the engine's thread and wait until it is done
	 * (or do it here while the engine is stopped, or when this is its
	 * thread).  Called with the device lock held; returns with it held
	 * (it is dropped while waiting). */
	void (*qp_op)(struct mwp_sched *s, struct mwp_qp *qp, enum mwp_sched_op op);
};

/* An engine, as its QPs see it. */
struct mwp_sched {
	const struct mwp_sched_ops *ops;
	unsigned int id;		/* its lcore */
	bool active;			/* a thread runs it */
	pthread_t thread;		/* ... this one (0 while parked) */
	/* an engine run in turns (mwp_engine_resume, mwp_engine_park):
	 * MWP_TURN_RUNNING (a thread is in a turn; always, for an engine
	 * run by one thread for good), MWP_TURN_PARKED (started, no thread
	 * in a turn) or MWP_TURN_CONTROL (a control thread does an op) */
	uint32_t turn;
	struct mwp_dev *dev;		/* of its QPs (one device per engine) */
	uint64_t now;			/* the time of this pass (TSC) */
	uint64_t tsc_hz;
	struct rte_ring *db;		/* QPs whose send queue was rung (MPSC) */
	TAILQ_HEAD(, mwp_qp) sq_list;	/* QPs whose send queue must run */
	uint32_t nb_sq;			/* ... how many */
	/* QPs whose send queue it looks at every pass, so that their
	 * posters need no doorbell (sq_watched; mwp_engine.c) */
	TAILQ_HEAD(, mwp_qp) watch_list;
	bool watch_ok;			/* membarrier(2) is there: it may watch */
	uint64_t watch_idle;		/* a QP idle this long (TSC) is let go */
	struct mwp_timer_wheel tw;	/* one timer per QP */
};

#define MWP_TURN_RUNNING	0
#define MWP_TURN_PARKED		1
#define MWP_TURN_CONTROL	2

/* A queue of an engine, as its QPs see it: a QP's owner.  Its frames
 * leave through that queue. */
struct mwp_owner {
	struct mwp_sched *sched;	/* the engine that polls the queue */
	uint16_t queue_id;
	TAILQ_HEAD(, mwp_qp) tx_list;	/* QPs whose requester has packets */
};

/* The time of the owner's pass, its timer wheel, and ns in TSC cycles
 * (a QP with an owner, on its engine's thread). */
static inline uint64_t
mwp_sched_now(const struct mwp_qp *qp)
{
	return qp->owner->sched->now;
}

static inline struct mwp_timer_wheel *
mwp_sched_wheel(const struct mwp_qp *qp)
{
	return &qp->owner->sched->tw;
}

static inline uint64_t
mwp_sched_ns(const struct mwp_qp *qp, uint64_t ns)
{
	return ns * qp->owner->sched->tsc_hz / 1000000000;
}

/* Is the QP run by a running engine (else mwp_poll runs its send queue)? */
static inline bool
mwp_sched_running(const struct mwp_qp *qp)
{
	return qp->owner != NULL && qp->owner->sched->active;
}

/* The QP's send queue must run soon: on its engine's next pass, or
 * mwp_poll's while the engine is stopped (the thread that runs it). */
static inline void
mwp_sched_kick_sq(struct mwp_qp *qp)
{
	struct mwp_sched *s;

	if (qp->owner == NULL || qp->on_sq_list)
		return;
	s = qp->owner->sched;
	TAILQ_INSERT_TAIL(&s->sq_list, qp, sq_link);
	qp->on_sq_list = 1;
	s->nb_sq++;
}

/* The QP's requester has packets to send (the same threads). */
static inline void
mwp_sched_kick_tx(struct mwp_qp *qp)
{
	struct mwp_owner *o = qp->owner;

	if (o == NULL || qp->on_tx_list)
		return;
	TAILQ_INSERT_TAIL(&o->tx_list, qp, tx_link);
	qp->on_tx_list = 1;
}

/* The QP leaves its owner's list of senders. */
static inline void
mwp_sched_untx(struct mwp_qp *qp)
{
	if (qp->on_tx_list) {
		TAILQ_REMOVE(&qp->owner->tx_list, qp, tx_link);
		qp->on_tx_list = 0;
	}
}

/*
 * Any thread: work was posted to the QP's send queue, or its state
 * changed; its engine looks at it on its next pass.  seq_cst, paired with
 * the engine's fence after it clears the bell: either the engine sees
 * what was posted before this, or this sees the bell cleared and rings
 * again.  A QP with no owner waits for mwp_poll.
 */
static inline void
mwp_sched_doorbell(struct mwp_qp *qp)
{
	struct mwp_owner *o = __atomic_load_n(&qp->owner, __ATOMIC_ACQUIRE);

	if (o == NULL || __atomic_exchange_n(&qp->db_rung, 1, __ATOMIC_SEQ_CST))
		return;
	/* room for every QP the engine may own: cannot fail */
	MWP_TSAN_RELEASE(o->sched->db);
	if (rte_ring_mp_enqueue(o->sched->db, qp) != 0)
		__atomic_store_n(&qp->db_rung, 0, __ATOMIC_RELEASE);
}

/* Control thread, device lock held: op done by the QP's engine (which it
 * must have), waited for; returns with the lock held. */
static inline void
mwp_sched_qp_op(struct mwp_qp *qp, enum mwp_sched_op op)
{
	struct mwp_sched *s = qp->owner->sched;

	s->ops->qp_op(s, qp, op);
}

/* The QP goes to a running engine (delta -1) or back to mwp_poll (+1):
 * the device's count of the QPs mwp_poll runs.  Any thread. */
static inline void
mwp_sched_polled(struct mwp_qp *qp, int delta)
{
	__atomic_fetch_add(&qp->dev->nb_polled, (uint32_t)delta, __ATOMIC_RELEASE);
}

/* Give a QP attached to a port its owner: the queue QPN % the port's
 * nb_queues (queue 0 with one or none), once that queue exists.  Device
 * lock held (mwp_qp.c). */
void mwp_sched_adopt(struct mwp_qp *qp);

#endif /* MWP_SCHED_H */
