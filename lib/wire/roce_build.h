/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_BUILD_H
#define ROCE_BUILD_H

/**
 * @file
 * Building RoCEv2 frames: one table-driven builder that lays out any opcode
 * of roce_opcode.h (so requester and responder packets share one code
 * path), and helpers for what a responder sends.
 *
 * Frames get a correct IPv4 header checksum, IP and UDP lengths, a zero UDP
 * checksum (RoCEv2, IBA A17.4.4: the ICRC protects the packet; over IPv6
 * optionally a computed one, see mwp_flow.udp6_csum), the pad that rounds
 * the payload to 4 bytes, and the ICRC.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "roce_hdr.h"
#include "roce_opcode.h"
#include "roce_parse.h"

/** L2-L4 of one direction of a connection. */
struct mwp_flow {
	struct rte_ether_addr smac;	/**< source MAC */
	struct rte_ether_addr dmac;	/**< destination MAC */
	bool vlan;			/**< add an 802.1Q tag */
	uint16_t vlan_tci;		/**< its TCI */
	bool ipv6;			/**< IPv6, else IPv4 */
	rte_be32_t sip4;		/**< IPv4 source */
	rte_be32_t dip4;		/**< IPv4 destination */
	uint8_t sip6[16];		/**< IPv6 source (a GID) */
	uint8_t dip6[16];		/**< IPv6 destination */
	uint8_t tos;			/**< IPv4 TOS / IPv6 traffic class (DSCP, ECN) */
	uint8_t ttl;			/**< IPv4 TTL / IPv6 hop limit; 0 means 64 */
	uint32_t flow_label;		/**< IPv6 flow label (20 bits) */
	uint16_t sport;			/**< UDP source port (per-QP entropy) */
	/** IPv6 only: compute the UDP checksum instead of sending 0.  RoCEv2
	 *  (IBA A17.4.4) and Linux rxe send 0, which RFC 8200 calls illegal;
	 *  set this for peers or middleboxes that enforce it. */
	bool udp6_csum;
};

/** BTH fields and the values of every extension header an opcode may use. */
struct mwp_hdrs {
	uint8_t opcode;			/**< BTH opcode; selects the headers */
	bool se;			/**< solicited event */
	bool mig;			/**< migration state */
	bool fecn;			/**< forward congestion notification */
	bool becn;			/**< backward congestion notification */
	bool ackreq;			/**< acknowledge request */
	uint16_t pkey;			/**< partition key; 0 means 0xffff */
	uint32_t dqpn;			/**< destination QP (24 bits) */
	uint32_t psn;			/**< PSN (24 bits) */
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t dmalen;
	} reth;				/**< RETH */
	struct {
		uint8_t syndrome;
		uint32_t msn;
	} aeth;				/**< AETH */
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t compare;
	} atmeth;			/**< AtomicETH */
	uint64_t atmack_orig;		/**< AtomicAckETH */
	rte_be32_t imm;			/**< ImmDt, network order as verbs keeps it */
	uint32_t ieth_rkey;		/**< IETH */
	struct {
		uint32_t qkey;
		uint32_t sqpn;
	} deth;				/**< DETH */
};

/**
 * The flow that answers a received frame, as a RoCE NIC does: MACs and IP
 * addresses swapped, the same VLAN, the frame's UDP source port, its DSCP
 * with the ECN codepoint given (the frame's own says what happened to it,
 * not what the answer is).
 *
 * @param ecn
 *   The answer's ECN bits (ROCE_ECN_*).
 */
void mwp_flow_mirror(struct mwp_flow *f, const struct rte_mbuf *m, const struct mwp_pkt *p,
		     uint8_t ecn);

/**
 * Build a frame into an empty mbuf.
 *
 * @param m
 *   An mbuf with data_len 0; the frame must fit its tailroom.
 * @param f
 *   Addresses.
 * @param h
 *   The opcode and header values; headers the opcode does not carry are
 *   ignored.
 * @param payload
 *   Payload bytes (may be NULL when len is 0).
 * @param len
 *   Payload length; must be 0 for opcodes that carry none.
 * @param p
 *   If not NULL, filled with the parsed view of the built frame.
 * @return
 *   0; -EINVAL for an unknown opcode, payload on an opcode without one, or
 *   a non-empty mbuf; -ENOSPC if the frame does not fit.
 */
int mwp_build(struct rte_mbuf *m, const struct mwp_flow *f,
	      const struct mwp_hdrs *h, const void *payload, uint32_t len,
	      struct mwp_pkt *p);

/**
 * As mwp_build, but leave the ICRC for mwp_icrc_fill_burst (a burst's
 * answers get their ICRCs together).  An IPv6 frame with
 * mwp_flow.udp6_csum is finished at once: its UDP checksum covers the
 * ICRC.
 *
 * @param p
 *   Filled with the parsed view of the frame (mwp_icrc_fill_burst needs it).
 * @return
 *   1 if the ICRC is left to do, 0 if the frame is finished, or as
 *   mwp_build.
 */
int mwp_build_deferred(struct rte_mbuf *m, const struct mwp_flow *f,
		       const struct mwp_hdrs *h, const void *payload,
		       uint32_t len, struct mwp_pkt *p);

/**
 * A flow's Ethernet, VLAN, IP and UDP headers, made once: frames to the
 * same peer differ in these only by their lengths (and the IPv4
 * checksum), so mwp_build_answer and mwp_build_tmpl copy them instead of
 * laying them out.
 */
struct mwp_flow_tmpl {
	uint8_t hdr[80];	/**< the headers, then zeros (copied whole) */
	uint8_t len;		/**< header bytes in hdr */
	uint8_t l3_off;		/**< IP header */
	uint8_t l4_off;		/**< UDP header */
	uint8_t flags;		/**< MWP_PKT_VLAN, MWP_PKT_IPV6 */
	uint8_t tos;		/**< as the parsed view gives it */
	bool usable;		/**< false: the flow needs mwp_build_deferred
				 *  (IPv6 with a UDP checksum) */
	uint16_t vlan_tci;	/**< if MWP_PKT_VLAN */
	uint16_t sport;		/**< UDP source port */
	uint32_t ip_sum;	/**< IPv4: the header's raw sum without its
				 *  length and checksum */
};

/** Make the template of a flow's frames (a responder's answers, a
 *  requester's requests). */
void mwp_flow_tmpl_make(struct mwp_flow_tmpl *t, const struct mwp_flow *f);

/**
 * Build any frame of a template's flow (t->usable): the bytes
 * mwp_build_deferred makes from the same flow and headers, with the
 * Ethernet, VLAN, IP and UDP headers copied from the template in 16-byte
 * blocks (the mbuf needs room for the last block even if the frame ends
 * before it) and only their lengths and the IPv4 checksum written.
 *
 * @return
 *   1 (the ICRC is left to do); or as mwp_build.
 */
int mwp_build_tmpl(struct rte_mbuf *m, const struct mwp_flow_tmpl *t,
		   const struct mwp_hdrs *h, const void *payload, uint32_t len,
		   struct mwp_pkt *p);

/** What a responder's answer carries besides its flow: an ACKNOWLEDGE,
 *  an ATOMIC ACKNOWLEDGE or an RDMA READ response. */
struct mwp_answer {
	uint8_t opcode;		/**< one of those */
	uint8_t syndrome;	/**< AETH syndrome */
	uint32_t dqpn;		/**< destination QP */
	uint32_t psn;		/**< PSN */
	uint32_t msn;		/**< AETH MSN */
	uint64_t orig;		/**< AtomicAckETH: the original value */
};

/** The mwp_hdrs of an answer (for mwp_build_deferred). */
void mwp_answer_hdrs(struct mwp_hdrs *h, const struct mwp_answer *a);

/**
 * Build an answer from its flow's template (t->usable): the bytes
 * mwp_build_deferred makes from mwp_answer_hdrs, with the headers copied
 * in 16-byte blocks (the mbuf needs room for the last block even if the
 * frame ends before it) and the transport headers written directly.
 *
 * @return
 *   1 (the ICRC is left to do); -EINVAL for an opcode that is not an
 *   answer's, or as mwp_build.
 */
int mwp_build_answer(struct rte_mbuf *m, const struct mwp_flow_tmpl *t,
		     const struct mwp_answer *a, const void *payload, uint32_t len,
		     struct mwp_pkt *p);

/**
 * Build an RC ACKNOWLEDGE (ACK, RNR NAK or NAK, by syndrome).
 *
 * @return
 *   As mwp_build.
 */
int mwp_build_ack(struct rte_mbuf *m, const struct mwp_flow *f, uint32_t dqpn,
		  uint32_t psn, uint8_t syndrome, uint32_t msn);

/**
 * Build an RDMA READ response packet.
 *
 * @param opcode
 *   ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, _MIDDLE, _LAST or _ONLY.
 * @return
 *   As mwp_build.
 */
int mwp_build_read_resp(struct rte_mbuf *m, const struct mwp_flow *f,
			uint8_t opcode, uint32_t dqpn, uint32_t psn,
			uint8_t syndrome, uint32_t msn,
			const void *data, uint32_t len);

/**
 * Build an ATOMIC ACKNOWLEDGE carrying the original value.
 *
 * @return
 *   As mwp_build.
 */
int mwp_build_atomic_ack(struct rte_mbuf *m, const struct mwp_flow *f,
			 uint32_t dqpn, uint32_t psn, uint32_t msn,
			 uint64_t orig);

#endif /* ROCE_BUILD_H */
