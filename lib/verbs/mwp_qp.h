/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_QP_H
#define MWP_QP_H

/* A queue pair (mwp_qp.c): its send queue (posted WQEs, then the window
 * that holds each until its completion; mwp_sq.c), its receive queue
 * (mwp_rq.c), and the state of its requester (req/) and responder
 * (resp/) sides.  Private. */

#include <stddef.h>

#include <rte_ring.h>

#include "mwp_ah.h"
#include "mwp_cq.h"
#include "mwp_dcqcn.h"
#include "mwp_device.h"
#include "mwp_query.h"
#include "mwp_timer.h"
#include "roce_build.h"

#define MWP_WQE_F_SIGNALED	0x01
#define MWP_WQE_F_FENCE		0x02	/* IBV_SEND_FENCE */
#define MWP_WQE_F_DET_BIND	0x04	/* mwp_det_bind: fences what follows */
#define MWP_WQE_F_TYPE1		0x08	/* bind posted by ibv_bind_mw */
#define MWP_WQE_F_INLINE	0x10	/* the data is in inline[] (IBV_SEND_INLINE) */

/** A send work request as the send ring holds it. */
struct mwp_wqe {
	uint64_t wr_id;
	uint32_t opcode;		/* enum ibv_wr_opcode */
	uint32_t flags;			/* MWP_WQE_F_* */
	uint32_t send_flags;		/* as posted */
	uint32_t num_sge;
	uint32_t imm_or_inv;		/* imm_data (network order) or rkey */
	uint32_t inline_len;		/* MWP_WQE_F_INLINE: bytes in inline[] */
	union {
		struct {
			uint32_t mw_index;
			uint32_t mw_rkey;	/* Type 1: mw->rkey when posted */
			uint32_t new_rkey;
			uint32_t mr_lkey;	/* 0: no region (unbind) */
			uint64_t addr;
			uint64_t length;
			uint32_t access;
		} bind;
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
			uint64_t compare_add;
			uint64_t swap;
		} rdma;
		struct {
			struct mwp_ud_dest dest;	/* the AH's, copied */
			uint32_t remote_qpn;
			uint32_t remote_qkey;	/* the QP's own if its high bit is set */
		} ud;
	};
	union {
		struct ibv_sge sge[MWP_MAX_SGE];
		uint8_t inline_data[MWP_MAX_INLINE];	/* MWP_WQE_F_INLINE:
							 * copied at post time */
	};
};

/* The bytes of a WQE that mean something: its header, and the SGEs it
 * has or its inline data.  A WQE is 336 bytes for 16 SGEs and 256 inline
 * bytes; one SGE is 80.  Posting, the send queue and the window copy
 * only these (the rest is never read). */
static inline size_t
mwp_wqe_size(const struct mwp_wqe *w)
{
	return offsetof(struct mwp_wqe, sge) +
	       ((w->flags & MWP_WQE_F_INLINE) ? w->inline_len :
		w->num_sge * sizeof(w->sge[0]));
}

/* Where an executed WQE is on its way to its completion. */
enum mwp_swqe_state {
	MWP_SWQE_READY,		/* complete: deliver in order */
	MWP_SWQE_GRACE,		/* complete once the RCU token has expired */
	MWP_SWQE_REQ,		/* a data WQE with the requester (roce_req.c) */
};

/*
 * A WQE from its execution to its completion: the send queue's window,
 * in posting order.  A data WQE stays here, with the requester's state,
 * until the peer has acknowledged it (RC) or it is sent (UC): go-back-N
 * rebuilds its packets from it.
 */
struct mwp_swqe {
	struct mwp_wqe w;
	struct ibv_wc wc;
	uint64_t token;		/* MWP_SWQE_GRACE */
	uint8_t state;		/* enum mwp_swqe_state */
	uint8_t signaled;
	uint8_t rd_atomic;	/* a READ or ATOMIC (IBV_SEND_FENCE waits) */
	uint8_t det_bind;	/* fences everything after it */
	/* requester (MWP_SWQE_REQ) */
	uint8_t started;	/* PSNs given; packets have been sent */
	uint8_t sent;		/* every packet has been sent once */
	uint32_t total;		/* message bytes */
	uint32_t npsn;		/* PSNs it uses (a READ: its responses') */
	uint32_t first_psn, last_psn;
	uint32_t resp_psn;	/* READ, ATOMIC: the next response expected */
	uint32_t rd_req_psn;	/* READ: the PSN of the last request sent */
	/* the first SGE's region as mwp_wqe_prepare found it, while the key
	 * table's generation is keys_gen (mwp_wqe_span) */
	const struct mwp_binding *b0;
	uint64_t keys_gen;
};

struct mwp_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	struct ibv_sge sge[MWP_MAX_SGE];
};

#define MWP_ATOMIC_CACHE	16	/* atomics remembered for replays */
#define MWP_MAX_RD		16	/* READ requests being answered */
#define MWP_RD_READ		0
#define MWP_RD_ANSWER		1

/* A READ request whose responses are not all sent yet. */
struct mwp_rd {
	uint64_t va;		/* next byte to send; MWP_RD_ANSWER: orig */
	uint32_t rkey;
	uint32_t left;		/* bytes still to send */
	uint32_t psn;		/* PSN of the next response */
	uint8_t first;		/* the next response is the first */
	uint8_t nak_on_fail;	/* a re-validation failure NAKs (not for dups) */
	/* MWP_RD_READ: READ responses; MWP_RD_ANSWER: one answer (an atomic
	 * ACK, or an RNR, sequence or fatal NAK) owed after the entries
	 * before it, so that no answer overtakes a READ's responses */
	uint8_t kind;
	uint8_t opcode;		/* MWP_RD_ANSWER: ACKNOWLEDGE or ATOMIC_ACK */
	uint8_t syn;		/* MWP_RD_ANSWER: the AETH syndrome */
	uint32_t msn;		/* MWP_RD_ANSWER: the MSN it carries */
	/* an ACK owed for requests before this READ, queued behind earlier
	 * READs' responses: it goes out just before this READ's first */
	uint8_t pre_ack;
	uint32_t pre_ack_psn, pre_ack_msn;
	/* the host address the request's own access check gave, and the
	 * burst it was made in: a first response sent in that burst needs
	 * no second lookup (every later one looks the key up again) */
	const uint8_t *checked_src;
	uint64_t checked_gen;
};

/* The responder side of a QP (memory-windows.md section 3; IBA 9.7). */
struct mwp_resp {
	/* what a key's owner is checked against (mwp_access_req's pd and
	 * qpn, in that order): the QP's PD handle and number, fixed at
	 * creation and kept here, on the responder's line */
	uint32_t own_pd;
	uint32_t own_qpn;
	uint32_t epsn;		/* expected PSN */
	uint32_t msn;		/* message sequence number */
	uint32_t in_msg;	/* 0, or ROCE_M_SEND / ROCE_M_WRITE: mid-message */
	uint8_t nak_seq;	/* a PSN sequence error NAK is out for epsn */
	uint8_t err;		/* RC: a fatal NAK was sent; requests dropped */
	uint8_t err_queued;	/* ... or waits behind READ responses in rd[] */
	uint8_t ack_pending;	/* an ACK for ack_psn is owed */
	uint32_t ack_psn;
	uint32_t ack_msn;	/* the MSN when it was owed */
	/* the receive being filled by a SEND in progress; a UC message
	 * that breaks leaves it held for the next one (IBA 9.7.5.1.2) */
	struct mwp_rwqe recv;
	uint32_t recv_len;	/* bytes placed so far */
	uint8_t recv_held;	/* recv is taken from the ring, not completed */
	/* the last receive SGE's local key looked up, and its region
	 * (place_recv, roce_resp_exec.c) */
	struct mwp_key_memo recv_key;
	/* the WRITE in progress */
	uint64_t w_va;
	uint64_t w_left;
	uint32_t w_rkey;
	uint32_t w_total;
	/* w_rkey's descriptor as a packet of burst w_gen on queue w_queue
	 * found it: valid in that burst only (the key table frees
	 * descriptors between bursts) */
	const struct mwp_binding *w_b;
	const struct mwp_owner *w_queue;
	uint64_t w_gen;
	/* READ responses still to send */
	struct mwp_rd rd[MWP_MAX_RD];
	uint8_t rd_head, rd_count;
	uint8_t rd_listed;	/* in its port's rd_pending list */
	/* results of recent atomics, for duplicates (never re-executed) */
	struct {
		uint32_t psn;
		uint8_t valid;
		uint64_t orig;
	} atom[MWP_ATOMIC_CACHE];
	uint8_t atom_next;
	struct mwp_flow flow;	/* where answers go: the last request mirrored */
	struct mwp_flow_tmpl tmpl;	/* flow's headers, for each answer */
	uint64_t flow_gen;	/* burst in which flow was last mirrored */
	struct mwp_qp_stats st;
};

/* Answers of this responder still waiting to go out (READ responses, and
 * what is queued behind them): a new answer must wait behind them. */
static inline bool
mwp_resp_waiting(const struct mwp_resp *r)
{
	return r->rd_count != 0 && (!r->err || r->err_queued);
}

/* The requester side of an RC/UC QP (IBA 9.7.4, 9.7.5.2, 9.7.6). */
struct mwp_req {
	uint32_t psn;		/* the next new request's PSN */
	uint32_t una;		/* RC: the oldest PSN not acknowledged */
	uint32_t tx_psn;	/* the next PSN to (re)send */
	uint32_t sent_psn;	/* the first PSN never sent */
	uint32_t tx_pos;	/* the send queue position holding tx_psn, or
				 * the next WQE to start */
	uint32_t rd_out;	/* READs and ATOMICs started, not complete */
	uint32_t nb_unsent;	/* data WQEs in the window not yet sent whole
				 * once: a bind or invalidation after them
				 * waits (the send queue runs in order) */
	uint32_t rnr_psn;	/* the PSN an RNR NAK named */
	uint8_t retry_left;	/* retries left (timeouts, sequence NAKs) */
	uint8_t rnr_left;	/* RNR retries left; rnr_retry 7: forever */
	uint8_t rnr_wait;	/* waiting out an RNR NAK's timer */
	uint8_t retrying;	/* a go-back-N started, no progress since:
				 * NAKs and implicit NAKs start no other
				 * (responses of the old flight are still
				 * coming); a timeout does */
	uint8_t have_mac;	/* mac is the peer's */
	uint64_t ack_clock;	/* when the oldest unacknowledged packet was
				 * last sent, or progress last made */
	uint64_t mac_tsc;	/* when mac was last looked up */
	struct rte_ether_addr mac;	/* the peer's */
	uint8_t gid[16];	/* UD: whose mac is (the last destination) */
	struct mwp_flow flow;	/* the headers towards it (have_mac) */
	struct mwp_flow_tmpl tmpl;	/* flow's, for each request (RC, UC) */
	struct mwp_timer tmr;	/* the local ACK or RNR timer */
	struct mwp_req_stats st;
};

struct mwp_owner;
struct mwp_srq;

struct mwp_wr_batch;

struct mwp_qp {
	/* an extended QP (ibv_create_qp_ex with send_ops_flags) begins as
	 * an ordinary one; its ibv_wr_* API is mwp_wr.c's */
	union {
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqp_ex;
	};
	struct mwp_wr_batch *wrb;	/* NULL: not extended */
	TAILQ_ENTRY(mwp_qp) next;
	struct mwp_dev *dev;
	struct mwp_cq *scq, *rcq;
	bool sq_sig_all;
	struct ibv_qp_cap cap;		/* as created (max_recv_wr at least 1) */
	/* send queue: posted (ring), then executed (swq, in order) */
	struct rte_ring *sq;		/* of struct mwp_wqe */
	struct mwp_swqe *swq;		/* [swq_mask + 1] */
	uint32_t swq_mask;
	uint32_t sq_head, sq_tail;	/* swq positions: oldest not delivered,
					 * next free (free-running) */
	/* slots held from post to completion (verbs' send queue depth):
	 * posted - freed.  sq_posted is the posters' (under sq_post_lock),
	 * sq_freed the runner's (mwp_sq_deliver, store-release) */
	uint32_t sq_posted, sq_freed;
	uint32_t sq_post_lock;		/* posters, one at a time (mwp_sq.c) */
	uint32_t rd_atomic_out;		/* READ/ATOMIC executed, not complete */
	uint32_t det_bind_out;		/* DET binds not yet completed */
	/* the last local key mwp_wqe_prepare looked up, and its region
	 * (its thread only) */
	struct mwp_key_memo lkey;
	struct rte_ring *rq;		/* of struct mwp_rwqe */
	struct mwp_srq *srq;		/* or its receives are this SRQ's */
	uint32_t qkey;			/* UD */
	/* attributes */
	unsigned int access_flags;
	enum ibv_mtu path_mtu;
	uint32_t dest_qpn, rq_psn, sq_psn;
	uint8_t max_dest_rd_atomic, max_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;		/* local ACK timeout: 4.096 us << timeout */
	uint8_t retry_cnt, rnr_retry;
	uint8_t port_num;
	uint8_t peer_gid[16];		/* IPv6, or ::ffff:a.b.c.d */
	bool peer_ipv4;
	uint8_t tclass;			/* the AV's traffic class: its DSCP
					 * goes into the requests */
	uint8_t transport;		/* enum roce_transport of qp_type */
	struct rte_ether_addr peer_mac;	/* configured: no address resolution */
	bool has_peer_mac;
	/* who runs it (mwp_sched.h), and its place there */
	struct mwp_owner *owner;	/* NULL: mwp_poll runs its send queue */
	TAILQ_ENTRY(mwp_qp) eng_link;	/* in its engine's QPs */
	TAILQ_ENTRY(mwp_qp) sq_link;	/* in the engine's send-queue list */
	TAILQ_ENTRY(mwp_qp) tx_link;	/* in its queue's list of senders */
	uint8_t on_sq_list, on_tx_list;
	uint8_t db_rung;		/* a doorbell for it is in the engine's ring */
	/* its engine looks at its send queue every pass: a post rings no
	 * doorbell (written by the engine; read by posters) */
	uint8_t sq_watched;
	uint8_t on_watch_list;
	TAILQ_ENTRY(mwp_qp) watch_link;	/* in the engine's watch list */
	uint32_t watch_tail;		/* the send queue's tail last seen */
	uint64_t watch_tsc;		/* when a post was last seen */
	/* the requester */
	struct mwp_req req;
	/* responder: the port it is attached to, and its state */
	struct mwp_port *port;
	struct mwp_resp resp;
	/* congestion control: the reaction point (its requests and READ
	 * responses paced while dcqcn.limited), when it last sent a CNP,
	 * its counters */
	struct mwp_dcqcn dcqcn;
	uint64_t cnp_tsc;
	struct mwp_cc_stats cc_st;
};

/* The QP's path MTU in bytes (IBV_MTU_256 is 1). */
static inline uint32_t
mwp_qp_mtu_bytes(const struct mwp_qp *qp)
{
	return 128u << qp->path_mtu;
}

#define to_mqp(q)	container_of(q, struct mwp_qp, ibqp)

/* Position pos of a QP's send queue window. */
static inline struct mwp_swqe *
mwp_swqe_at(const struct mwp_qp *qp, uint32_t pos)
{
	return &qp->swq[pos & qp->swq_mask];
}

/* Move a QP to ERR (its runner flushes it). */
void mwp_qp_to_err(struct mwp_qp *qp);

/* What entering ERR tells the program: a QP on an SRQ,
 * IBV_EVENT_QP_LAST_WQE_REACHED. */
void mwp_qp_err_events(struct mwp_qp *qp);

/* The requester's state as a new QP has it, and as RESET leaves it:
 * nothing sent or owed (its counters and its timer's callback kept; the
 * timer is not armed). */
void mwp_qp_req_clear(struct mwp_qp *qp);

/* The responder's state as a QP in RESET has it: nothing but who it is
 * (its counters too start over). */
void mwp_qp_resp_clear(struct mwp_qp *qp);

/* A QP whose completion its CQ could not take: in error, and told so
 * once (the completion is tried again until the CQ has room). */
void mwp_qp_overrun(struct mwp_qp *qp);

/* The ibv_wr_* API of an extended QP (mwp_wr.c): made with its QP (0 or
 * ENOMEM), freed with it. */
int mwp_wr_init(struct mwp_qp *qp);
void mwp_wr_free(struct mwp_qp *qp);

#endif /* MWP_QP_H */
