/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CM_PRIV_H
#define MWP_CM_PRIV_H

/*
 * What the CM's files share: the id table, QP1's face (mwp_cm_gsi.c), the
 * event queue (mwp_cm_event.c), the messages (mwp_cm_msg.c) and the
 * state machines (mwp_cm_conn.c, mwp_cm_sidr.c), which mwp_cm.c runs
 * under the CM's lock.
 */

#include <pthread.h>

#include "mwp_cm.h"
#include "roce_mad.h"

/* An id's state (IBA 12.9.6's, and the kernel's names). */
enum cm_state {
	CM_FREE,		/* slot unused */
	CM_LISTEN,
	CM_REQ_SENT,
	CM_MRA_REQ_RCVD,	/* our REQ MRAed: waiting longer */
	CM_REQ_RCVD,		/* the program decides; an MRA is owed on a
				 * duplicate REQ (the kernel's delayed MRA) */
	CM_REP_SENT,
	CM_MRA_REP_RCVD,
	CM_REP_RCVD,		/* the program moves its QP, then RTU */
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_TIMEWAIT,
	CM_SIDR_REQ_SENT,
	CM_SIDR_REQ_RCVD,
	CM_IDLE,		/* done (rejected, timed out, answered): the
				 * program still holds it */
};

/* One exchange's retries: the last MAD sent, again until answered. */
struct cm_retry {
	uint8_t mad[ROCE_MAD_BYTES];
	uint64_t deadline;	/* TSC; 0: no timer */
	uint64_t interval;	/* TSC between tries */
	uint8_t left;		/* tries left */
};

struct mwp_cm_id {
	struct mwp_cm *cm;
	enum cm_state state;
	bool user;		/* the program holds it */
	void *context;
	uint32_t local_id;	/* our communication ID (request ID) */
	uint32_t remote_id;
	uint64_t remote_guid;
	uint32_t remote_qpn;
	uint32_t local_qpn;	/* the QP a connection joins (a DREQ names it) */
	uint64_t tid;		/* the exchange's transaction ID */
	uint64_t service_id, mask;	/* listener */
	uint32_t backlog, pending;	/* listener: REQs waiting */
	struct mwp_cm_id *listener;	/* a REQ's, until answered */
	struct ibv_ah_attr av;	/* the peer, as QP1 reaches it */
	uint8_t peer_timeout;	/* the peer's CM response timeout (exp) */
	uint8_t max_retries;	/* the peer's max CM retries */
	struct cm_retry rt;
	uint8_t last_mad[ROCE_MAD_BYTES];	/* sent again on a duplicate */
	uint16_t last_attr;	/* of last_mad; 0: none */
};

struct mwp_cm_gsi;

struct mwp_cm {
	pthread_mutex_t lock;
	struct ibv_context *ctx;
	struct mwp_port *port;
	struct mwp_cm_gsi *gsi;
	uint64_t guid;
	uint64_t now, hz;
	uint64_t timewait;	/* TSC */
	uint32_t tid_hi;	/* the TIDs we start: tid_hi << 32 | tid_seq++ */
	uint32_t tid_seq;
	uint64_t next_due;	/* no timer is due before this (TSC) */
	/* the caller's sleep (mwp_cm_set_wake, mwp_cm_idle_until): until
	 * when it sleeps (0: it is awake), and what wakes it */
	uint64_t sleep_until;
	void (*wake)(void *arg);
	void *wake_arg;
	uint32_t max_ids, nb_ids;
	struct mwp_cm_id *ids;	/* max_ids slots; index = local id's low bits */
	uint32_t id_bits;	/* log2 of the slots */
	/* events */
	struct mwp_cm_event *ev;
	uint32_t ev_size, ev_head, ev_count;
	int efd;
	struct mwp_cm_stats st;
	/* mwp_cm_share: our IDs' top part_bits bits are part (part_bits 0:
	 * not shared) */
	uint32_t part, part_bits;
	struct mwp_cm_share_ops share;
};

/* Is local_id (a message's name for one of ours) another process's?
 * Counted. */
static inline bool
cm_others_id(struct mwp_cm *cm, uint32_t local_id)
{
	if (cm->part_bits == 0 || local_id >> (32 - cm->part_bits) == cm->part)
		return false;
	cm->st.others++;
	return true;
}

/* A request for service sid that no listener of ours takes: true if it
 * is left to another process (counted), false if we answer it. */
static inline bool
cm_leave_stray(struct mwp_cm *cm, uint64_t sid)
{
	if (cm->part_bits == 0)
		return false;
	if (cm->share.others_listen(cm->share.arg, sid) ||
	    !cm->share.answers_strays(cm->share.arg)) {
		cm->st.others++;
		return true;
	}
	return false;
}

/* The sleeping caller has work (a timer due before its sleep ends):
 * wake it.  CM lock held. */
static inline void
cm_wake(struct mwp_cm *cm, uint64_t due)
{
	if (cm->wake != NULL && cm->sleep_until != 0 && due < cm->sleep_until) {
		cm->sleep_until = 0;
		cm->wake(cm->wake_arg);
	}
}

/* ---- mwp_cm_gsi.c: QP1 ---- */

/* A MAD QP1 received: its bytes and the way back to its sender. */
struct cm_rx {
	const uint8_t *mad;
	uint32_t len;		/* bytes after the GRH area */
	struct ibv_ah_attr av;
	uint32_t src_qp;
};

struct mwp_cm_gsi *cm_gsi_create(struct ibv_context *ctx, struct mwp_port *port,
				 uint32_t recv_depth, uint32_t send_depth);
void cm_gsi_destroy(struct mwp_cm_gsi *g);
/* QP1's CQ (its receives' and sends' completions). */
struct ibv_cq *cm_gsi_cq(const struct mwp_cm_gsi *g);
/* Call fn for each MAD received (at most max), each receive posted again
 * after it; send completions reap their slots.  Returns the MADs. */
unsigned int cm_gsi_poll(struct mwp_cm_gsi *g, unsigned int max,
			 void (*fn)(struct mwp_cm *cm, const struct cm_rx *rx),
			 struct mwp_cm *cm);
/* Send a 256-byte MAD to QP1 at av: 0, or ENOBUFS (no slot), or errno. */
int cm_gsi_send(struct mwp_cm_gsi *g, const struct ibv_ah_attr *av, const uint8_t *mad);
/* MADs not yet sent: posted and not completed, or waiting for a slot. */
uint32_t cm_gsi_pending(const struct mwp_cm_gsi *g);
/* The av that reaches path's peer from this port. */
void cm_gsi_path_av(const struct mwp_cm_path *path, struct ibv_ah_attr *av);

/* ---- mwp_cm_event.c ---- */

int cm_event_init(struct mwp_cm *cm, uint32_t depth);
void cm_event_fini(struct mwp_cm *cm);
bool cm_event_room(const struct mwp_cm *cm);
/* A new event for id (the caller checked the room): filled by the caller. */
struct mwp_cm_event *cm_event_new(struct mwp_cm *cm, enum mwp_cm_event_type type,
				  struct mwp_cm_id *id);
int cm_event_take(struct mwp_cm *cm, struct mwp_cm_event *ev);
void cm_event_forget(struct mwp_cm *cm, const struct mwp_cm_id *id);

/* ---- mwp_cm_msg.c: messages from and to MADs ---- */

/* Is this a CM MAD we take (version, class, method)?  false: counted. */
bool cm_msg_valid(const uint8_t *mad, uint32_t len);
void cm_msg_req(uint8_t *mad, uint64_t tid, uint32_t local_id, uint64_t service_id,
		uint64_t guid, const struct mwp_cm_path *path,
		const struct mwp_cm_conn_param *p, uint8_t cm_timeout, uint8_t max_retries);
void cm_msg_req_read(const uint8_t *mad, struct mwp_cm_event *ev, uint64_t *guid,
		     uint8_t *peer_timeout, uint8_t *max_retries);
void cm_msg_rep(uint8_t *mad, uint64_t tid, uint32_t local_id, uint32_t remote_id,
		uint64_t guid, const struct mwp_cm_conn_param *p);
void cm_msg_rep_read(const uint8_t *mad, struct mwp_cm_event *ev, uint64_t *guid);
void cm_msg_rej(uint8_t *mad, uint64_t tid, uint32_t local_id, uint32_t remote_id,
		uint8_t msg, uint16_t reason, const void *pd, uint8_t len);
void cm_msg_mra(uint8_t *mad, uint64_t tid, uint32_t local_id, uint32_t remote_id,
		uint8_t msg, uint8_t service_timeout);
/* RTU, DREQ (remote_qpn), DREP: comm IDs and private data */
void cm_msg_ids(uint8_t *mad, uint16_t attr, uint64_t tid, uint32_t local_id,
		uint32_t remote_id, uint32_t remote_qpn, const void *pd, uint8_t len);
void cm_msg_sidr_req(uint8_t *mad, uint64_t tid, uint32_t request_id, uint64_t service_id,
		     uint16_t pkey, const void *pd, uint8_t len);
void cm_msg_sidr_rep(uint8_t *mad, uint64_t tid, uint32_t request_id, uint8_t status,
		     uint64_t service_id, uint32_t qpn, uint32_t qkey, const void *pd,
		     uint8_t len);
/* The private data of a message (its place by attribute) into ev. */
void cm_msg_private(const uint8_t *mad, uint16_t attr, struct mwp_cm_event *ev);

/* ---- mwp_cm_ids.c: the id table, sends with retries ---- */

struct mwp_cm_id *cm_id_new(struct mwp_cm *cm, enum cm_state state, void *context);
/* The id whose local ID is local_id, or NULL. */
struct mwp_cm_id *cm_id_find(struct mwp_cm *cm, uint32_t local_id);
void cm_id_free(struct mwp_cm_id *id);
/* Closed: to TIMEWAIT (its IDs reserved a while), or freed if the program
 * let it go and nothing is owed. */
void cm_id_close(struct mwp_cm_id *id);
/* Send mad to the id's peer and keep it for duplicates; with retries:
 * again every interval until cm_id_stop (left tries). */
void cm_id_send(struct mwp_cm_id *id, const uint8_t *mad, bool retry);
void cm_id_stop(struct mwp_cm_id *id);
/* Its exchange's MAD once more (a timeout), one try fewer left. */
void cm_id_resend(struct mwp_cm_id *id);
/* The next try after interval (TSC) from now (an MRA's wait). */
void cm_id_wait(struct mwp_cm_id *id, uint64_t interval);
/* A transaction ID for an exchange we start. */
uint64_t cm_new_tid(struct mwp_cm *cm);
/* A MAD to an address with no id (REJ, DREP, SIDR REP of no listener). */
void cm_send_to(struct mwp_cm *cm, const struct ibv_ah_attr *av, const uint8_t *mad);
/* Timeout (TSC) of a CM response timeout exponent: 4.096 us * 2^t,
 * twice, as the kernel waits for a round trip. */
uint64_t cm_timeout_tsc(const struct mwp_cm *cm, uint8_t t);

/* The listener that covers service_id, or NULL. */
struct mwp_cm_id *cm_listener(struct mwp_cm *cm, uint64_t service_id);

/* ---- mwp_cm_conn.c, mwp_cm_sidr.c: the state machines ---- */

void cm_conn_rx(struct mwp_cm *cm, const struct cm_rx *rx, uint16_t attr);
void cm_conn_expired(struct mwp_cm_id *id);
int cm_conn_connect(struct mwp_cm_id *id, uint64_t service_id, const struct mwp_cm_path *path,
		    const struct mwp_cm_conn_param *p);
int cm_conn_accept(struct mwp_cm_id *id, const struct mwp_cm_conn_param *p);
int cm_conn_reject(struct mwp_cm_id *id, uint16_t reason, const void *pd, uint8_t len);
int cm_conn_rtu(struct mwp_cm_id *id, const void *pd, uint8_t len);
int cm_conn_disconnect(struct mwp_cm_id *id, const void *pd, uint8_t len);
void cm_conn_destroy(struct mwp_cm_id *id);
void cm_sidr_rx(struct mwp_cm *cm, const struct cm_rx *rx, uint16_t attr);
void cm_sidr_expired(struct mwp_cm_id *id);
int cm_sidr_request(struct mwp_cm_id *id, uint64_t service_id, const struct mwp_cm_path *path,
		    const void *pd, uint8_t len);
int cm_sidr_answer(struct mwp_cm_id *id, uint8_t status, const struct mwp_cm_conn_param *p);

/* Our CM response timeout and retries, as the kernel's rdma_cm sends. */
#define CM_RESPONSE_TIMEOUT 20
#define CM_MAX_RETRIES 15
/* The MRA service timeout the kernel's rdma_cm sends on a duplicate REQ. */
#define CM_MRA_TIMEOUT 24
/* The most a peer's response or service timeout counts (2 x 4.096 us x
 * 2^24: 137 s a try): the kernel's rdma_cm sends 20 and 24; a peer's 31
 * would hold an id through 15 retries for days. */
#define CM_PEER_TIMEOUT_MAX 24

#endif /* MWP_CM_PRIV_H */
