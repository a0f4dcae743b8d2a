/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels of mwpath's devices (event mode, ibv_rc_pingpong
 * -e): a channel is an eventfd in semaphore mode and a FIFO of the CQs
 * that signalled.  A completion reaching an armed CQ (the engine's
 * thread, mwp_cq_set_event) queues the CQ and adds one to the eventfd;
 * ibv_get_cq_event reads one and takes the CQ (with progress = calls it
 * polls the datapath while it waits).  The channel's fd blocks, polls and
 * selects as a kernel channel's does.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "mwp_ibv.h"

/* CQs waiting to be reported: one entry per signal, so at most one per
 * arming of each CQ; a full FIFO drops nothing (the CQ is re-armed by
 * the program only after it got the event). */
#define FIFO_SIZE	1024

struct channel {
	struct ibv_comp_channel ch;	/* first: what the program holds */
	pthread_mutex_t lock;
	struct ibv_cq *fifo[FIFO_SIZE];
	unsigned int head, count;
};

static struct channel *
to_channel(struct ibv_comp_channel *ch)
{
	return container_of(ch, struct channel, ch);
}

static bool
ours(const struct ibv_comp_channel *ch)
{
	return ch != NULL && mwp_ibv_ctx_dev(ch->context) != NULL;
}

/* The engine's thread: a completion reached an armed CQ of the channel. */
static void
signal_cq(struct ibv_cq *cq, void *arg)
{
	struct channel *c = arg;
	const uint64_t one = 1;
	bool queued = false;

	pthread_mutex_lock(&c->lock);
	if (c->count < FIFO_SIZE) {
		c->fifo[(c->head + c->count++) % FIFO_SIZE] = cq;
		queued = true;
	}
	pthread_mutex_unlock(&c->lock);
	if (queued && write(c->ch.fd, &one, sizeof(one)) != sizeof(one))
		abort();	/* an eventfd below its maximum takes it */
}

/* Until fd has a signal, run the device's datapath (yielding the core
 * while it is idle). */
void
mwp_ibv_wait_polling(struct mwp_ibv_dev *d, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, 0) == 0)
		if (mwp_ibv_progress(d) == 0)
			sched_yield();
}

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	static struct ibv_comp_channel *(*real)(struct ibv_context *);
	struct channel *c;

	if (mwp_ibv_ctx_dev(ctx) == NULL) {
		if (real == NULL)
			*(void **)&real = mwp_ibv_real_sym("ibv_create_comp_channel",
							   "IBVERBS_1.0");
		return real(ctx);
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	c->ch.context = ctx;
	c->ch.refcnt = 0;
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	static int (*real)(struct ibv_comp_channel *);
	struct channel *c;

	if (!ours(ch)) {
		if (real == NULL)
			*(void **)&real = mwp_ibv_real_sym("ibv_destroy_comp_channel",
							   "IBVERBS_1.0");
		return real(ch);
	}
	c = to_channel(ch);
	pthread_mutex_lock(&c->lock);
	if (ch->refcnt != 0) {
		pthread_mutex_unlock(&c->lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&c->lock);
	close(ch->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

int
mwp_ibv_channel_attach(struct ibv_cq *cq, struct ibv_comp_channel *ch)
{
	struct channel *c = to_channel(ch);

	if (!ours(ch) || ch->context != cq->context)
		return EINVAL;
	pthread_mutex_lock(&c->lock);
	ch->refcnt++;
	pthread_mutex_unlock(&c->lock);
	cq->channel = ch;
	return mwp_cq_set_event(cq, signal_cq, c);
}

void
mwp_ibv_channel_detach(struct ibv_cq *cq)
{
	struct channel *c;

	if (cq->channel == NULL)
		return;
	c = to_channel(cq->channel);
	mwp_cq_set_event(cq, NULL, NULL);
	pthread_mutex_lock(&c->lock);
	/* a signal not yet taken names a CQ that is going: forget it */
	for (unsigned int i = 0; i < c->count; i++)
		if (c->fifo[(c->head + i) % FIFO_SIZE] == cq)
			c->fifo[(c->head + i) % FIFO_SIZE] = NULL;
	cq->channel->refcnt--;
	pthread_mutex_unlock(&c->lock);
	cq->channel = NULL;
}

int
ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	static int (*real)(struct ibv_comp_channel *, struct ibv_cq **, void **);
	struct channel *c;
	struct ibv_cq *got = NULL;
	uint64_t n;

	if (!ours(ch)) {
		if (real == NULL)
			*(void **)&real = mwp_ibv_real_sym("ibv_get_cq_event", "IBVERBS_1.1");
		return real(ch, cq, cq_context);
	}
	c = to_channel(ch);
	while (got == NULL) {
		/* progress = calls: nothing else runs the datapath, so the
		 * wait for a signal polls it */
		if (mwp_ibv_ctx_dev(ch->context)->conf.progress == APP_PROGRESS_CALLS)
			mwp_ibv_wait_polling(mwp_ibv_ctx_dev(ch->context), ch->fd);
		else	/* the progress thread serves it while it waits */
			mwp_ibv_app_waits(mwp_ibv_ctx_dev(ch->context));
		/* one signal (semaphore mode); EAGAIN if the program made
		 * the fd non-blocking and none is there */
		if (read(ch->fd, &n, sizeof(n)) != sizeof(n))
			return -1;
		pthread_mutex_lock(&c->lock);
		if (c->count != 0) {
			got = c->fifo[c->head];
			c->head = (c->head + 1) % FIFO_SIZE;
			c->count--;
		}
		pthread_mutex_unlock(&c->lock);
		/* NULL: the signal of a CQ destroyed since; wait for the next */
	}
	*cq = got;
	*cq_context = got->cq_context;
	return 0;
}

/* ---- asynchronous events ---- */

/* The engine's thread: the library found an error (mwp_device_set_async). */
void
mwp_ibv_async(struct ibv_context *ctx, const struct ibv_async_event *ev, void *arg)
{
	struct mwp_ibv_dev *d = arg;
	const uint64_t one = 1;
	bool queued = false;

	RTE_SET_USED(ctx);
	pthread_mutex_lock(&d->async_lock);
	if (d->async_count < RTE_DIM(d->async)) {
		d->async[(d->async_head + d->async_count++) % RTE_DIM(d->async)] = *ev;
		queued = true;
	} else {
		d->async_lost++;
	}
	pthread_mutex_unlock(&d->async_lock);
	if (queued && write(d->ctx->async_fd, &one, sizeof(one)) != sizeof(one))
		abort();	/* an eventfd below its maximum takes it */
}

/* An event dropped from the queue: its object is being destroyed. */
#define EVENT_DROPPED	((enum ibv_event_type)-1)

/* The object an event names (NULL: the port or the device). */
static const void *
event_obj(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	default:
		return NULL;
	}
}

/* One more event of obj handed out (async_lock held). */
static void
reported(struct mwp_ibv_dev *d, const void *obj)
{
	unsigned int free_at = RTE_DIM(d->reported);

	for (unsigned int i = 0; i < RTE_DIM(d->reported); i++) {
		if (d->reported[i].obj == obj) {
			d->reported[i].n++;
			return;
		}
		if (d->reported[i].obj == NULL && free_at == RTE_DIM(d->reported))
			free_at = i;
	}
	/* past MWP_IBV_REPORTED objects at once its destroy does not wait */
	if (free_at < RTE_DIM(d->reported)) {
		d->reported[free_at].obj = obj;
		d->reported[free_at].n = 1;
	}
}

void
mwp_ibv_async_forget(struct mwp_ibv_dev *d, const void *obj, pthread_mutex_t *mutex,
		     pthread_cond_t *cond, const uint32_t *completed)
{
	uint32_t want = 0;

	pthread_mutex_lock(&d->async_lock);
	for (unsigned int i = 0; i < d->async_count; i++) {
		struct ibv_async_event *ev = &d->async[(d->async_head + i) % RTE_DIM(d->async)];

		if (event_obj(ev) == obj)
			ev->event_type = EVENT_DROPPED;
	}
	for (unsigned int i = 0; i < RTE_DIM(d->reported); i++)
		if (d->reported[i].obj == obj) {
			want = d->reported[i].n;
			d->reported[i].obj = NULL;
			break;
		}
	pthread_mutex_unlock(&d->async_lock);
	pthread_mutex_lock(mutex);
	while (__atomic_load_n(completed, __ATOMIC_ACQUIRE) < want)
		pthread_cond_wait(cond, mutex);
	pthread_mutex_unlock(mutex);
}

int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	static int (*real)(struct ibv_context *, struct ibv_async_event *);
	struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(ctx);
	uint64_t n;

	if (d == NULL) {
		if (real == NULL)
			*(void **)&real = mwp_ibv_real_sym("ibv_get_async_event", "IBVERBS_1.1");
		return real(ctx, ev);
	}
	do {
		if (d->conf.progress == APP_PROGRESS_CALLS)
			mwp_ibv_wait_polling(d, ctx->async_fd);
		/* one event (semaphore mode); EAGAIN if the program made
		 * the fd non-blocking and none is there */
		if (read(ctx->async_fd, &n, sizeof(n)) != sizeof(n))
			return -1;
		pthread_mutex_lock(&d->async_lock);
		*ev = d->async[d->async_head];
		d->async_head = (d->async_head + 1) % RTE_DIM(d->async);
		d->async_count--;
		/* its object waits for the program's acknowledgement
		 * before it goes */
		if (ev->event_type != EVENT_DROPPED && event_obj(ev) != NULL)
			reported(d, event_obj(ev));
		pthread_mutex_unlock(&d->async_lock);
	} while (ev->event_type == EVENT_DROPPED);
	return 0;
}
