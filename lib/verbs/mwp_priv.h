/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_PRIV_H
#define MWP_PRIV_H

/*
 * libmwpath's verbs objects.  Each embeds its public libibverbs struct
 * first; to_mxxx() converts back (container_of).  Private: not installed.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rte_common.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "mwp_access.h"
#include "mwp_query.h"
#include "mwp_verbs.h"
#include "rkey_tbl.h"
#include "roce_build.h"
#include "mwp_ctrl.h"
#include "mwp_engine.h"
#include "mwp_timer.h"

/* R_Key = index << 8 | key byte.  MR and MW indices come from disjoint
 * ranges by construction. */
#define MWP_MR_INDEX_BASE	0x000001u
#define MWP_MW_INDEX_BASE	0x800000u
#define MWP_INDEX_SPAN		0x7fffffu
#define MWP_FIRST_QPN		0x11u

#define MWP_MAX_SGE		4
#define MWP_MAX_INLINE		256

struct mwp_qp;
struct mwp_pd;
struct mwp_cq;

/** A device: the software ibv_context. */
struct mwp_dev {
	struct ibv_context ctx;		/* first: ibv_context * == mwp_dev * */
	struct ibv_device ibdev;
	pthread_mutex_t lock;		/* control path only */
	struct rte_rcu_qsbr *rcu;
	uint32_t max_readers;
	uint32_t nb_readers;
	uint8_t *reader_on;		/* [max_readers]: registered */
	struct mwp_key_table *keys;
	uint32_t max_keys;
	int socket;
	/* objects by index, for execution-time lookups by key */
	struct mwp_mr **mr_by_idx;	/* [index - MWP_MR_INDEX_BASE] */
	struct mwp_mw **mw_by_idx;	/* [index - MWP_MW_INDEX_BASE] */
	/* key byte of each slot's next object: a reused slot gets a new
	 * key, so a stale one is never mistaken for it */
	uint8_t *mr_gen, *mw_gen;
	/* no free slot below these: the lowest free slot is found without
	 * scanning the used prefix */
	uint32_t mr_hint, mw_hint;
	uint32_t next_pd;
	uint32_t next_qpn;
	TAILQ_HEAD(, mwp_qp) qps;
	TAILQ_HEAD(, mwp_pd) pds;
	TAILQ_HEAD(, mwp_cq) cqs;
	uint32_t nb_pds, nb_mrs, nb_mws, nb_cqs;
	unsigned int id;
};

struct mwp_pd {
	struct ibv_pd ibpd;
	TAILQ_ENTRY(mwp_pd) next;
	uint32_t users;			/* MRs, MWs and QPs in it */
};

struct mwp_mr {
	struct ibv_mr ibmr;
	uint64_t iova;			/* address peers use for byte 0 */
	unsigned int access;
	uint32_t bound_mws;		/* windows bound to it */
};

/* [addr, addr + len) inside the region's addresses (its iova range),
 * checked without a sum that can wrap; *off is addr's offset in it.  The
 * one region range check of binds (mwp_sq.c) and DET binds (mwp_mw.c);
 * requests check through their key's descriptor (mwp_access.h). */
static inline bool
mwp_mr_range(const struct mwp_mr *mr, uint64_t addr, uint64_t len, uint64_t *off)
{
	if (addr < mr->iova || !mwp_inside(addr - mr->iova, len, mr->ibmr.length))
		return false;
	*off = addr - mr->iova;
	return true;
}

enum mwp_mw_state {
	MWP_MW_FREE = 0,		/* Type 2: bindable; Type 1: unbound */
	MWP_MW_VALID,			/* bound: its key is in the table */
};

struct mwp_mw {
	struct ibv_mw ibmw;
	uint32_t index;
	uint32_t cur_rkey;		/* the key the device holds */
	enum mwp_mw_state state;
	struct mwp_mr *mr;		/* VALID: the region it is bound to */
	uint32_t qpn;			/* VALID Type 2: its QP */
};

struct mwp_cq {
	struct ibv_cq ibcq;
	TAILQ_ENTRY(mwp_cq) next;
	struct rte_ring *ring;		/* of struct ibv_wc */
	uint32_t users;			/* QPs reporting to it */
	uint64_t overruns;		/* completions that found it full */
};

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
	};
	struct ibv_sge sge[MWP_MAX_SGE];
	uint8_t inline_data[MWP_MAX_INLINE];	/* copied at post time */
};

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
	/* the WRITE in progress */
	uint64_t w_va;
	uint64_t w_left;
	uint32_t w_rkey;
	uint32_t w_total;
	/* w_rkey's descriptor as a packet of burst w_gen on queue w_queue
	 * found it: valid in that burst only (the key table frees
	 * descriptors between bursts) */
	const struct mwp_binding *w_b;
	const struct mwp_queue *w_queue;
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
	struct mwp_answer_tmpl tmpl;	/* flow's headers, for each answer */
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
	struct mwp_flow flow;	/* the headers towards it (have_mac) */
	struct mwp_timer tmr;	/* the local ACK or RNR timer */
	struct mwp_req_stats st;
};

struct mwp_queue;

struct mwp_qp {
	struct ibv_qp ibqp;
	TAILQ_ENTRY(mwp_qp) next;
	struct mwp_dev *dev;
	struct mwp_cq *scq, *rcq;
	bool sq_sig_all;
	uint32_t max_send_wr, max_recv_wr;
	uint32_t max_send_sge, max_recv_sge, max_inline;
	/* send queue: posted (ring), then executed (swq, in order) */
	struct rte_ring *sq;		/* of struct mwp_wqe */
	struct mwp_swqe *swq;		/* [swq_mask + 1] */
	uint32_t swq_mask;
	uint32_t sq_head, sq_tail;	/* swq positions: oldest not delivered,
					 * next free (free-running) */
	uint32_t sq_used;		/* posted and not yet completed */
	uint32_t rd_atomic_out;		/* READ/ATOMIC executed, not complete */
	uint32_t det_bind_out;		/* DET binds not yet completed */
	struct rte_ring *rq;		/* of struct mwp_rwqe */
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
	uint8_t transport;		/* enum roce_transport of qp_type */
	struct rte_ether_addr peer_mac;	/* configured: no address resolution */
	bool has_peer_mac;
	/* the engine that runs it (mwp_engine.c), and its place there */
	struct mwp_queue *owner;	/* NULL: mwp_poll runs its send queue */
	TAILQ_ENTRY(mwp_qp) eng_link;	/* in its engine's QPs */
	TAILQ_ENTRY(mwp_qp) sq_link;	/* in the engine's send-queue list */
	TAILQ_ENTRY(mwp_qp) tx_link;	/* in its queue's list of senders */
	uint8_t on_sq_list, on_tx_list;
	uint8_t db_rung;		/* a doorbell for it is in the engine's ring */
	/* the requester */
	struct mwp_req req;
	/* responder: the port it is attached to, and its state */
	struct mwp_port *port;
	struct mwp_resp resp;
};

/* The QP's path MTU in bytes (IBV_MTU_256 is 1). */
static inline uint32_t
mwp_qp_mtu_bytes(const struct mwp_qp *qp)
{
	return 128u << qp->path_mtu;
}

#define to_mdev(c)	container_of(c, struct mwp_dev, ctx)
#define to_mpd(p)	container_of(p, struct mwp_pd, ibpd)
#define to_mmr(m)	container_of(m, struct mwp_mr, ibmr)
#define to_mmw(m)	container_of(m, struct mwp_mw, ibmw)
#define to_mcq(c)	container_of(c, struct mwp_cq, ibcq)
#define to_mqp(q)	container_of(q, struct mwp_qp, ibqp)

/* ops (mwp_mw.c, mwp_cq.c, mwp_qp.c, mwp_sq.c) */
struct ibv_mw *mwp_op_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int mwp_op_dealloc_mw(struct ibv_mw *mw);
int mwp_op_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b);
int mwp_op_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int mwp_op_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int mwp_op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr);
int mwp_op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);

/* internal helpers */
struct mwp_mr *mwp_mr_by_key(struct mwp_dev *d, uint32_t key);
struct mwp_mw *mwp_mw_by_key(struct mwp_dev *d, uint32_t key);

/* ---- completions (mwp_cq.c) ---- */

/* 0, or -ENOSPC if the CQ is full (the caller keeps the completion). */
int mwp_cq_push(struct mwp_cq *cq, const struct ibv_wc *wc);
/* Deliver what is complete, in order, to the send CQ. */
int mwp_cq_deliver_sq(struct mwp_qp *qp);
/* The requester's: a data WQE is complete with this status (an error
 * moves the QP to ERR). */
void mwp_cq_send_done(struct mwp_qp *qp, struct mwp_swqe *e,
		      enum ibv_wc_status status);
/* The completion of receive r, which the responder took from the ring
 * (it holds it while a SEND fills it): 0, or -ENOSPC on a CQ overrun
 * (the QP goes to ERR). */
int mwp_cq_recv_done(struct mwp_qp *qp, const struct mwp_rwqe *r,
		     enum ibv_wc_opcode opcode, uint32_t byte_len,
		     unsigned int wc_flags, uint32_t imm_or_inv,
		     enum ibv_wc_status status);

/**
 * Complete the oldest posted receive of a QP (taken from the ring and
 * completed in one step).
 *
 * @param opcode
 *   IBV_WC_RECV or IBV_WC_RECV_RDMA_WITH_IMM.
 * @param byte_len
 *   Bytes placed.
 * @param wc_flags
 *   IBV_WC_WITH_IMM (imm_or_inv is the immediate, network order) or
 *   IBV_WC_WITH_INV (imm_or_inv is the invalidated rkey), or 0.
 * @param status
 *   IBV_WC_SUCCESS or the error; an error moves the QP to ERR.
 * @param wr_id
 *   If not NULL, receives the WQE's wr_id.
 * @return
 *   0; -ENOENT if no receive is posted (the responder answers RNR);
 *   -ENOSPC if the CQ is full (the receive stays posted, the QP goes to
 *   ERR: a CQ overrun).
 */
int mwp_cq_recv_complete(struct ibv_qp *qp, enum ibv_wc_opcode opcode,
			 uint32_t byte_len, unsigned int wc_flags,
			 uint32_t imm_or_inv, enum ibv_wc_status status,
			 uint64_t *wr_id);

uint32_t mwp_mw_unbind_locked(struct mwp_dev *d, struct mwp_mw *mw);

/*
 * A BIND_MW (memory-windows.md section 2) or LOCAL_INV (section 4) work
 * request of qp, executed by the window's rules (mwp_mw.c) when its send
 * queue reaches it, under the device lock.  *revoked: keys taken out of
 * the table (0 or 1); the caller completes the WQE after a grace period.
 */
enum ibv_wc_status mwp_mw_bind_exec(struct mwp_qp *qp, const struct mwp_wqe *w,
				    uint32_t *revoked);
enum ibv_wc_status mwp_mw_local_inv_exec(struct mwp_qp *qp, const struct mwp_wqe *w,
					 uint32_t *revoked);

/*
 * The QP's send queue (mwp_sq.c).  Everything but mwp_sq_post runs on the
 * thread that runs the QP: its engine's, or mwp_poll's (holding the device
 * lock) when it has none or its engine is stopped.
 */
int mwp_sq_post(struct mwp_qp *qp, const struct mwp_wqe *w);
/* Execute up to max of the WQEs posted, in order, as far as they can go
 * (binds and invalidations need the device lock: a caller passes max > 0
 * only while it holds it), deliver completions in order, flush in ERR.
 * Returns the work done. */
int mwp_sq_run(struct mwp_qp *qp, unsigned int max);
/* Drop everything without completions (RESET). */
void mwp_sq_reset(struct mwp_qp *qp);

/* Position pos of a QP's send queue window. */
static inline struct mwp_swqe *
mwp_swqe_at(const struct mwp_qp *qp, uint32_t pos)
{
	return &qp->swq[pos & qp->swq_mask];
}

/* Move a QP to ERR (its runner flushes it). */
void mwp_qp_to_err(struct mwp_qp *qp);

/**
 * A received SEND with invalidate names rkey (section 4): invalidate it if
 * it is a VALID Type 2 window bound to qp with that key.  The caller
 * holds the device lock (the lcore only tries it: roce_resp_exec.c).  No
 * grace period is needed before the receive completes: a Type 2B window
 * is usable only through its QP, whose packets only the calling lcore
 * processes, so no other reader can still use it.
 *
 * @return
 *   0, or -EINVAL (unknown key, wrong key byte, a region, Type 1, FREE,
 *   or bound to another QP): nothing is invalidated.
 */
int mwp_mw_remote_invalidate_locked(struct mwp_qp *qp, uint32_t rkey);

/* ---- engines and queues (mwp_engine.c; see mwp_engine.h) ---- */

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

#endif /* MWP_PRIV_H */
