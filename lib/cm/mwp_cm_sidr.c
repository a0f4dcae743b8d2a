/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Service ID resolution (IBA 12.11): how a UD QP finds a peer's QP and
 * Q_Key.  A SIDR REQ for no listener is answered "no service" (status 1)
 * as the kernel answers; a duplicate of one the program is deciding on is
 * dropped; a SIDR REP finds our REQ by its request ID (our local ID).
 */
#include <errno.h>
#include <string.h>

#include "mwp_cm_priv.h"

static struct mwp_cm_id *
find_req(struct mwp_cm *cm, uint32_t request_id, const struct ibv_ah_attr *av)
{
	const uint32_t slots = 1u << cm->id_bits;

	for (uint32_t i = 0; i < slots; i++) {
		struct mwp_cm_id *id = &cm->ids[i];

		if (id->state == CM_SIDR_REQ_RCVD && id->remote_id == request_id &&
		    memcmp(&id->av.grh.dgid, &av->grh.dgid, sizeof(av->grh.dgid)) == 0)
			return id;
	}
	return NULL;
}

static void
sidr_req_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	const uint8_t *mad = rx->mad;
	const uint32_t rid = mad_get(mad, CM_SIDR_REQ_REQUEST_ID);
	const uint64_t sid = mad_get64(mad, CM_SIDR_REQ_SERVICE_ID);
	struct mwp_cm_event *ev;
	struct mwp_cm_id *id, *l;
	uint8_t rep[ROCE_MAD_BYTES];

	if (find_req(cm, rid, &rx->av) != NULL) {
		cm->st.duplicates++;
		return;
	}
	l = cm_listener(cm, sid);
	if (l == NULL && cm_leave_stray(cm, sid))
		return;
	if (l == NULL) {
		cm->st.sidr_no_listener++;
		cm_msg_sidr_rep(rep, mad_tid(mad), rid, ROCE_SIDR_NO_SERVICE, sid, 0, 0, NULL, 0);
		cm_send_to(cm, &rx->av, rep);
		return;
	}
	if (!cm_event_room(cm)) {
		cm->st.event_full++;
		return;
	}
	id = cm_id_new(cm, CM_SIDR_REQ_RCVD, l->context);
	if (id == NULL) {
		cm->st.rej_no_ids++;
		cm_msg_sidr_rep(rep, mad_tid(mad), rid, ROCE_SIDR_REJECT, sid, 0, 0, NULL, 0);
		cm_send_to(cm, &rx->av, rep);
		return;
	}
	id->remote_id = rid;
	id->tid = mad_tid(mad);
	id->service_id = sid;
	id->av = rx->av;
	ev = cm_event_new(cm, MWP_CM_SIDR_REQ_RECEIVED, id);
	ev->listen_id = l;
	ev->service_id = sid;
	ev->path.dgid = rx->av.grh.dgid;
	ev->path.pkey = (uint16_t)mad_get(mad, CM_SIDR_REQ_PKEY);
	ev->path.hop_limit = rx->av.grh.hop_limit;
	ev->path.traffic_class = rx->av.grh.traffic_class;
	cm_msg_private(mad, ROCE_CM_SIDR_REQ, ev);
}

static void
sidr_rep_rx(struct mwp_cm *cm, const struct cm_rx *rx)
{
	const uint8_t *mad = rx->mad;
	struct mwp_cm_id *id = cm_id_find(cm, mad_get(mad, CM_SIDR_REP_REQUEST_ID));
	struct mwp_cm_event *ev;

	if (id == NULL) {
		cm->st.unknown_id++;
		return;
	}
	if (id->state != CM_SIDR_REQ_SENT) {
		cm->st.duplicates++;
		return;
	}
	if (id->user && !cm_event_room(cm)) {
		cm->st.event_full++;
		return;	/* our retry brings the answer again */
	}
	cm_id_stop(id);
	if (!id->user) {
		cm_id_free(id);
		return;
	}
	id->state = CM_IDLE;
	ev = cm_event_new(cm, MWP_CM_SIDR_REP_RECEIVED, id);
	ev->sidr_status = (uint8_t)mad_get(mad, CM_SIDR_REP_STATUS);
	ev->param.qp_num = mad_get(mad, CM_SIDR_REP_QPN);
	ev->param.qkey = mad_get(mad, CM_SIDR_REP_QKEY);
	ev->service_id = mad_get64(mad, CM_SIDR_REP_SERVICE_ID);
	cm_msg_private(mad, ROCE_CM_SIDR_REP, ev);
}

void
cm_sidr_rx(struct mwp_cm *cm, const struct cm_rx *rx, uint16_t attr)
{
	if (attr == ROCE_CM_SIDR_REQ)
		sidr_req_rx(cm, rx);
	else
		sidr_rep_rx(cm, rx);
}

void
cm_sidr_expired(struct mwp_cm_id *id)
{
	struct mwp_cm *cm = id->cm;

	cm->st.timeouts++;
	cm_id_stop(id);
	if (!id->user) {
		cm_id_free(id);
		return;
	}
	id->state = CM_IDLE;
	if (cm_event_room(cm))
		cm_event_new(cm, MWP_CM_SIDR_REQ_ERROR, id);
	else
		cm->st.event_full++;
}

int
cm_sidr_request(struct mwp_cm_id *id, uint64_t service_id, const struct mwp_cm_path *path,
		const void *pd, uint8_t len)
{
	struct mwp_cm *cm = id->cm;
	uint8_t mad[ROCE_MAD_BYTES];

	if (len > CM_SIDR_REQ_PRIVATE_BYTES)
		return EINVAL;
	cm_gsi_path_av(path, &id->av);
	id->tid = cm_new_tid(cm);
	id->service_id = service_id;
	id->peer_timeout = CM_RESPONSE_TIMEOUT;
	id->max_retries = CM_MAX_RETRIES;
	cm_msg_sidr_req(mad, id->tid, id->local_id, service_id, path->pkey, pd, len);
	id->state = CM_SIDR_REQ_SENT;
	cm_id_send(id, mad, true);
	return 0;
}

int
cm_sidr_answer(struct mwp_cm_id *id, uint8_t status, const struct mwp_cm_conn_param *p)
{
	uint8_t mad[ROCE_MAD_BYTES];

	if (id->state != CM_SIDR_REQ_RCVD || p->private_data_len > CM_SIDR_REP_PRIVATE_BYTES)
		return EINVAL;
	cm_msg_sidr_rep(mad, id->tid, id->remote_id, status, id->service_id,
			status == ROCE_SIDR_OK ? p->qp_num : 0,
			status == ROCE_SIDR_OK ? p->qkey : 0, p->private_data,
			p->private_data_len);
	cm_id_send(id, mad, false);
	id->state = CM_IDLE;
	return 0;
}
