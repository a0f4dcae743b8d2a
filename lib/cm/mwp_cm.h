/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CM_H
#define MWP_CM_H

/**
 * @file
 * The IB connection manager (IBA chapter 12) of a port, over RoCEv2, as
 * Linux's kernel CM (drivers/infiniband/core/cm.c) speaks it: management
 * datagrams to and from QP1 (the GSI), the REQ/MRA/REJ/REP/RTU/DREQ/DREP
 * exchange of RC and UC connections and SIDR REQ/REP for UD, with
 * retries, timeouts, duplicates and stale messages handled as the
 * specification's state machines say.
 *
 * A port's CM owns QP1 of the port: once it exists the port answers
 * every CM MAD, a REQ for a service nobody listens on with a REJ
 * (invalid service ID) as the kernel does.  What a program does with a
 * connection -- creating its QP, moving it to RTR and RTS with what the
 * peer sent -- is the program's (as with ib_cm): the CM hands it events
 * (mwp_cm_get_event(), readable on mwp_cm_fd()) and sends what it is told
 * to (mwp_cm_accept(), mwp_cm_rtu(), ...).  librdmacm's face over this is
 * the provider's.
 *
 * Threads: every call takes the CM's lock; mwp_cm_progress() must be
 * called regularly (it takes QP1's completions and runs the timers) by
 * any one thread.  Nothing here is on the data path.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct mwp_port;

/** A port's connection manager. */
struct mwp_cm;
/** One CM identity: a listener, a connection, or a SIDR exchange. */
struct mwp_cm_id;

/** Set-up of a port's CM; zeros give the defaults. */
struct mwp_cm_attr {
	uint32_t max_ids;	/**< connections, listeners and SIDRs at once;
				 *   0: 1024 */
	uint32_t recv_depth;	/**< MADs QP1 can hold before the CM takes
				 *   them; 0: 1024 */
	uint32_t send_depth;	/**< MADs on their way out (four times as
				 *   many more wait for room); 0: 256 */
	uint32_t event_depth;	/**< events waiting for the program; 0: 1024 */
	uint32_t timewait_ms;	/**< how long a closed connection's IDs stay
				 *   reserved (stale messages); 0: 1000 */
	uint64_t ca_guid;	/**< 0: the EUI-64 of the port's MAC, as rxe */
};

/**
 * Create the CM of a port: QP1 on the port, in the device ctx (which
 * must be the device of the port's other QPs), its receives posted.
 * Returns NULL with errno: EINVAL, EBUSY (the port has QP1 already),
 * ENOMEM.
 */
struct mwp_cm *mwp_cm_create(struct ibv_context *ctx, struct mwp_port *port,
			     const struct mwp_cm_attr *attr);

/** Destroy a CM: every id with it, QP1 and its buffers.  0 or errno. */
int mwp_cm_destroy(struct mwp_cm *cm);

/**
 * Take the MADs QP1 received and the completions of those it sent, and
 * run the timers (retries, timeouts, timewait) at now (TSC cycles).
 * Returns the events waiting after it.
 */
unsigned int mwp_cm_progress(struct mwp_cm *cm, uint64_t now);

/**
 * MADs the CM has not sent yet: handed to QP1 and not completed (a
 * completion is taken by mwp_cm_progress), or waiting for a send slot.
 * A caller about to let its process end waits for 0, as a kernel CM's
 * MAD has left by the time its call returns.
 */
uint32_t mwp_cm_sends_pending(struct mwp_cm *cm);

/** An eventfd, readable while events wait (for poll/epoll). */
int mwp_cm_fd(const struct mwp_cm *cm);

/**
 * How the thread that runs mwp_cm_progress() may sleep while the CM has
 * nothing to do: fn(arg) is called when it has -- a MAD or a send's
 * completion on QP1 (from the thread that delivers it: an engine's), or
 * a timer set to expire before the sleep's end (from the thread that
 * sets it) -- after mwp_cm_idle_until() and before the next
 * mwp_cm_progress().  Events come only of MADs and timers.  fn must be
 * short and must not block or call the CM.  Set it before the first
 * mwp_cm_idle_until(); NULL (none: the caller polls) only while no
 * thread sleeps on it.
 */
void mwp_cm_set_wake(struct mwp_cm *cm, void (*fn)(void *arg), void *arg);

/**
 * Before the caller sleeps, after mwp_cm_progress(): QP1's next
 * completion is to call the wake function, and the MADs that came since
 * are taken.  Returns the TSC by which mwp_cm_progress() is due again
 * (UINT64_MAX: no timer runs), or 0 if it is due now (MADs came, or no
 * wake function is set).
 */
uint64_t mwp_cm_idle_until(struct mwp_cm *cm, uint64_t now);

/**
 * What a CM asks about the CMs of other processes that drive the same
 * port's address (each with a packet socket of its own on one kernel
 * interface, so that each sees every MAD): see mwp_cm_share().
 */
struct mwp_cm_share_ops {
	/** Does a live CM of another process listen on service id sid? */
	bool (*others_listen)(void *arg, uint64_t sid);
	/** Is this CM the one that answers for everybody -- a REQ or a SIDR
	 *  REQ that no process listens for, a message for a communication
	 *  ID that no process has? */
	bool (*answers_strays)(void *arg);
	void *arg;
};

/**
 * Make cm one of several processes' CMs on one address: its local
 * communication IDs carry part (0 to 2^part_bits - 1) in their top
 * part_bits bits, and another part's IDs are others' business (not
 * answered, counted in others); a REQ or SIDR REQ for a service it does
 * not listen on is left to the process that does (ops->others_listen),
 * and answered as the specification says (REJ, "no service") only by
 * the one of ops->answers_strays.  Call before the CM's first id.
 *
 * @return
 *   0, or EINVAL (part_bits 0 or above 8, part out of range, ops or a
 *   function NULL), EBUSY (the CM has ids).
 */
int mwp_cm_share(struct mwp_cm *cm, uint32_t part, uint32_t part_bits,
		 const struct mwp_cm_share_ops *ops);

/** What a connection or SIDR's peer is and how to reach it. */
struct mwp_cm_path {
	union ibv_gid sgid;	/**< ours (IPv4-mapped for IPv4) */
	union ibv_gid dgid;	/**< the peer's */
	uint32_t flow_label;
	uint8_t traffic_class;
	uint8_t hop_limit;	/**< 0: 64 */
	uint8_t sl;
	uint16_t pkey;		/**< 0: 0xffff */
	enum ibv_mtu mtu;	/**< 0: the port's */
	uint8_t ack_timeout;	/**< local ACK timeout (IBA exponent); 0: 19 */
};

/** What one side of a connection offers (a REQ's or a REP's contents). */
struct mwp_cm_conn_param {
	uint32_t qp_num;
	uint32_t qkey;			/**< UD (SIDR REP) */
	uint32_t starting_psn;		/**< the PSN this side's receive queue
					 *   expects first: the peer's send
					 *   queue starts there (as Linux's CM
					 *   reads the REQ's and REP's field) */
	enum ibv_qp_type qp_type;	/**< RC or UC (REQ) */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;		/**< 0..7 */
	uint8_t rnr_retry_count;	/**< 0..7 */
	uint8_t flow_control;
	uint8_t srq;
	uint8_t target_ack_delay;	/**< REP */
	const void *private_data;
	uint8_t private_data_len;
};

/** Event types, as ib_cm's. */
enum mwp_cm_event_type {
	MWP_CM_REQ_RECEIVED,	/**< new id on a listener: accept or reject */
	MWP_CM_REQ_ERROR,	/**< our REQ was never answered */
	MWP_CM_REP_RECEIVED,	/**< our REQ accepted: move the QP, mwp_cm_rtu */
	MWP_CM_REP_ERROR,	/**< our REP was never answered */
	MWP_CM_RTU_RECEIVED,	/**< passive side: established */
	MWP_CM_REJ_RECEIVED,	/**< rejected (reason in rej) */
	MWP_CM_MRA_RECEIVED,	/**< the peer asked for more time */
	MWP_CM_DREQ_RECEIVED,	/**< the peer disconnects: mwp_cm_disconnect */
	MWP_CM_DREQ_ERROR,	/**< our DREQ was never answered */
	MWP_CM_DREP_RECEIVED,	/**< our DREQ answered */
	MWP_CM_SIDR_REQ_RECEIVED, /**< new id on a listener: mwp_cm_sidr_rep */
	MWP_CM_SIDR_REP_RECEIVED, /**< the answer to our SIDR REQ */
	MWP_CM_SIDR_REQ_ERROR,	/**< our SIDR REQ was never answered */
};

/** Private data of a message, at most this long (a REP's). */
#define MWP_CM_PRIVATE_MAX 224

/** One event. */
struct mwp_cm_event {
	enum mwp_cm_event_type type;
	struct mwp_cm_id *id;		/**< the id it is about (new for REQ) */
	struct mwp_cm_id *listen_id;	/**< REQ, SIDR REQ: the listener */
	void *context;			/**< the id's (the listener's for REQ) */
	uint64_t service_id;		/**< REQ, SIDR REQ */
	struct mwp_cm_conn_param param;	/**< REQ, REP: the peer's offer */
	struct mwp_cm_path path;	/**< REQ, SIDR REQ: the peer's path */
	uint16_t rej_reason;		/**< REJ */
	uint8_t sidr_status;		/**< SIDR REP */
	uint8_t private_len;
	uint8_t private_data[MWP_CM_PRIVATE_MAX];
};

/** Take the oldest event: 0, or EAGAIN if none waits. */
int mwp_cm_get_event(struct mwp_cm *cm, struct mwp_cm_event *ev);

/**
 * Listen for REQs and SIDR REQs of service_id (bits set in mask must
 * match; 0: all bits); at most backlog of its REQs wait for an answer at
 * once (the rest are rejected as the kernel's rdma_cm rejects them).
 * 0 with *id, or EINVAL, EADDRINUSE (a listener covers it), ENOMEM.
 */
int mwp_cm_listen(struct mwp_cm *cm, uint64_t service_id, uint64_t mask, uint32_t backlog,
		  void *context, struct mwp_cm_id **id);

/** Send a REQ: 0 with *id (its events follow), or an errno. */
int mwp_cm_connect(struct mwp_cm *cm, uint64_t service_id, const struct mwp_cm_path *path,
		   const struct mwp_cm_conn_param *param, void *context,
		   struct mwp_cm_id **id);

/** Accept a REQ (REQ_RECEIVED): send the REP.  0 or EINVAL (state). */
int mwp_cm_accept(struct mwp_cm_id *id, const struct mwp_cm_conn_param *param);

/** Reject a REQ or a REP with reason (REJ).  0 or EINVAL. */
int mwp_cm_reject(struct mwp_cm_id *id, uint16_t reason, const void *private_data,
		  uint8_t private_len);

/** Active side, after REP_RECEIVED and the QP in RTS: send the RTU. */
int mwp_cm_rtu(struct mwp_cm_id *id, const void *private_data, uint8_t private_len);

/** Established: send a DREQ; after DREQ_RECEIVED: send the DREP. */
int mwp_cm_disconnect(struct mwp_cm_id *id, const void *private_data, uint8_t private_len);

/** Send a SIDR REQ (UD): 0 with *id, or an errno. */
int mwp_cm_sidr_req(struct mwp_cm *cm, uint64_t service_id, const struct mwp_cm_path *path,
		    const void *private_data, uint8_t private_len, void *context,
		    struct mwp_cm_id **id);

/** Answer a SIDR REQ (SIDR_REQ_RECEIVED): status, and for ROCE_SIDR_OK
 * the QP's number and Q_Key in param.  0 or EINVAL. */
int mwp_cm_sidr_rep(struct mwp_cm_id *id, uint8_t status, const struct mwp_cm_conn_param *param);

/** Let an id go: what its state owes is sent (a REJ, a DREQ, a DREP) and
 * its events still waiting are dropped.  0 or EINVAL. */
int mwp_cm_destroy_id(struct mwp_cm_id *id);

/**
 * The program is gone (its process exits): let go of every id it still
 * holds, as mwp_cm_destroy_id would -- a DREP for a DREQ it heard and
 * never answered, a DREQ for a connection still up, a REJ for a request
 * -- as the kernel's rdma_cm does for a process whose file closes.  The
 * MADs go out with the datapath's next passes.
 *
 * @return
 *   The ids let go.
 */
unsigned int mwp_cm_release_all(struct mwp_cm *cm);

/** An id's context. */
void *mwp_cm_id_context(const struct mwp_cm_id *id);

/** Give an id (a new one of a REQ event: the listener's) a context of its
 *  own, which its later events carry. */
void mwp_cm_id_set_context(struct mwp_cm_id *id, void *context);

/** The CA GUID the CM sends (its REQs' and REPs'). */
uint64_t mwp_cm_ca_guid(const struct mwp_cm *cm);

/** What happened to MADs: in, out, and each reason one was not taken. */
struct mwp_cm_stats {
	uint64_t rx_mads;		/**< received on QP1 */
	uint64_t tx_mads;		/**< sent (first tries) */
	uint64_t retries;		/**< sent again after a timeout */
	uint64_t timeouts;		/**< exchanges given up */
	uint64_t rx_by_attr[11];	/**< REQ .. SIDR REP, by attr - 0x10 */
	uint64_t rej_no_listener;	/**< REQs rejected: nobody listens */
	uint64_t sidr_no_listener;	/**< SIDR REQs answered "no service" */
	uint64_t rej_backlog;		/**< REQs rejected: listener's backlog full */
	uint64_t rej_no_ids;		/**< REQs rejected: max_ids reached */
	uint64_t rej_stale;		/**< REQs rejected: a connection of that
					 *   QP exists */
	uint64_t duplicates;		/**< duplicate REQ/REP/DREQ/SIDR REQ */
	uint64_t bad_mads;		/**< short, wrong version/class/method */
	uint64_t unknown_attr;		/**< attributes the CM does not take */
	uint64_t unknown_id;		/**< for no id of ours (answered where
					 *   the spec says: REJ, DREP) */
	uint64_t out_of_state;		/**< for an id in a state that cannot take it */
	uint64_t event_full;		/**< dropped: the event queue was full */
	uint64_t send_full;		/**< not sent: no send slot and the queue
					 *   of those waiting full (a retry will) */
	uint64_t others;		/**< left to another process's CM
					 *   (mwp_cm_share) */
};

/** A copy of the CM's counters. */
void mwp_cm_stats_get(struct mwp_cm *cm, struct mwp_cm_stats *st);

/** The RDMA CM's IP service ID of port space ps (0x06 TCP, 0x11 UDP). */
static inline uint64_t
mwp_cm_ip_service_id(uint8_t ps, uint16_t port)
{
	return 0x0000000001000000ull | (uint64_t)ps << 16 | port;
}

#endif /* MWP_CM_H */
