/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engines (see mwp_engine.h): which thread runs a QP, and how other
 * threads reach it -- a doorbell ring for posted work, a command ring for
 * the control path (mwp_sched.h is the face the QPs see).  The queues an
 * engine polls are mwp_queue.c's; what they receive is sorted in
 * mwp_rx.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/membarrier.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "mwp_engine_priv.h"
#include "mwp_errno.h"
#include "mwp_priv.h"
#include "mwp_tsan.h"
#include "roce_req.h"

/* QPs one engine may own: every slot of its ports' QP tables. */
#define ENGINE_MAX_QPS		(MWP_ENGINE_MAX_QUEUES * MWP_PORT_QP_SLOTS)
#define ENGINE_CMD_RING		64

/*
 * Watched send queues.  A post rings the engine's doorbell with a locked
 * exchange (mwp_sched_doorbell: a full fence, against the engine's clear
 * of the bell); at 64 B that was a few percent of a WRITE from post to
 * completion.  A QP whose send queue was rung is watched instead: every
 * pass the engine compares the ring's tail with the last it saw, and its
 * posters ring no doorbell while sq_watched is set.  A QP with no post
 * for WATCH_IDLE_US is let go: the engine clears sq_watched, runs
 * membarrier(2) -- every thread of the process passes a full fence --
 * and reads the tail again.  A poster's tail store and its read of the
 * flag then cannot both miss: either the engine sees the post, or the
 * poster sees the flag cleared and rings.  The expensive fence is the
 * engine's, once for a batch of idle QPs, instead of the poster's, once
 * a post.  Without membarrier(2) (a kernel before 4.14, a seccomp
 * filter, a child after fork) nothing is watched.
 */
#define WATCH_IDLE_US		1000

/* membarrier(2)'s expedited private barrier, registered for the process
 * (once; again in a child after fork, which does not inherit it). */
static bool
membarrier_ready(void)
{
	static int pid;
	const int me = getpid();
	long cmds;

	if (__atomic_load_n(&pid, __ATOMIC_ACQUIRE) == me)
		return true;
	cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
	    syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		return false;
	__atomic_store_n(&pid, me, __ATOMIC_RELEASE);
	return true;
}

/* Every thread of the process through a full fence.  false: it cannot. */
static bool
fence_all_threads(void)
{
	return membarrier_ready() &&
	       syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static inline uint32_t
sq_tail(const struct mwp_qp *qp)
{
	return __atomic_load_n(&qp->sq->prod.tail, __ATOMIC_ACQUIRE);
}

/* The QP's send queue was rung and runs this pass: watch it from now. */
static void
watch(struct mwp_engine *e, struct mwp_qp *qp)
{
	if (!e->s.watch_ok || qp->on_watch_list)
		return;
	/* posts up to this tail run this pass (the QP was kicked) */
	qp->watch_tail = sq_tail(qp);
	qp->watch_tsc = e->s.now;
	__atomic_store_n(&qp->sq_watched, 1, __ATOMIC_RELAXED);
	TAILQ_INSERT_TAIL(&e->s.watch_list, qp, watch_link);
	qp->on_watch_list = 1;
	e->st.watched++;
}

/* Off the watch list (a QP that leaves the engine, an engine that
 * stops: mwp_poll runs every send queue it has, rung or not). */
static void
unwatch_now(struct mwp_engine *e, struct mwp_qp *qp)
{
	if (!qp->on_watch_list)
		return;
	__atomic_store_n(&qp->sq_watched, 0, __ATOMIC_RELAXED);
	TAILQ_REMOVE(&e->s.watch_list, qp, watch_link);
	qp->on_watch_list = 0;
}

/* The watched send queues: those with new posts run; those idle for
 * WATCH_IDLE_US are let go (see above). */
static void
watch_pass(struct mwp_engine *e)
{
	TAILQ_HEAD(, mwp_qp) idle = TAILQ_HEAD_INITIALIZER(idle);
	struct mwp_qp *qp, *nx;
	const bool can_fence = e->s.watch_ok;

	for (qp = TAILQ_FIRST(&e->s.watch_list); qp != NULL; qp = nx) {
		const uint32_t tail = sq_tail(qp);

		nx = TAILQ_NEXT(qp, watch_link);
		if (tail != qp->watch_tail) {
			MWP_TSAN_ACQUIRE(qp->sq);
			qp->watch_tail = tail;
			qp->watch_tsc = e->s.now;
			mwp_sched_kick_sq(qp);
		} else if (e->s.now - qp->watch_tsc > e->s.watch_idle && can_fence) {
			__atomic_store_n(&qp->sq_watched, 0, __ATOMIC_RELAXED);
			TAILQ_REMOVE(&e->s.watch_list, qp, watch_link);
			TAILQ_INSERT_TAIL(&idle, qp, watch_link);
		}
	}
	if (TAILQ_EMPTY(&idle))
		return;
	if (!fence_all_threads()) {
		/* no barrier (a child after fork): watch them for good */
		e->s.watch_ok = false;
		while ((qp = TAILQ_FIRST(&idle)) != NULL) {
			TAILQ_REMOVE(&idle, qp, watch_link);
			__atomic_store_n(&qp->sq_watched, 1, __ATOMIC_RELAXED);
			TAILQ_INSERT_TAIL(&e->s.watch_list, qp, watch_link);
		}
		return;
	}
	while ((qp = TAILQ_FIRST(&idle)) != NULL) {
		TAILQ_REMOVE(&idle, qp, watch_link);
		if (sq_tail(qp) != qp->watch_tail) {
			/* posted while the flag was still seen set: it runs,
			 * and the QP stays watched */
			qp->watch_tail = sq_tail(qp);
			qp->watch_tsc = e->s.now;
			__atomic_store_n(&qp->sq_watched, 1, __ATOMIC_RELAXED);
			TAILQ_INSERT_TAIL(&e->s.watch_list, qp, watch_link);
			mwp_sched_kick_sq(qp);
			continue;
		}
		qp->on_watch_list = 0;
		e->st.unwatched++;
	}
}

/* A control request; lives on the requesting thread's stack until done. */
struct mwp_engine_cmd {
	enum mwp_sched_op op;
	struct mwp_qp *qp;
	uint32_t done;
};

static void engine_qp_op(struct mwp_sched *s, struct mwp_qp *qp, enum mwp_sched_op op);

static const struct mwp_sched_ops engine_ops = {
	.qp_op = engine_qp_op,
};

int
mwp_engine_free(struct mwp_engine *e)
{
	if (e == NULL)
		return 0;
	if (!TAILQ_EMPTY(&e->qps) || e->nb_queues != 0)
		return EBUSY;
	rte_ring_free(e->s.db);
	rte_ring_free(e->cmd);
	rte_free(e);
	return 0;
}

struct mwp_engine *
mwp_engine_create(unsigned int id, int socket)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];
	struct mwp_engine *e;
	uint32_t n = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

	e = rte_zmalloc_socket("mwp_engine", sizeof(*e), RTE_CACHE_LINE_SIZE, socket);
	if (e == NULL)
		return mwp_null_rte_errno(ENOMEM);
	e->s.ops = &engine_ops;
	e->s.id = id;
	e->s.tsc_hz = rte_get_tsc_hz();
	e->s.now = rte_rdtsc();
	TAILQ_INIT(&e->qps);
	TAILQ_INIT(&e->s.sq_list);
	TAILQ_INIT(&e->s.watch_list);
	e->s.watch_ok = membarrier_ready();
	e->s.watch_idle = e->s.tsc_hz / 1000000 * WATCH_IDLE_US;
	mwp_timer_wheel_init(&e->s.tw, e->s.tsc_hz, e->s.now);
	/* each QP is in the doorbell ring at most once (db_rung) */
	snprintf(name, sizeof(name), "mwp_db%u", n);
	e->s.db = rte_ring_create(name, ENGINE_MAX_QPS, socket, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "mwp_cmd%u", n);
	e->cmd = rte_ring_create(name, ENGINE_CMD_RING, socket, RING_F_SC_DEQ);
	if (e->s.db == NULL || e->cmd == NULL) {
		mwp_engine_free(e);
		return mwp_null_rte_errno(ENOMEM);
	}
	return e;
}

void
mwp_engine_stats_get(const struct mwp_engine *e, struct mwp_engine_stats *st)
{
	*st = e->st;
	st->timers = e->s.tw.fired;
}

unsigned int
mwp_engine_id(const struct mwp_engine *e)
{
	return e->s.id;
}

int
mwp_qp_owner(const struct ibv_qp *ibqp, unsigned int *engine_id, uint16_t *queue_id)
{
	const struct mwp_owner *o = __atomic_load_n(&to_mqp(ibqp)->owner, __ATOMIC_ACQUIRE);

	if (o == NULL)
		return ENOENT;
	*engine_id = o->sched->id;
	*queue_id = o->queue_id;
	return 0;
}

/* Take a QP off every list of its engine and queue. */
static void
unlist(struct mwp_engine *e, struct mwp_qp *qp)
{
	struct mwp_queue *q = mwp_queue_of(qp->owner);

	if (qp->on_sq_list) {
		TAILQ_REMOVE(&e->s.sq_list, qp, sq_link);
		qp->on_sq_list = 0;
		e->s.nb_sq--;
	}
	mwp_sched_untx(qp);
	unwatch_now(e, qp);
	mwp_timer_cancel(&e->s.tw, &qp->req.tmr);
	/* READ responses it still owed: not any more */
	mwp_resp_forget(&q->resp, qp);
}

/* A doorbell may hold the QP: take it out (engine stopped, or its thread). */
static void
purge_doorbell(struct mwp_engine *e, struct mwp_qp *qp)
{
	unsigned int n = rte_ring_count(e->s.db);

	if (!__atomic_load_n(&qp->db_rung, __ATOMIC_ACQUIRE))
		return;
	/* the ring's consumer is this thread: rotate it once, without qp */
	for (unsigned int i = 0; i < n; i++) {
		void *o;

		if (rte_ring_sc_dequeue(e->s.db, &o) != 0)
			break;
		if (o != qp)
			rte_ring_mp_enqueue(e->s.db, o);
	}
	__atomic_store_n(&qp->db_rung, 0, __ATOMIC_RELEASE);
}

static void
do_op(struct mwp_engine *e, struct mwp_qp *qp, enum mwp_sched_op op)
{
	switch (op) {
	case MWP_SCHED_ATTACH:
		if (e->s.dev == NULL)
			e->s.dev = qp->dev;
		TAILQ_INSERT_TAIL(&e->qps, qp, eng_link);
		e->st.qps++;
		if (e->s.active)
			mwp_sched_polled(qp, -1);
		mwp_req_attach(qp);
		/* it may have work already (posted before it had an owner) */
		mwp_sched_kick_sq(qp);
		mwp_sched_kick_tx(qp);
		break;
	case MWP_SCHED_DETACH:
		unlist(e, qp);
		purge_doorbell(e, qp);
		TAILQ_REMOVE(&e->qps, qp, eng_link);
		e->st.qps--;
		if (e->s.active)
			mwp_sched_polled(qp, 1);
		qp->owner = NULL;
		break;
	case MWP_SCHED_RESET:
		unlist(e, qp);
		mwp_qp_req_clear(qp);
		break;
	}
}

/* Serve the control requests waiting in the ring. */
static unsigned int
serve_cmds(struct mwp_engine *e)
{
	struct mwp_engine_cmd *c;
	unsigned int n = 0;

	while (rte_ring_sc_dequeue(e->cmd, (void **)&c) == 0) {
		MWP_TSAN_ACQUIRE(e->cmd);
		do_op(e, c->qp, c->op);
		MWP_TSAN_RELEASE(c);
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
		n++;
	}
	e->st.cmds += n;
	return n;
}

/* A parked engine's turn, taken by a control thread (then it is the
 * engine's thread until it puts the turn back). */
static bool
take_parked(struct mwp_engine *e)
{
	uint32_t parked = MWP_TURN_PARKED;

	return __atomic_compare_exchange_n(&e->s.turn, &parked, MWP_TURN_CONTROL, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void
put_parked(struct mwp_engine *e)
{
	__atomic_store_n(&e->s.turn, MWP_TURN_PARKED, __ATOMIC_RELEASE);
}

/* The engine's sched op (mwp_sched.h): op for qp on its thread. */
static void
engine_qp_op(struct mwp_sched *s, struct mwp_qp *qp, enum mwp_sched_op op)
{
	struct mwp_engine_cmd c = { .op = op, .qp = qp };
	struct mwp_engine *e = container_of(s, struct mwp_engine, s);

	/* A stopped engine's lists are the device lock's (mwp_poll), which
	 * the caller holds; a running engine does it in its thread (which
	 * may be this one: a program that runs the engine itself); a parked
	 * one here, its turn taken meanwhile. */
	if (e->s.active && pthread_equal(__atomic_load_n(&e->s.thread, __ATOMIC_RELAXED),
					 pthread_self())) {
		do_op(e, qp, op);
		return;
	}
	if (e->s.active && take_parked(e)) {
		do_op(e, qp, op);
		put_parked(e);
		return;
	}
	MWP_TSAN_RELEASE(e->cmd);
	if (!e->s.active || rte_ring_mp_enqueue(e->cmd, &c) != 0) {
		if (e->s.active) {
			/* the ring is full: wait for room, lock dropped */
			pthread_mutex_unlock(&qp->dev->lock);
			while (rte_ring_mp_enqueue(e->cmd, &c) != 0) {
				if (take_parked(e)) {
					serve_cmds(e);
					put_parked(e);
					continue;
				}
				usleep(10);
			}
			goto wait;
		}
		do_op(e, qp, op);
		return;
	}
	pthread_mutex_unlock(&qp->dev->lock);
wait:
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
		/* the turn ended before it came to this request: serve the
		 * waiting requests here */
		if (take_parked(e)) {
			serve_cmds(e);
			put_parked(e);
			continue;
		}
		usleep(5);
	}
	MWP_TSAN_ACQUIRE(&c);
	pthread_mutex_lock(&qp->dev->lock);
}

void
mwp_engine_start(struct mwp_engine *e)
{
	struct mwp_qp *qp;

	if (e->s.dev != NULL)
		pthread_mutex_lock(&e->s.dev->lock);
	__atomic_store_n(&e->s.thread, pthread_self(), __ATOMIC_RELAXED);
	__atomic_store_n(&e->s.turn, MWP_TURN_RUNNING, __ATOMIC_RELAXED);
	e->s.now = rte_rdtsc();
	/* what mwp_poll left: look at every QP once; mwp_poll runs them no
	 * more */
	TAILQ_FOREACH(qp, &e->qps, eng_link) {
		mwp_sched_kick_sq(qp);
		mwp_sched_kick_tx(qp);
		if (!e->s.active)
			mwp_sched_polled(qp, -1);
	}
	e->s.active = true;
	if (e->s.dev != NULL)
		pthread_mutex_unlock(&e->s.dev->lock);
}

void
mwp_engine_stop(struct mwp_engine *e)
{
	struct mwp_qp *qp;

	if (e->s.dev != NULL)
		pthread_mutex_lock(&e->s.dev->lock);
	/* requests queued before this point are served by us; after it,
	 * their senders see a stopped engine and do it themselves */
	serve_cmds(e);
	/* mwp_poll runs every send queue, rung or not */
	while ((qp = TAILQ_FIRST(&e->s.watch_list)) != NULL)
		unwatch_now(e, qp);
	if (e->s.active)
		TAILQ_FOREACH(qp, &e->qps, eng_link)
			mwp_sched_polled(qp, 1);	/* mwp_poll's again */
	e->s.active = false;
	if (e->s.dev != NULL)
		pthread_mutex_unlock(&e->s.dev->lock);
}

bool
mwp_engine_resume(struct mwp_engine *e)
{
	uint32_t parked = MWP_TURN_PARKED;

	if (!e->s.active) {
		mwp_engine_start(e);
		return true;
	}
	if (!__atomic_compare_exchange_n(&e->s.turn, &parked, MWP_TURN_RUNNING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	__atomic_store_n(&e->s.thread, pthread_self(), __ATOMIC_RELAXED);
	return true;
}

void
mwp_engine_park(struct mwp_engine *e)
{
	/* requests queued before this point are served by us; after it,
	 * their senders find the engine parked and take its turn */
	serve_cmds(e);
	__atomic_store_n(&e->s.thread, (pthread_t)0, __ATOMIC_RELAXED);
	put_parked(e);
}

/* Run a QP's send queue on its engine.  Work requests waiting to execute
 * need the device lock (binds and invalidations change windows, regions
 * and the key table, which the control path changes too); the engine
 * never waits for it: if a control thread holds it, the QP's work
 * requests wait for a later pass, and the datapath goes on.  What is
 * already executed completes without it. */
static unsigned int
run_sq(struct mwp_engine *e, struct mwp_qp *qp)
{
	unsigned int n = rte_ring_count(qp->sq);

	if (n == 0)
		return (unsigned int)mwp_sq_run(qp, 0);
	if (pthread_mutex_trylock(&qp->dev->lock) != 0) {
		e->st.sq_deferred++;
		mwp_sched_kick_sq(qp);		/* again on the next pass */
		return (unsigned int)mwp_sq_deliver(qp);
	}
	n = (unsigned int)mwp_sq_run(qp, UINT32_MAX);
	pthread_mutex_unlock(&qp->dev->lock);
	return n;
}

unsigned int
mwp_engine_run_work(struct mwp_engine *e, uint64_t now)
{
	struct mwp_qp *qps[64], *qp;
	unsigned int work = 0, n;

	e->s.now = now;
	e->st.runs++;
	if (unlikely(!rte_ring_empty(e->cmd)))
		work += serve_cmds(e);
	/* send queues rung by posting threads */
	while ((n = rte_ring_sc_dequeue_burst(e->s.db, (void **)qps, RTE_DIM(qps),
					      NULL)) != 0) {
		MWP_TSAN_ACQUIRE(e->s.db);
		for (unsigned int i = 0; i < n; i++) {
			/* a post after this rings again */
			__atomic_store_n(&qps[i]->db_rung, 0, __ATOMIC_RELEASE);
			mwp_sched_kick_sq(qps[i]);
			mwp_sched_kick_tx(qps[i]);
			watch(e, qps[i]);
		}
		/* The clears above before the send queues are read: else a
		 * store buffer holds a clear while the queue is read empty,
		 * a post in that window finds the bell still rung, and its
		 * work request waits for a doorbell that never comes (a
		 * ping-pong hangs).  One fence a burst of doorbells. */
		rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
		e->st.doorbells += n;
	}
	if (!TAILQ_EMPTY(&e->s.watch_list))
		watch_pass(e);
	/* the send queues on the list now; a run may put its QP back for
	 * the next pass (a completion waiting for a grace period) */
	for (n = e->s.nb_sq; n != 0 && (qp = TAILQ_FIRST(&e->s.sq_list)) != NULL; n--) {
		TAILQ_REMOVE(&e->s.sq_list, qp, sq_link);
		qp->on_sq_list = 0;
		e->s.nb_sq--;
		work += run_sq(e, qp);
		e->st.sq_runs++;
	}
	return work;
}

unsigned int
mwp_engine_run_timers(struct mwp_engine *e, uint64_t now)
{
	e->s.now = now;
	return mwp_timer_run(&e->s.tw, now);
}

unsigned int
mwp_engine_run(struct mwp_engine *e, uint64_t now)
{
	return mwp_engine_run_work(e, now) + mwp_engine_run_timers(e, now);
}
