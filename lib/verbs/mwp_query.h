/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_QUERY_H
#define MWP_QUERY_H

/**
 * @file
 * What a program may read of mwpath's verbs objects beyond struct ibv_*:
 * a QP's datapath state and counters, a region's and a window's
 * description.  The mwpath program's summary, objects.json and telemetry
 * are built on these alone.
 *
 * Thread safety: mwp_mr_query_info() and mwp_mw_query_info() take the
 * device lock and return a consistent snapshot.  mwp_qp_query_info()
 * takes no lock: the counters and PSNs are written by the lcore that
 * owns the QP and read as it leaves them (each field whole, the set not
 * necessarily of one instant).
 *
 * Errors: 0, or a positive errno value (EINVAL for a NULL argument).
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "mwp_deny.h"

/** Per-QP responder counters, written by the owning lcore only. */
struct mwp_qp_stats {
	uint64_t rx_pkts;		/**< packets for this QP */
	uint64_t rx_bytes;		/**< their frame bytes */
	uint64_t acks;			/**< ACKs sent */
	uint64_t naks[4];		/**< NAKs sent: 0x60 .. 0x63 */
	uint64_t rnr_naks;		/**< RNR NAKs sent */
	uint64_t duplicates;		/**< duplicate requests (RC) */
	uint64_t read_resps;		/**< READ response packets sent */
	uint64_t atomics;		/**< atomics executed */
	uint64_t acks_rx;		/**< ACKs/NAKs for our own requests */
	uint64_t drops;			/**< packets dropped */
	uint64_t denied[MWP_DENY__MAX];	/**< accesses refused, by reason */
};

/** Requester counters (the owning engine's): _(name, text). */
#define MWP_FOREACH_REQ_STAT(_)						\
	_(pkts,          "request packets sent the first time")		\
	_(bytes,         "payload bytes in them")			\
	_(retrans,       "request packets sent again")			\
	_(timeouts,      "local ACK timeouts")				\
	_(acks,          "ACKs, READ responses, ATOMIC ACKs taken")	\
	_(seq_naks,      "PSN sequence error NAKs received")		\
	_(rnr_naks,      "RNR NAKs received")				\
	_(fatal_naks,    "NAKs 0x61-0x63 (and reserved codes) received") \
	_(implicit_naks, "responses past a READ/ATOMIC answer never seen") \
	_(dup_resps,     "responses for PSNs already acknowledged")	\
	_(ghost_resps,   "responses for PSNs never sent")		\
	_(bad_resps,     "responses of the wrong opcode or length")	\
	_(read_bytes,    "READ response bytes placed")			\
	_(no_mbuf,       "a packet waited: no mbuf")			\
	_(unresolved,    "a send waited for the peer's MAC")		\
	_(ud_lost,       "UD sends to an address nobody answers for, not sent")

/** The requester's counters, one per MWP_FOREACH_REQ_STAT entry. */
struct mwp_req_stats {
#define _(n, t) uint64_t n;
	MWP_FOREACH_REQ_STAT(_)
#undef _
};

/** A QP's congestion control counters (docs/congestion.md). */
struct mwp_cc_stats {
	uint64_t ce;			/**< frames received marked CE */
	uint64_t cnp_sent;		/**< CNPs sent for them */
	uint64_t cnp_received;		/**< CNPs received */
};

/** A QP's congestion control as it stands. */
struct mwp_qp_cc {
	struct mwp_cc_stats st;		/**< counters */
	bool limited;			/**< DCQCN holds it below the line rate */
	double rate;			/**< R_C, Mb/s */
	double target;			/**< R_T, Mb/s */
	double alpha;			/**< 0 to 1 (0 while not limited) */
	uint64_t cuts;			/**< rate decreases */
	uint64_t paced;			/**< sends the pacer held back */
};

struct mwp_port;

/** A QP as its datapath sees it. */
struct mwp_qp_info {
	uint32_t dest_qpn;		/**< the peer's QP */
	uint32_t sq_psn;		/**< the send queue PSN set by modify_qp */
	uint32_t expected_psn;		/**< responder: the next PSN it expects */
	uint32_t msn;			/**< responder: message sequence number */
	uint32_t req_next_psn;		/**< requester: the next new PSN */
	uint32_t req_unacked_psn;	/**< requester: the oldest unacknowledged */
	struct mwp_port *port;		/**< the port it is attached to, or NULL */
	struct mwp_qp_stats resp;	/**< responder counters */
	struct mwp_req_stats req;	/**< requester counters */
	struct mwp_qp_cc cc;		/**< congestion control */
};

/** Fill *info for a QP of an mwpath device. */
int mwp_qp_query_info(const struct ibv_qp *qp, struct mwp_qp_info *info);

/** A memory region beyond struct ibv_mr. */
struct mwp_mr_info {
	uint64_t iova;			/**< the address peers use for byte 0 */
	unsigned int access;		/**< its IBV_ACCESS_* flags */
	uint32_t bound_mws;		/**< windows bound to it now */
};

/** Fill *info for a region of an mwpath device (under the device lock). */
int mwp_mr_query_info(const struct ibv_mr *mr, struct mwp_mr_info *info);

/** A memory window's state. */
struct mwp_mw_info {
	uint32_t rkey;			/**< the key the device holds for it */
	bool valid;			/**< bound (VALID), else FREE */
	struct ibv_mr *mr;		/**< valid: the region it is bound to */
};

/** Fill *info for a window of an mwpath device (under the device lock). */
int mwp_mw_query_info(const struct ibv_mw *mw, struct mwp_mw_info *info);

/** Work requests a device's QPs took through the ibv_wr_* API
 *  (ibv_wr_complete), as against ibv_post_send. */
uint64_t mwp_device_wr_api_posted(const struct ibv_context *ctx);

/** The QPs a device has, QP1 among them if it has one. */
unsigned int mwp_device_qp_count(struct ibv_context *ctx);

/** Completions lost because the CQ was full (the QP went to ERR). */
uint64_t mwp_cq_overruns(const struct ibv_cq *cq);

#endif /* MWP_QUERY_H */
