/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM's messages from and to MADs (IBA tables 106 to 120, as
 * wire/roce_mad.h names their fields), with the values Linux's kernel CM
 * puts in what a RoCE port leaves open: LIDs 0xffff (permissive), the
 * path's GIDs, P_Key 0xffff, no alternate path, no EE contexts.
 */
#include <string.h>

#include "mwp_cm_priv.h"

/* A MAD the CM takes: long enough, base version 1, the CM class and its
 * version 2, method Send. */
bool
cm_msg_valid(const uint8_t *mad, uint32_t len)
{
	const struct roce_mad_hdr *h = (const struct roce_mad_hdr *)mad;

	return len >= ROCE_MAD_BYTES && h->base_version == ROCE_MAD_BASE_VERSION &&
	       h->mgmt_class == ROCE_MAD_CLASS_CM &&
	       h->class_version == ROCE_MAD_CM_CLASS_VERSION &&
	       h->method == ROCE_MAD_METHOD_SEND;
}

static void
put_private(uint8_t *mad, unsigned int off, unsigned int room, const void *pd, uint8_t len)
{
	if (pd != NULL && len != 0)
		memcpy(mad + off, pd, RTE_MIN((unsigned int)len, room));
}

/* Where each attribute's private data is and how long it is. */
static const struct {
	uint16_t off, len;
} private_of[] = {
	[ROCE_CM_REQ - ROCE_CM_REQ] = { CM_REQ_PRIVATE_DATA, CM_REQ_PRIVATE_BYTES },
	[ROCE_CM_MRA - ROCE_CM_REQ] = { CM_MRA_PRIVATE_DATA, CM_MRA_PRIVATE_BYTES },
	[ROCE_CM_REJ - ROCE_CM_REQ] = { CM_REJ_PRIVATE_DATA, CM_REJ_PRIVATE_BYTES },
	[ROCE_CM_REP - ROCE_CM_REQ] = { CM_REP_PRIVATE_DATA, CM_REP_PRIVATE_BYTES },
	[ROCE_CM_RTU - ROCE_CM_REQ] = { CM_RTU_PRIVATE_DATA, CM_RTU_PRIVATE_BYTES },
	[ROCE_CM_DREQ - ROCE_CM_REQ] = { CM_DREQ_PRIVATE_DATA, CM_DREQ_PRIVATE_BYTES },
	[ROCE_CM_DREP - ROCE_CM_REQ] = { CM_DREP_PRIVATE_DATA, CM_DREP_PRIVATE_BYTES },
	[ROCE_CM_SIDR_REQ - ROCE_CM_REQ] = { CM_SIDR_REQ_PRIVATE_DATA,
					     CM_SIDR_REQ_PRIVATE_BYTES },
	[ROCE_CM_SIDR_REP - ROCE_CM_REQ] = { CM_SIDR_REP_PRIVATE_DATA,
					     CM_SIDR_REP_PRIVATE_BYTES },
};

void
cm_msg_private(const uint8_t *mad, uint16_t attr, struct mwp_cm_event *ev)
{
	const unsigned int a = attr - ROCE_CM_REQ;

	ev->private_len = 0;
	if (attr < ROCE_CM_REQ || a >= RTE_DIM(private_of) || private_of[a].len == 0)
		return;
	RTE_BUILD_BUG_ON(CM_RTU_PRIVATE_BYTES > MWP_CM_PRIVATE_MAX);
	ev->private_len = (uint8_t)private_of[a].len;
	memcpy(ev->private_data, mad + private_of[a].off, private_of[a].len);
}

void
cm_msg_req(uint8_t *mad, uint64_t tid, uint32_t local_id, uint64_t service_id,
	   uint64_t guid, const struct mwp_cm_path *path, const struct mwp_cm_conn_param *p,
	   uint8_t cm_timeout, uint8_t max_retries)
{
	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, ROCE_CM_REQ, tid);
	mad_put(mad, CM_REQ_LOCAL_COMM_ID, local_id);
	mad_put64(mad, CM_REQ_SERVICE_ID, service_id);
	mad_put64(mad, CM_REQ_LOCAL_CA_GUID, guid);
	mad_put(mad, CM_REQ_LOCAL_QPN, p->qp_num);
	mad_put(mad, CM_REQ_RESPONDER_RESOURCES, p->responder_resources);
	mad_put(mad, CM_REQ_INITIATOR_DEPTH, p->initiator_depth);
	mad_put(mad, CM_REQ_REMOTE_CM_TIMEOUT, cm_timeout);
	mad_put(mad, CM_REQ_TRANSPORT, p->qp_type == IBV_QPT_UC ? 1 : 0);
	mad_put(mad, CM_REQ_FLOW_CONTROL, p->flow_control);
	mad_put(mad, CM_REQ_STARTING_PSN, p->starting_psn);
	mad_put(mad, CM_REQ_LOCAL_CM_TIMEOUT, cm_timeout);
	mad_put(mad, CM_REQ_RETRY_COUNT, p->retry_count);
	mad_put(mad, CM_REQ_PKEY, path->pkey != 0 ? path->pkey : ROCE_DEFAULT_PKEY);
	mad_put(mad, CM_REQ_MTU, path->mtu);
	mad_put(mad, CM_REQ_RNR_RETRY_COUNT, p->rnr_retry_count);
	mad_put(mad, CM_REQ_MAX_CM_RETRIES, max_retries);
	mad_put(mad, CM_REQ_SRQ, p->srq);
	mad_put(mad, CM_REQ_PRIMARY_LOCAL_LID, 0xffff);
	mad_put(mad, CM_REQ_PRIMARY_REMOTE_LID, 0xffff);
	memcpy(mad + CM_REQ_PRIMARY_LOCAL_GID, path->sgid.raw, 16);
	memcpy(mad + CM_REQ_PRIMARY_REMOTE_GID, path->dgid.raw, 16);
	mad_put(mad, CM_REQ_PRIMARY_FLOW_LABEL, path->flow_label);
	mad_put(mad, CM_REQ_PRIMARY_TRAFFIC_CLASS, path->traffic_class);
	mad_put(mad, CM_REQ_PRIMARY_HOP_LIMIT, path->hop_limit != 0 ? path->hop_limit : 64);
	mad_put(mad, CM_REQ_PRIMARY_SL, path->sl);
	mad_put(mad, CM_REQ_PRIMARY_ACK_TIMEOUT, path->ack_timeout != 0 ? path->ack_timeout : 19);
	put_private(mad, CM_REQ_PRIVATE_DATA, CM_REQ_PRIVATE_BYTES, p->private_data,
		    p->private_data_len);
}

void
cm_msg_req_read(const uint8_t *mad, struct mwp_cm_event *ev, uint64_t *guid,
		uint8_t *peer_timeout, uint8_t *max_retries)
{
	struct mwp_cm_conn_param *p = &ev->param;
	struct mwp_cm_path *path = &ev->path;

	ev->service_id = mad_get64(mad, CM_REQ_SERVICE_ID);
	*guid = mad_get64(mad, CM_REQ_LOCAL_CA_GUID);
	*peer_timeout = (uint8_t)mad_get(mad, CM_REQ_REMOTE_CM_TIMEOUT);
	*max_retries = (uint8_t)mad_get(mad, CM_REQ_MAX_CM_RETRIES);
	p->qp_num = mad_get(mad, CM_REQ_LOCAL_QPN);
	p->qkey = mad_get(mad, CM_REQ_LOCAL_QKEY);
	p->responder_resources = (uint8_t)mad_get(mad, CM_REQ_RESPONDER_RESOURCES);
	p->initiator_depth = (uint8_t)mad_get(mad, CM_REQ_INITIATOR_DEPTH);
	p->qp_type = mad_get(mad, CM_REQ_TRANSPORT) == 1 ? IBV_QPT_UC : IBV_QPT_RC;
	p->flow_control = (uint8_t)mad_get(mad, CM_REQ_FLOW_CONTROL);
	p->starting_psn = mad_get(mad, CM_REQ_STARTING_PSN);
	p->retry_count = (uint8_t)mad_get(mad, CM_REQ_RETRY_COUNT);
	p->rnr_retry_count = (uint8_t)mad_get(mad, CM_REQ_RNR_RETRY_COUNT);
	p->srq = (uint8_t)mad_get(mad, CM_REQ_SRQ);
	path->pkey = (uint16_t)mad_get(mad, CM_REQ_PKEY);
	path->mtu = (enum ibv_mtu)mad_get(mad, CM_REQ_MTU);
	/* the REQ's local GID is the sender's: our path's destination */
	memcpy(path->dgid.raw, mad + CM_REQ_PRIMARY_LOCAL_GID, 16);
	memcpy(path->sgid.raw, mad + CM_REQ_PRIMARY_REMOTE_GID, 16);
	path->flow_label = mad_get(mad, CM_REQ_PRIMARY_FLOW_LABEL);
	path->traffic_class = (uint8_t)mad_get(mad, CM_REQ_PRIMARY_TRAFFIC_CLASS);
	path->hop_limit = (uint8_t)mad_get(mad, CM_REQ_PRIMARY_HOP_LIMIT);
	path->sl = (uint8_t)mad_get(mad, CM_REQ_PRIMARY_SL);
	path->ack_timeout = (uint8_t)mad_get(mad, CM_REQ_PRIMARY_ACK_TIMEOUT);
	cm_msg_private(mad, ROCE_CM_REQ, ev);
}

void
cm_msg_rep(uint8_t *mad, uint64_t tid, uint32_t local_id, uint32_t remote_id, uint64_t guid,
	   const struct mwp_cm_conn_param *p)
{
	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, ROCE_CM_REP, tid);
	mad_put(mad, CM_REP_LOCAL_COMM_ID, local_id);
	mad_put(mad, CM_REP_REMOTE_COMM_ID, remote_id);
	mad_put(mad, CM_REP_LOCAL_QKEY, p->qkey);
	mad_put(mad, CM_REP_LOCAL_QPN, p->qp_num);
	mad_put(mad, CM_REP_STARTING_PSN, p->starting_psn);
	mad_put(mad, CM_REP_RESPONDER_RESOURCES, p->responder_resources);
	mad_put(mad, CM_REP_INITIATOR_DEPTH, p->initiator_depth);
	mad_put(mad, CM_REP_TARGET_ACK_DELAY, p->target_ack_delay);
	mad_put(mad, CM_REP_FLOW_CONTROL, p->flow_control);
	mad_put(mad, CM_REP_RNR_RETRY_COUNT, p->rnr_retry_count);
	mad_put(mad, CM_REP_SRQ, p->srq);
	mad_put64(mad, CM_REP_LOCAL_CA_GUID, guid);
	put_private(mad, CM_REP_PRIVATE_DATA, CM_REP_PRIVATE_BYTES, p->private_data,
		    p->private_data_len);
}

void
cm_msg_rep_read(const uint8_t *mad, struct mwp_cm_event *ev, uint64_t *guid)
{
	struct mwp_cm_conn_param *p = &ev->param;

	*guid = mad_get64(mad, CM_REP_LOCAL_CA_GUID);
	p->qkey = mad_get(mad, CM_REP_LOCAL_QKEY);
	p->qp_num = mad_get(mad, CM_REP_LOCAL_QPN);
	p->starting_psn = mad_get(mad, CM_REP_STARTING_PSN);
	p->responder_resources = (uint8_t)mad_get(mad, CM_REP_RESPONDER_RESOURCES);
	p->initiator_depth = (uint8_t)mad_get(mad, CM_REP_INITIATOR_DEPTH);
	p->target_ack_delay = (uint8_t)mad_get(mad, CM_REP_TARGET_ACK_DELAY);
	p->flow_control = (uint8_t)mad_get(mad, CM_REP_FLOW_CONTROL);
	p->rnr_retry_count = (uint8_t)mad_get(mad, CM_REP_RNR_RETRY_COUNT);
	p->srq = (uint8_t)mad_get(mad, CM_REP_SRQ);
	cm_msg_private(mad, ROCE_CM_REP, ev);
}

void
cm_msg_rej(uint8_t *mad, uint64_t tid, uint32_t local_id, uint32_t remote_id, uint8_t msg,
	   uint16_t reason, const void *pd, uint8_t len)
{
	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, ROCE_CM_REJ, tid);
	mad_put(mad, CM_REJ_LOCAL_COMM_ID, local_id);
	mad_put(mad, CM_REJ_REMOTE_COMM_ID, remote_id);
	mad_put(mad, CM_REJ_MESSAGE, msg);
	mad_put(mad, CM_REJ_REASON, reason);
	put_private(mad, CM_REJ_PRIVATE_DATA, CM_REJ_PRIVATE_BYTES, pd, len);
}

void
cm_msg_mra(uint8_t *mad, uint64_t tid, uint32_t local_id, uint32_t remote_id, uint8_t msg,
	   uint8_t service_timeout)
{
	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, ROCE_CM_MRA, tid);
	mad_put(mad, CM_MRA_LOCAL_COMM_ID, local_id);
	mad_put(mad, CM_MRA_REMOTE_COMM_ID, remote_id);
	mad_put(mad, CM_MRA_MESSAGE, msg);
	mad_put(mad, CM_MRA_SERVICE_TIMEOUT, service_timeout);
}

/* RTU, DREQ, DREP: the two comm IDs lead; a DREQ names the QP it ends. */
void
cm_msg_ids(uint8_t *mad, uint16_t attr, uint64_t tid, uint32_t local_id, uint32_t remote_id,
	   uint32_t remote_qpn, const void *pd, uint8_t len)
{
	const unsigned int a = attr - ROCE_CM_REQ;

	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, attr, tid);
	mad_put(mad, CM_RTU_LOCAL_COMM_ID, local_id);
	mad_put(mad, CM_RTU_REMOTE_COMM_ID, remote_id);
	if (attr == ROCE_CM_DREQ)
		mad_put(mad, CM_DREQ_REMOTE_QPN, remote_qpn);
	put_private(mad, private_of[a].off, private_of[a].len, pd, len);
}

void
cm_msg_sidr_req(uint8_t *mad, uint64_t tid, uint32_t request_id, uint64_t service_id,
		uint16_t pkey, const void *pd, uint8_t len)
{
	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, ROCE_CM_SIDR_REQ, tid);
	mad_put(mad, CM_SIDR_REQ_REQUEST_ID, request_id);
	mad_put(mad, CM_SIDR_REQ_PKEY, pkey != 0 ? pkey : ROCE_DEFAULT_PKEY);
	mad_put64(mad, CM_SIDR_REQ_SERVICE_ID, service_id);
	put_private(mad, CM_SIDR_REQ_PRIVATE_DATA, CM_SIDR_REQ_PRIVATE_BYTES, pd, len);
}

void
cm_msg_sidr_rep(uint8_t *mad, uint64_t tid, uint32_t request_id, uint8_t status,
		uint64_t service_id, uint32_t qpn, uint32_t qkey, const void *pd, uint8_t len)
{
	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, ROCE_CM_SIDR_REP, tid);
	mad_put(mad, CM_SIDR_REP_REQUEST_ID, request_id);
	mad_put(mad, CM_SIDR_REP_STATUS, status);
	mad_put(mad, CM_SIDR_REP_QPN, qpn);
	mad_put64(mad, CM_SIDR_REP_SERVICE_ID, service_id);
	mad_put(mad, CM_SIDR_REP_QKEY, qkey);
	put_private(mad, CM_SIDR_REP_PRIVATE_DATA, CM_SIDR_REP_PRIVATE_BYTES, pd, len);
}
