/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connections (IBA 12.9.6): the passive side (REQ received, REP sent,
 * RTU received), the active side (REQ sent, REP received, RTU sent),
 * REJ and MRA in both, DREQ/DREP, and what each state does with a
 * message that is a duplicate, stale or out of its turn.  Where the
 * specification leaves a choice, Linux's kernel CM's is taken, so that a
 * kernel peer sees what it would see from another kernel:
 *
 *   REQ for no listener        REJ "invalid service ID", local ID 0
 *   duplicate REQ, undecided   MRA (the kernel's delayed MRA, 24)
 *   duplicate REQ, rejected    the REJ again
 *   REQ in timewait            REJ "stale connection"
 *   REP for no id              REJ "invalid communication ID"
 *   duplicate REP, established the RTU again
 *   DREQ for no id             DREP anyway
 *   duplicate DREQ, timewait   the DREP again
 *
 * Everything else that finds no id, or an id in a state that cannot take
 * it, is counted and dropped.  A CM shared by several processes
 * (mwp_cm_share) leaves what is for another's IDs or listeners alone.
 */
#include <errno.h>
#include <string.h>

#include "mwp_cm_priv.h"

/* May an event about id be queued?  An id the program let go gets none;
 * when the queue is full the message is dropped (counted), and the peer's
 * retry brings it back. */
static bool
can_tell(struct mwp_cm_id *id)
{
	if (!id->user || cm_event_room(id->cm))
		return true;
	id->cm->st.event_full++;
	return false;
}

/* An event about id, or NULL if the program let it go. */
static struct mwp_cm_event *
tell(struct mwp_cm_id *id, enum mwp_cm_event_type type)
{
	if (!id->user || !cm_event_room(id->cm))
		return NULL;
	return cm_event_new(id->cm, type, id);
}

/* The exchange is over without a connection: idle for the program, or
 * gone if it let go. */
static void
to_idle(struct mwp_cm_id *id)
{
	cm_id_stop(id);
	if (id->listener != NULL) {
		id->listener->pending--;
		id->listener = NULL;
	}
	if (id->user)
		id->state = CM_IDLE;
	else
		cm_id_free(id);
}

/* The id that answers the REQ remote_id of the CA guid, or NULL. */
static struct mwp_cm_id *
find_remote(struct mwp_cm *cm, uint32_t remote_id, uint64_t guid)
{
	const uint32_t slots = 1u << cm->id_bits;

	for (uint32_t i = 0; i < slots; i++) {
		struct mwp_cm_id *id = &cm->ids[i];

		if (id->state != CM_FREE && id->state != CM_LISTEN &&
		    id->remote_id == remote_id && id->remote_guid == guid && remote_id != 0)
			return id;
	}
	return NULL;
}

/* Is there a connection, live or closing, with the QP qpn of CA guid? */
static bool
qp_connected(struct mwp_cm *cm, uint32_t qpn, uint64_t guid)
{
	const uint32_t slots = 1u << cm->id_bits;

	for (uint32_t i = 0; i < slots; i++) {
		const struct mwp_cm_id *id = &cm->ids[i];

		if ((id->state == CM_ESTABLISHED || id->state == CM_DREQ_SENT ||
		     id->state == CM_DREQ_RCVD) &&
		    id->remote_qpn == qpn && id->remote_guid == guid)
			return true;
	}
	return false;
}

/* A duplicate of a message id answered with attr: that answer again
 * (ours was lost). */
static void
answer_again(struct mwp_cm_id *id, uint16_t attr)
{
	if (id->last_attr == attr)
		cm_send_to(id->cm, &id->av, id->last_mad);
}

/* The id a message names in its remote comm ID field f, or NULL
 * (counted). */
static struct mwp_cm_id *
named(struct mwp_cm *cm, const struct cm_rx *rx, struct roce_mad_field f)
{
	struct mwp_cm_id *id = cm_id_find(cm, mad_get(rx->mad, f));

	if (id == NULL)
		cm->st.unknown_id++;
	return id;
}

static void
rej_to(struct mwp_cm *cm, const struct cm_rx *rx, uint32_t remote_id, uint8_t msg,
       uint16_t reason)
{
	uint8_t mad[ROCE_MAD_BYTES];

	cm_msg_rej(mad, mad_tid(rx->mad), 0, remote_id, msg, reason, NULL, 0);
	cm_send_to(cm, &rx->av, mad);
}

/* A duplicate of the REQ id answers. */
static void
dup_req(struct mwp_cm_id *id)
{
	uint8_t mad[ROCE_MAD_BYTES];

	id->cm->st.duplicates++;
	switch (id->state) {
	case CM_REQ_RCVD:
		cm_msg_mra(mad, id->tid, id->local_id, id->remote_id, ROCE_CM_REF_REQ,
			   CM_MRA_TIMEOUT);
		cm_send_to(id->cm, &id->av, mad);
		break;
	case CM_IDLE:
		answer_again(id, ROCE_CM_REJ);
		break;
	case CM_TIMEWAIT:
		cm_msg_rej(mad, id->tid, id->local_id, id->remote_id, ROCE_CM_REF_REQ,
			   ROCE_REJ_STALE_CONN, NULL, 0);
		cm_send_to(id->cm, &id->av, mad);
		break;
	default:
		break;	/* our REP's retries answer it */
	}
}

static void
req_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	const uint8_t *mad = rx->mad;
	const uint32_t rid = mad_get(mad, CM_REQ_LOCAL_COMM_ID);
	const uint64_t guid = mad_get64(mad, CM_REQ_LOCAL_CA_GUID);
	struct mwp_cm_event *ev;
	struct mwp_cm_id *id, *l;

	id = find_remote(cm, rid, guid);
	if (id != NULL) {
		dup_req(id);
		return;
	}
	l = cm_listener(cm, mad_get64(mad, CM_REQ_SERVICE_ID));
	/* shared (mwp_cm_share): another process's listener takes it */
	if (l == NULL && cm_leave_stray(cm, mad_get64(mad, CM_REQ_SERVICE_ID)))
		return;
	if (qp_connected(cm, mad_get(mad, CM_REQ_LOCAL_QPN), guid)) {
		cm->st.rej_stale++;
		rej_to(cm, rx, rid, ROCE_CM_REF_REQ, ROCE_REJ_STALE_CONN);
		return;
	}
	if (l == NULL) {
		cm->st.rej_no_listener++;
		rej_to(cm, rx, rid, ROCE_CM_REF_REQ, ROCE_REJ_INVALID_SERVICE_ID);
		return;
	}
	if (l->pending >= l->backlog) {
		cm->st.rej_backlog++;
		rej_to(cm, rx, rid, ROCE_CM_REF_REQ, ROCE_REJ_CONSUMER);
		return;
	}
	if (!cm_event_room(cm)) {
		cm->st.event_full++;
		return;
	}
	id = cm_id_new(cm, CM_REQ_RCVD, l->context);
	if (id == NULL) {
		cm->st.rej_no_ids++;
		rej_to(cm, rx, rid, ROCE_CM_REF_REQ, ROCE_REJ_NO_RESOURCES);
		return;
	}
	id->listener = l;
	l->pending++;
	id->remote_id = rid;
	id->remote_guid = guid;
	id->tid = mad_tid(mad);
	id->av = rx->av;
	ev = cm_event_new(cm, MWP_CM_REQ_RECEIVED, id);
	ev->listen_id = l;
	cm_msg_req_read(mad, ev, &id->remote_guid, &id->peer_timeout, &id->max_retries);
	id->remote_qpn = ev->param.qp_num;
}

static void
rep_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	const uint8_t *mad = rx->mad;
	struct mwp_cm_id *id = cm_id_find(cm, mad_get(mad, CM_REP_REMOTE_COMM_ID));
	struct mwp_cm_event *ev;

	if (id == NULL) {
		cm->st.unknown_id++;
		rej_to(cm, rx, mad_get(mad, CM_REP_LOCAL_COMM_ID), ROCE_CM_REF_REP,
		       ROCE_REJ_INVALID_COMM_ID);
		return;
	}
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		if (!can_tell(id))
			return;
		cm_id_stop(id);
		id->state = CM_REP_RCVD;
		id->remote_id = mad_get(mad, CM_REP_LOCAL_COMM_ID);
		id->remote_qpn = mad_get(mad, CM_REP_LOCAL_QPN);
		ev = tell(id, MWP_CM_REP_RECEIVED);
		if (ev != NULL)
			cm_msg_rep_read(mad, ev, &id->remote_guid);
		else
			id->remote_guid = mad_get64(mad, CM_REP_LOCAL_CA_GUID);
		break;
	case CM_ESTABLISHED:
		cm->st.duplicates++;
		answer_again(id, ROCE_CM_RTU);
		break;
	case CM_REP_RCVD:
		cm->st.duplicates++;
		break;
	default:
		cm->st.out_of_state++;
		break;
	}
}

static void
rtu_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	struct mwp_cm_id *id = named(cm, rx, CM_RTU_REMOTE_COMM_ID);
	struct mwp_cm_event *ev;

	if (id == NULL)
		return;
	if (id->state == CM_ESTABLISHED) {
		cm->st.duplicates++;
		return;
	}
	if (id->state != CM_REP_SENT && id->state != CM_MRA_REP_RCVD) {
		cm->st.out_of_state++;
		return;
	}
	/* no room: the REP goes again, and the peer's RTU with it */
	if (!can_tell(id))
		return;
	cm_id_stop(id);
	id->state = CM_ESTABLISHED;
	ev = tell(id, MWP_CM_RTU_RECEIVED);
	if (ev != NULL)
		cm_msg_private(rx->mad, ROCE_CM_RTU, ev);
}

static void
rej_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	struct mwp_cm_id *id = named(cm, rx, CM_REJ_REMOTE_COMM_ID);
	struct mwp_cm_event *ev;

	if (id == NULL)
		return;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_REP_RCVD:
		if (!can_tell(id))
			return;
		ev = tell(id, MWP_CM_REJ_RECEIVED);
		if (ev != NULL) {
			ev->rej_reason = (uint16_t)mad_get(rx->mad, CM_REJ_REASON);
			cm_msg_private(rx->mad, ROCE_CM_REJ, ev);
		}
		to_idle(id);
		break;
	default:
		cm->st.out_of_state++;
		break;
	}
}

static void
mra_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	struct mwp_cm_id *id = named(cm, rx, CM_MRA_REMOTE_COMM_ID);
	const uint8_t msg = (uint8_t)mad_get(rx->mad, CM_MRA_MESSAGE);
	enum cm_state to;

	if (id == NULL)
		return;
	if (msg == ROCE_CM_REF_REQ && id->state == CM_REQ_SENT)
		to = CM_MRA_REQ_RCVD;
	else if (msg == ROCE_CM_REF_REP && id->state == CM_REP_SENT)
		to = CM_MRA_REP_RCVD;
	else if ((msg == ROCE_CM_REF_REQ && id->state == CM_MRA_REQ_RCVD) ||
		 (msg == ROCE_CM_REF_REP && id->state == CM_MRA_REP_RCVD)) {
		cm->st.duplicates++;
		return;
	} else {
		cm->st.out_of_state++;
		return;
	}
	/* the peer needs its service timeout more: wait for it, then go on
	 * trying as before */
	id->state = to;
	cm_id_wait(id, cm_timeout_tsc(cm, (uint8_t)mad_get(rx->mad, CM_MRA_SERVICE_TIMEOUT)) +
		       cm_timeout_tsc(cm, id->peer_timeout));
	tell(id, MWP_CM_MRA_RECEIVED);
}

static void
dreq_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	const uint8_t *mad = rx->mad;
	struct mwp_cm_id *id = cm_id_find(cm, mad_get(mad, CM_DREQ_REMOTE_COMM_ID));
	uint8_t rep[ROCE_MAD_BYTES];
	struct mwp_cm_event *ev;

	if (id == NULL || mad_get(mad, CM_DREQ_REMOTE_QPN) != id->local_qpn) {
		/* the connection is gone here: say so (the kernel's DREP) */
		cm->st.unknown_id++;
		cm_msg_ids(rep, ROCE_CM_DREP, mad_tid(mad), mad_get(mad, CM_DREQ_REMOTE_COMM_ID),
			   mad_get(mad, CM_DREQ_LOCAL_COMM_ID), 0, NULL, 0);
		cm_send_to(cm, &rx->av, rep);
		return;
	}
	switch (id->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:	/* the RTU was lost: a DREQ says it came */
	case CM_MRA_REP_RCVD:
		if (!can_tell(id))
			return;
		cm_id_stop(id);
		id->state = CM_DREQ_RCVD;
		id->tid = mad_tid(mad);
		ev = tell(id, MWP_CM_DREQ_RECEIVED);
		if (ev != NULL)
			cm_msg_private(mad, ROCE_CM_DREQ, ev);
		if (!id->user) {
			/* nobody to answer it: answer now */
			cm_msg_ids(rep, ROCE_CM_DREP, id->tid, id->local_id, id->remote_id, 0,
				   NULL, 0);
			cm_id_send(id, rep, false);
			cm_id_close(id);
		}
		break;
	case CM_DREQ_SENT:
		/* both ends disconnect: answer, and the program hears it */
		if (!can_tell(id))
			return;
		cm_msg_ids(rep, ROCE_CM_DREP, mad_tid(mad), id->local_id, id->remote_id, 0,
			   NULL, 0);
		cm_id_send(id, rep, false);
		cm_id_close(id);
		tell(id, MWP_CM_DREQ_RECEIVED);
		break;
	case CM_TIMEWAIT:
		cm->st.duplicates++;
		answer_again(id, ROCE_CM_DREP);
		break;
	case CM_DREQ_RCVD:
		cm->st.duplicates++;
		break;
	default:
		cm->st.out_of_state++;
		break;
	}
}

static void
drep_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	struct mwp_cm_id *id = named(cm, rx, CM_DREP_REMOTE_COMM_ID);
	struct mwp_cm_event *ev;

	if (id == NULL)
		return;
	if (id->state == CM_TIMEWAIT) {
		cm->st.duplicates++;
		return;
	}
	if (id->state != CM_DREQ_SENT) {
		cm->st.out_of_state++;
		return;
	}
	if (!can_tell(id))
		return;
	cm_id_close(id);
	ev = tell(id, MWP_CM_DREP_RECEIVED);
	if (ev != NULL)
		cm_msg_private(rx->mad, ROCE_CM_DREP, ev);
}

void
cm_conn_rx(struct mwp_cm *cm, const struct cm_rx *rx, uint16_t attr)
{
	switch (attr) {
	case ROCE_CM_REQ:
		req_rx(cm, rx);
		break;
	case ROCE_CM_MRA:
		mra_rx(cm, rx);
		break;
	case ROCE_CM_REJ:
		rej_rx(cm, rx);
		break;
	case ROCE_CM_REP:
		rep_rx(cm, rx);
		break;
	case ROCE_CM_RTU:
		rtu_rx(cm, rx);
		break;
	case ROCE_CM_DREQ:
		dreq_rx(cm, rx);
		break;
	case ROCE_CM_DREP:
		drep_rx(cm, rx);
		break;
	default:
		cm->st.unknown_attr++;	/* LAP, APR: no alternate paths */
		break;
	}
}

/* An exchange the peer never answered, after every retry. */
void
cm_conn_expired(struct mwp_cm_id *id)
{
	struct mwp_cm *cm = id->cm;
	uint8_t mad[ROCE_MAD_BYTES];

	cm->st.timeouts++;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		cm_msg_rej(mad, id->tid, id->local_id, 0, ROCE_CM_REF_REQ, ROCE_REJ_TIMEOUT,
			   NULL, 0);
		cm_id_send(id, mad, false);
		tell(id, MWP_CM_REQ_ERROR);
		to_idle(id);
		break;
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		cm_msg_rej(mad, id->tid, id->local_id, id->remote_id, ROCE_CM_REF_REP,
			   ROCE_REJ_TIMEOUT, NULL, 0);
		cm_id_send(id, mad, false);
		tell(id, MWP_CM_REP_ERROR);
		to_idle(id);
		break;
	case CM_DREQ_SENT:
		tell(id, MWP_CM_DREQ_ERROR);
		cm_id_close(id);
		break;
	default:
		cm_id_stop(id);
		break;
	}
}

/* ---- what the program asks ---- */

int
cm_conn_connect(struct mwp_cm_id *id, uint64_t service_id, const struct mwp_cm_path *path,
		const struct mwp_cm_conn_param *p)
{
	struct mwp_cm *cm = id->cm;
	uint8_t mad[ROCE_MAD_BYTES];

	if (p->private_data_len > CM_REQ_PRIVATE_BYTES ||
	    (p->qp_type != IBV_QPT_RC && p->qp_type != IBV_QPT_UC))
		return EINVAL;
	cm_gsi_path_av(path, &id->av);
	id->tid = cm_new_tid(cm);
	id->service_id = service_id;
	id->local_qpn = p->qp_num;
	id->peer_timeout = CM_RESPONSE_TIMEOUT;
	id->max_retries = CM_MAX_RETRIES;
	cm_msg_req(mad, id->tid, id->local_id, service_id, cm->guid, path, p,
		   CM_RESPONSE_TIMEOUT, CM_MAX_RETRIES);
	id->state = CM_REQ_SENT;
	cm_id_send(id, mad, true);
	return 0;
}

int
cm_conn_accept(struct mwp_cm_id *id, const struct mwp_cm_conn_param *p)
{
	uint8_t mad[ROCE_MAD_BYTES];

	if (id->state != CM_REQ_RCVD || p->private_data_len > CM_REP_PRIVATE_BYTES)
		return EINVAL;
	id->local_qpn = p->qp_num;
	cm_msg_rep(mad, id->tid, id->local_id, id->remote_id, id->cm->guid, p);
	if (id->listener != NULL) {
		id->listener->pending--;
		id->listener = NULL;
	}
	id->state = CM_REP_SENT;
	cm_id_send(id, mad, true);
	return 0;
}

int
cm_conn_reject(struct mwp_cm_id *id, uint16_t reason, const void *pd, uint8_t len)
{
	uint8_t mad[ROCE_MAD_BYTES];
	uint8_t msg;

	if (id->state == CM_REQ_RCVD)
		msg = ROCE_CM_REF_REQ;
	else if (id->state == CM_REP_RCVD)
		msg = ROCE_CM_REF_REP;
	else
		return EINVAL;
	if (len > CM_REJ_PRIVATE_BYTES)
		return EINVAL;
	cm_msg_rej(mad, id->tid, id->local_id, id->remote_id, msg, reason, pd, len);
	cm_id_send(id, mad, false);
	to_idle(id);
	return 0;
}

int
cm_conn_rtu(struct mwp_cm_id *id, const void *pd, uint8_t len)
{
	uint8_t mad[ROCE_MAD_BYTES];

	if (id->state != CM_REP_RCVD || len > CM_RTU_PRIVATE_BYTES)
		return EINVAL;
	cm_msg_ids(mad, ROCE_CM_RTU, id->tid, id->local_id, id->remote_id, 0, pd, len);
	id->state = CM_ESTABLISHED;
	cm_id_send(id, mad, false);
	return 0;
}

int
cm_conn_disconnect(struct mwp_cm_id *id, const void *pd, uint8_t len)
{
	struct mwp_cm *cm = id->cm;
	uint8_t mad[ROCE_MAD_BYTES];

	if (len > CM_DREQ_PRIVATE_BYTES)
		return EINVAL;
	switch (id->state) {
	case CM_ESTABLISHED:
		/* a new transaction */
		id->tid = cm_new_tid(cm);
		cm_msg_ids(mad, ROCE_CM_DREQ, id->tid, id->local_id, id->remote_id,
			   id->remote_qpn, pd, len);
		id->state = CM_DREQ_SENT;
		cm_id_send(id, mad, true);
		return 0;
	case CM_DREQ_RCVD:
		cm_msg_ids(mad, ROCE_CM_DREP, id->tid, id->local_id, id->remote_id, 0, pd, len);
		cm_id_send(id, mad, false);
		cm_id_close(id);
		return 0;
	default:
		return EINVAL;
	}
}

/* The program lets id go: what its state owes the peer is sent. */
void
cm_conn_destroy(struct mwp_cm_id *id)
{
	struct mwp_cm *cm = id->cm;
	uint8_t mad[ROCE_MAD_BYTES];
	const uint32_t slots = 1u << cm->id_bits;

	id->user = false;
	cm_event_forget(cm, id);
	switch (id->state) {
	case CM_LISTEN:
		/* its REQs waiting for an answer are the program's still (as
		 * rdma_cm's connection ids outlive their listener) */
		for (uint32_t i = 0; i < slots; i++)
			if (cm->ids[i].listener == id)
				cm->ids[i].listener = NULL;
		cm_id_free(id);
		break;
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		cm_msg_rej(mad, id->tid, id->local_id, 0, ROCE_CM_REF_REQ, ROCE_REJ_TIMEOUT,
			   NULL, 0);
		cm_send_to(cm, &id->av, mad);
		cm_id_free(id);
		break;
	case CM_REQ_RCVD:
	case CM_REP_RCVD:
		cm_conn_reject(id, ROCE_REJ_CONSUMER, NULL, 0);
		break;	/* to_idle freed it */
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		cm_msg_rej(mad, id->tid, id->local_id, id->remote_id, ROCE_CM_REF_REP,
			   ROCE_REJ_CONSUMER, NULL, 0);
		cm_send_to(cm, &id->av, mad);
		cm_id_free(id);
		break;
	case CM_ESTABLISHED:
	case CM_DREQ_RCVD:
		cm_conn_disconnect(id, NULL, 0);
		break;	/* the DREQ's retries, or timewait, then free */
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
		break;	/* freed when its timer ends */
	default:
		cm_id_free(id);
		break;
	}
}
