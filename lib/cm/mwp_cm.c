/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's connection manager (mwp_cm.h): its set-up, the MADs QP1
 * receives to the state machines by attribute (mwp_cm_conn.c,
 * mwp_cm_sidr.c), the timers, and the program's calls, each under the
 * CM's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_random.h>

#include "mwp_cm_priv.h"
#include "mwp_errno.h"
#include "mwp_port.h"
#include "mwp_verbs.h"

/* The EUI-64 of a MAC, as rxe makes its node GUID of a netdev's. */
static uint64_t
guid_of(const struct rte_ether_addr *mac)
{
	const uint8_t *m = mac->addr_bytes;

	return (uint64_t)(m[0] ^ 2) << 56 | (uint64_t)m[1] << 48 | (uint64_t)m[2] << 40 |
	       UINT64_C(0xfffe) << 24 | (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
}

struct mwp_cm *
mwp_cm_create(struct ibv_context *ctx, struct mwp_port *port, const struct mwp_cm_attr *attr)
{
	const struct mwp_cm_attr none = { 0 };
	const struct mwp_cm_attr *a = attr != NULL ? attr : &none;
	uint32_t max_ids = a->max_ids != 0 ? a->max_ids : 1024;
	struct mwp_cm *cm;
	int err;

	if (ctx == NULL || port == NULL || max_ids > (1u << 20))
		return mwp_null_errno(EINVAL);
	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return mwp_null_errno(ENOMEM);
	cm->efd = -1;
	cm->ctx = ctx;
	cm->port = port;
	cm->max_ids = max_ids;
	cm->id_bits = rte_log2_u32(rte_align32pow2(max_ids));
	cm->ids = calloc(1u << cm->id_bits, sizeof(*cm->ids));
	cm->hz = rte_get_tsc_hz();
	cm->now = rte_get_tsc_cycles();
	cm->next_due = UINT64_MAX;
	cm->timewait = (uint64_t)(a->timewait_ms != 0 ? a->timewait_ms : 1000) * (cm->hz / 1000);
	cm->guid = a->ca_guid != 0 ? a->ca_guid : guid_of(&port->conf.mac);
	cm->tid_hi = (uint32_t)rte_rand();
	pthread_mutex_init(&cm->lock, NULL);
	err = cm->ids == NULL ? ENOMEM :
	      cm_event_init(cm, a->event_depth != 0 ? a->event_depth : 1024);
	if (err == 0) {
		cm->gsi = cm_gsi_create(ctx, port, a->recv_depth != 0 ? a->recv_depth : 1024,
					a->send_depth != 0 ? a->send_depth : 256);
		if (cm->gsi == NULL)
			err = errno;
	}
	if (err != 0) {
		cm_event_fini(cm);
		free(cm->ids);
		pthread_mutex_destroy(&cm->lock);
		free(cm);
		return mwp_null_errno(err);
	}
	return cm;
}

int
mwp_cm_destroy(struct mwp_cm *cm)
{
	if (cm == NULL)
		return EINVAL;
	cm_gsi_destroy(cm->gsi);
	cm_event_fini(cm);
	free(cm->ids);
	pthread_mutex_destroy(&cm->lock);
	free(cm);
	return 0;
}

int
mwp_cm_share(struct mwp_cm *cm, uint32_t part, uint32_t part_bits,
	     const struct mwp_cm_share_ops *ops)
{
	int ret = 0;

	if (cm == NULL || ops == NULL || ops->others_listen == NULL ||
	    ops->answers_strays == NULL || part_bits == 0 || part_bits > 8 ||
	    part >= 1u << part_bits || cm->id_bits + part_bits > 24)
		return EINVAL;
	pthread_mutex_lock(&cm->lock);
	if (cm->nb_ids != 0) {
		ret = EBUSY;
	} else {
		cm->part = part;
		cm->part_bits = part_bits;
		cm->share = *ops;
		/* TIDs of our own too: another process's answers to its
		 * requests are never taken for ours */
		cm->tid_hi = (cm->tid_hi & (UINT32_MAX >> part_bits)) | part << (32 - part_bits);
	}
	pthread_mutex_unlock(&cm->lock);
	return ret;
}

/* One MAD from QP1, to its state machine. */
static void
rx_mad(struct mwp_cm *cm, const struct cm_rx *rx)
{
	uint16_t attr;

	cm->st.rx_mads++;
	if (!cm_msg_valid(rx->mad, rx->len)) {
		cm->st.bad_mads++;
		return;
	}
	attr = mad_attr(rx->mad);
	if (attr >= ROCE_CM_REQ && attr <= ROCE_CM_SIDR_REP)
		cm->st.rx_by_attr[attr - ROCE_CM_REQ]++;
	/* shared (mwp_cm_share): an answer to another process's ID is its
	 * business -- every message but the two requests names the ID of
	 * the side it goes to */
	if (cm->part_bits != 0 && attr > ROCE_CM_REQ && attr <= ROCE_CM_SIDR_REP &&
	    attr != ROCE_CM_SIDR_REQ) {
		const uint32_t ours = mad_get(rx->mad, attr == ROCE_CM_SIDR_REP ?
						       CM_SIDR_REP_REQUEST_ID :
						       CM_REP_REMOTE_COMM_ID);

		if (ours != 0 && cm_others_id(cm, ours))
			return;
	}
	if (attr == ROCE_CM_SIDR_REQ || attr == ROCE_CM_SIDR_REP)
		cm_sidr_rx(cm, rx, attr);
	else if (attr >= ROCE_CM_REQ && attr <= ROCE_CM_APR)
		cm_conn_rx(cm, rx, attr);
	else
		cm->st.unknown_attr++;
}

/* An id whose timer is due: a retry, its exchange given up, or the end
 * of its timewait. */
static void
expired(struct mwp_cm_id *id)
{
	if (id->state == CM_TIMEWAIT) {
		cm_id_stop(id);
		if (id->user)
			id->state = CM_IDLE;
		else
			cm_id_free(id);
	} else if (id->rt.left > 0) {
		cm_id_resend(id);
	} else if (id->state == CM_SIDR_REQ_SENT) {
		cm_sidr_expired(id);
	} else {
		cm_conn_expired(id);
	}
}

static void
timers(struct mwp_cm *cm)
{
	const uint32_t slots = 1u << cm->id_bits;
	uint64_t next = UINT64_MAX;

	if (cm->now < cm->next_due)
		return;
	cm->next_due = UINT64_MAX;
	for (uint32_t i = 0; i < slots; i++) {
		struct mwp_cm_id *id = &cm->ids[i];

		if (id->state == CM_FREE || id->rt.deadline == 0)
			continue;
		if (cm->now >= id->rt.deadline)
			expired(id);
		if (id->state != CM_FREE && id->rt.deadline != 0)
			next = RTE_MIN(next, id->rt.deadline);
	}
	cm->next_due = RTE_MIN(next, cm->next_due);
}

unsigned int
mwp_cm_progress(struct mwp_cm *cm, uint64_t now)
{
	unsigned int n;

	pthread_mutex_lock(&cm->lock);
	cm->sleep_until = 0;
	cm->now = now;
	cm_gsi_poll(cm->gsi, 256, rx_mad, cm);
	timers(cm);
	n = cm->ev_count;
	pthread_mutex_unlock(&cm->lock);
	return n;
}

int
mwp_cm_fd(const struct mwp_cm *cm)
{
	return cm->efd;
}

/* QP1's CQ signalled (the engine's thread): wake the sleeping caller.
 * No lock: the function is set before QP1's CQ is armed. */
static void
qp1_signal(struct ibv_cq *cq, void *arg)
{
	struct mwp_cm *cm = arg;

	RTE_SET_USED(cq);
	cm->wake(cm->wake_arg);
}

void
mwp_cm_set_wake(struct mwp_cm *cm, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&cm->lock);
	cm->wake = fn;
	cm->wake_arg = arg;
	mwp_cq_set_event(cm_gsi_cq(cm->gsi), fn != NULL ? qp1_signal : NULL, cm);
	pthread_mutex_unlock(&cm->lock);
}

uint64_t
mwp_cm_idle_until(struct mwp_cm *cm, uint64_t now)
{
	uint64_t until = 0;
	uint32_t events;

	pthread_mutex_lock(&cm->lock);
	/* armed first, then polled: a MAD after the poll signals */
	if (cm->wake != NULL && ibv_req_notify_cq(cm_gsi_cq(cm->gsi), 0) == 0) {
		cm->now = now;
		events = cm->ev_count;
		if (cm_gsi_poll(cm->gsi, 256, rx_mad, cm) == 0) {
			/* next_due exactly, not a bound left by a timer since
			 * stopped (a scan of the ids: only before a sleep) */
			cm->next_due = 0;
			timers(cm);
			/* MADs taken, or events of timers run: due now */
			if (cm->ev_count == events && cm->next_due > now) {
				until = cm->next_due;
				cm->sleep_until = until;
			}
		}
	}
	pthread_mutex_unlock(&cm->lock);
	return until;
}

int
mwp_cm_get_event(struct mwp_cm *cm, struct mwp_cm_event *ev)
{
	int ret;

	pthread_mutex_lock(&cm->lock);
	ret = cm_event_take(cm, ev);
	pthread_mutex_unlock(&cm->lock);
	return ret;
}

int
mwp_cm_listen(struct mwp_cm *cm, uint64_t service_id, uint64_t mask, uint32_t backlog,
	      void *context, struct mwp_cm_id **out)
{
	struct mwp_cm_id *id;
	int ret = 0;

	if (cm == NULL || out == NULL)
		return EINVAL;
	if (mask == 0)
		mask = UINT64_MAX;
	pthread_mutex_lock(&cm->lock);
	/* two listeners must not both cover one service ID */
	for (uint32_t i = 0; i < (1u << cm->id_bits); i++) {
		const struct mwp_cm_id *l = &cm->ids[i];

		if (l->state == CM_LISTEN && ((service_id ^ l->service_id) & mask & l->mask) == 0)
			ret = EADDRINUSE;
	}
	if (ret == 0) {
		id = cm_id_new(cm, CM_LISTEN, context);
		if (id == NULL) {
			ret = ENOMEM;
		} else {
			id->service_id = service_id & mask;
			id->mask = mask;
			id->backlog = backlog != 0 ? backlog : 128;
			*out = id;
		}
	}
	pthread_mutex_unlock(&cm->lock);
	return ret;
}

int
mwp_cm_connect(struct mwp_cm *cm, uint64_t service_id, const struct mwp_cm_path *path,
	       const struct mwp_cm_conn_param *param, void *context, struct mwp_cm_id **out)
{
	struct mwp_cm_path p;
	struct mwp_cm_id *id;
	int ret;

	if (cm == NULL || path == NULL || param == NULL || out == NULL)
		return EINVAL;
	p = *path;
	if (p.mtu == 0)
		p.mtu = (enum ibv_mtu)(rte_bsf32(cm->port->conf.mtu) - 7);
	pthread_mutex_lock(&cm->lock);
	id = cm_id_new(cm, CM_IDLE, context);
	if (id == NULL) {
		ret = ENOMEM;
	} else {
		ret = cm_conn_connect(id, service_id, &p, param);
		if (ret != 0)
			cm_id_free(id);
		else
			*out = id;
	}
	pthread_mutex_unlock(&cm->lock);
	return ret;
}

int
mwp_cm_sidr_req(struct mwp_cm *cm, uint64_t service_id, const struct mwp_cm_path *path,
		const void *private_data, uint8_t private_len, void *context,
		struct mwp_cm_id **out)
{
	struct mwp_cm_id *id;
	int ret;

	if (cm == NULL || path == NULL || out == NULL)
		return EINVAL;
	pthread_mutex_lock(&cm->lock);
	id = cm_id_new(cm, CM_IDLE, context);
	if (id == NULL) {
		ret = ENOMEM;
	} else {
		ret = cm_sidr_request(id, service_id, path, private_data, private_len);
		if (ret != 0)
			cm_id_free(id);
		else
			*out = id;
	}
	pthread_mutex_unlock(&cm->lock);
	return ret;
}

/* call on id under its CM's lock (the id may be freed by it: zeros). */
#define LOCKED(id, call)					\
	({							\
		int ret_ = EINVAL;				\
		struct mwp_cm *cm_ = (id) != NULL ? (id)->cm : NULL; \
		if (cm_ != NULL) {				\
			pthread_mutex_lock(&cm_->lock);		\
			if ((id)->state != CM_FREE)		\
				ret_ = (call);			\
			pthread_mutex_unlock(&cm_->lock);	\
		}						\
		ret_;						\
	})

int
mwp_cm_accept(struct mwp_cm_id *id, const struct mwp_cm_conn_param *param)
{
	if (param == NULL)
		return EINVAL;
	return LOCKED(id, cm_conn_accept(id, param));
}

int
mwp_cm_reject(struct mwp_cm_id *id, uint16_t reason, const void *private_data,
	      uint8_t private_len)
{
	return LOCKED(id, cm_conn_reject(id, reason, private_data, private_len));
}

int
mwp_cm_rtu(struct mwp_cm_id *id, const void *private_data, uint8_t private_len)
{
	return LOCKED(id, cm_conn_rtu(id, private_data, private_len));
}

int
mwp_cm_disconnect(struct mwp_cm_id *id, const void *private_data, uint8_t private_len)
{
	return LOCKED(id, cm_conn_disconnect(id, private_data, private_len));
}

int
mwp_cm_sidr_rep(struct mwp_cm_id *id, uint8_t status, const struct mwp_cm_conn_param *param)
{
	const struct mwp_cm_conn_param none = { 0 };

	return LOCKED(id, cm_sidr_answer(id, status, param != NULL ? param : &none));
}

static int
destroy_id(struct mwp_cm_id *id)
{
	const struct mwp_cm_conn_param none = { 0 };

	/* a SIDR REQ nobody will answer: the kernel's "reject" */
	if (id->state == CM_SIDR_REQ_RCVD)
		cm_sidr_answer(id, ROCE_SIDR_REJECT, &none);
	cm_conn_destroy(id);
	return 0;
}

int
mwp_cm_destroy_id(struct mwp_cm_id *id)
{
	return LOCKED(id, destroy_id(id));
}

unsigned int
mwp_cm_release_all(struct mwp_cm *cm)
{
	unsigned int n = 0;

	pthread_mutex_lock(&cm->lock);
	/* listeners first: their requests not yet taken are rejected with
	 * them, before the rest of the slots are looked at */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < (1u << cm->id_bits); i++) {
			struct mwp_cm_id *id = &cm->ids[i];

			if (id->state == CM_FREE || !id->user ||
			    (pass == 0) != (id->state == CM_LISTEN))
				continue;
			destroy_id(id);
			n++;
		}
	pthread_mutex_unlock(&cm->lock);
	return n;
}

void *
mwp_cm_id_context(const struct mwp_cm_id *id)
{
	return id->context;
}

void
mwp_cm_id_set_context(struct mwp_cm_id *id, void *context)
{
	pthread_mutex_lock(&id->cm->lock);
	id->context = context;
	pthread_mutex_unlock(&id->cm->lock);
}

uint64_t
mwp_cm_ca_guid(const struct mwp_cm *cm)
{
	return cm->guid;
}

void
mwp_cm_stats_get(struct mwp_cm *cm, struct mwp_cm_stats *st)
{
	pthread_mutex_lock(&cm->lock);
	*st = cm->st;
	pthread_mutex_unlock(&cm->lock);
}

uint32_t
mwp_cm_sends_pending(struct mwp_cm *cm)
{
	uint32_t n;

	pthread_mutex_lock(&cm->lock);
	n = cm_gsi_pending(cm->gsi);
	pthread_mutex_unlock(&cm->lock);
	return n;
}
