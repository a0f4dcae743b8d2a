/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PARSE_H
#define ROCE_PARSE_H

/**
 * @file
 * Classify a received frame as RoCEv2 and describe where its headers are.
 *
 * Ethernet (at most one 802.1Q tag) -> IPv4 (no options, not fragmented) or
 * IPv6 (no extension headers) -> UDP/4791 -> BTH -> extension headers ->
 * payload -> pad -> ICRC.  Every length is checked against what the mbuf
 * holds before a byte is read; a frame that fails gets one enum mwp_drop.
 */

#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "mwp_drop.h"
#include "roce_hdr.h"
#include "roce_opcode.h"

#define MWP_PKT_IPV6	0x01	/**< IPv6 (else IPv4) */
#define MWP_PKT_VLAN	0x02	/**< one 802.1Q tag present */
#define MWP_PKT_BTH	0x04	/**< BTH located: ICRC region known */

/** The parsed view of one frame: offsets from the start of the frame. */
struct mwp_pkt {
	uint32_t mask;		/**< roce_opcode[opcode].mask */
	uint32_t qpn;		/**< BTH destination QP */
	uint32_t psn;		/**< BTH PSN */
	uint16_t l3_off;	/**< IP header */
	uint16_t l4_off;	/**< UDP header */
	uint16_t bth_off;	/**< BTH */
	uint16_t payload_off;	/**< first payload byte */
	uint16_t payload_len;	/**< payload bytes, pad excluded */
	uint16_t icrc_off;	/**< the ICRC (4 bytes) */
	uint16_t vlan_tci;	/**< 802.1Q TCI if MWP_PKT_VLAN */
	uint8_t opcode;		/**< BTH opcode */
	uint8_t pad;		/**< BTH PadCnt */
	uint8_t flags;		/**< MWP_PKT_* */
	uint8_t tos;		/**< IPv4 TOS or IPv6 traffic class */
};

/**
 * Wrap a plain buffer in an mbuf header so that the parser, the ICRC and
 * the builders can work on it without an EAL or a mempool (the inspector,
 * the fuzz target, tests).  The mbuf must never be freed to a pool.
 *
 * @param m
 *   The header to fill (e.g. on the stack).
 * @param buf
 *   The buffer; its first byte is the frame's first byte.
 * @param buf_len
 *   The buffer's size (room for building).
 * @param data_len
 *   Bytes of frame already in it (0 to build into it).
 * @return
 *   m.
 */
static inline struct rte_mbuf *
mwp_mbuf_wrap(struct rte_mbuf *m, void *buf, uint16_t buf_len, uint16_t data_len)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = buf;
	m->buf_len = buf_len;
	m->data_len = data_len;
	m->pkt_len = data_len;
	m->nb_segs = 1;
	return m;
}

/**
 * Parse one frame.
 *
 * Reads only bytes that lie inside the frame's first segment; a frame whose
 * headers continue into a second segment is reported as MWP_DROP_SEG_SPLIT
 * (payload may span segments).
 *
 * @param m
 *   The frame, data starting at the Ethernet header.
 * @param p
 *   Filled in.  On failure, fields up to the failing header are valid; if
 *   MWP_PKT_BTH is set, so are bth_off, qpn, psn, opcode and icrc_off.
 * @return
 *   MWP_DROP_NONE for a well-formed RoCEv2 packet of a known opcode, else
 *   the first reason it is not one.
 */
enum mwp_drop mwp_parse(const struct rte_mbuf *m, struct mwp_pkt *p);

/**
 * Parse a burst.
 *
 * @param pkts
 *   The frames.
 * @param n
 *   How many.
 * @param p
 *   One parsed view per frame.
 * @param why
 *   One result per frame.
 * @return
 *   The number of frames that parsed (why[i] == MWP_DROP_NONE).
 */
uint16_t mwp_parse_burst(struct rte_mbuf *const *pkts, uint16_t n,
			 struct mwp_pkt *p, enum mwp_drop *why);

/**
 * Locate an extension header in a parsed packet.
 *
 * @return
 *   A pointer into the frame, or NULL if the opcode has no such header.
 */
static inline void *
mwp_pkt_eh(const struct rte_mbuf *m, const struct mwp_pkt *p, enum roce_eh eh)
{
	return (void *)(uintptr_t)roce_op_eh(rte_pktmbuf_mtod_offset(m, uint8_t *, p->bth_off),
					      &roce_opcode[p->opcode], eh);
}

/** The BTH of a packet parsed with MWP_PKT_BTH set. */
static inline struct roce_bth *
mwp_pkt_bth(const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	return rte_pktmbuf_mtod_offset(m, struct roce_bth *, p->bth_off);
}

/** The source address of a parsed packet, IPv4 mapped into IPv6. */
static inline const uint8_t *
mwp_pkt_src_ip(const struct rte_mbuf *m, const struct mwp_pkt *p, uint8_t ip[16])
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, p->l3_off);

	if (p->flags & MWP_PKT_IPV6) {
		memcpy(ip, l3 + 8, 16);		/* ip6_hdr.ip6_src */
	} else {
		memset(ip, 0, 10);
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, l3 + 12, 4);	/* iphdr.saddr */
	}
	return ip;
}

#endif /* ROCE_PARSE_H */
