/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PARSE_INLINE_H
#define ROCE_PARSE_INLINE_H

/*
 * The parser itself, inline (private to libmwpath): roce_parse.c wraps it
 * as mwp_parse and mwp_parse_burst, and a queue's rx sorter
 * (engine/mwp_rx.c) runs it in the same pass as its own sorting.
 */

#include <rte_branch_prediction.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "roce_parse.h"

/* Is [0, need) inside the first segment?  If not, is it inside the frame at
 * all (a split header) or past its end (a truncated one)? */
static inline enum mwp_drop
mwp_parse_need(uint32_t need, uint32_t seg_len, uint32_t pkt_len, enum mwp_drop trunc)
{
	if (likely(need <= seg_len))
		return MWP_DROP_NONE;
	return need > pkt_len ? trunc : MWP_DROP_SEG_SPLIT;
}

#define MWP_PARSE_NEED(n, reason) do {					\
		enum mwp_drop e_ = mwp_parse_need((n), seg_len, pkt_len, (reason)); \
		if (unlikely(e_ != MWP_DROP_NONE))			\
			return e_;					\
	} while (0)

/*
 * The parser works on offsets and flags held in locals and only stores
 * into *p (never reads it back): stores of single bytes followed by wider
 * loads of the same struct defeat store forwarding, and a frame's
 * classification is on every packet's path.
 */

/* IPv4 at l3: the UDP length the IP header announces via *ip_payload. */
static inline enum mwp_drop
mwp_parse_ipv4(const uint8_t *d, uint32_t l3, struct mwp_pkt *p, uint32_t seg_len,
	       uint32_t pkt_len, uint32_t *ip_payload)
{
	const struct rte_ipv4_hdr *ip;
	uint32_t tot;

	MWP_PARSE_NEED(l3 + sizeof(*ip), MWP_DROP_IP_TRUNC);
	ip = (const struct rte_ipv4_hdr *)(d + l3);
	if (unlikely(ip->version_ihl != 0x45)) {
		if ((ip->version_ihl >> 4) != 4)
			return MWP_DROP_IP_BAD_VERSION;
		return (ip->version_ihl & 0xf) > 5 ? MWP_DROP_IPV4_OPTIONS :
						     MWP_DROP_IP_BAD_LEN;
	}
	tot = ROCE_BE16(ip->total_length);
	/* Frames may carry Ethernet padding past the IP datagram. */
	if (unlikely(tot < sizeof(*ip) || l3 + tot > pkt_len))
		return MWP_DROP_IP_BAD_LEN;
	if (unlikely(ip->fragment_offset &
		     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return MWP_DROP_IP_FRAGMENT;
	if (unlikely(ip->next_proto_id != IPPROTO_UDP))
		return MWP_DROP_NOT_UDP;
	p->tos = ip->type_of_service;
	*ip_payload = tot - sizeof(*ip);
	return MWP_DROP_NONE;
}

/* IPv6 at l3, likewise. */
static inline enum mwp_drop
mwp_parse_ipv6(const uint8_t *d, uint32_t l3, struct mwp_pkt *p, uint32_t seg_len,
	       uint32_t pkt_len, uint32_t *ip_payload)
{
	const struct rte_ipv6_hdr *ip;
	uint32_t vtc, plen;

	MWP_PARSE_NEED(l3 + sizeof(*ip), MWP_DROP_IP_TRUNC);
	ip = (const struct rte_ipv6_hdr *)(d + l3);
	vtc = ROCE_BE32(ip->vtc_flow);
	if (unlikely((vtc >> 28) != 6))
		return MWP_DROP_IP_BAD_VERSION;
	plen = ROCE_BE16(ip->payload_len);
	if (unlikely(l3 + sizeof(*ip) + plen > pkt_len))
		return MWP_DROP_IP_BAD_LEN;
	/* Extension headers are not used by RoCEv2: treat as not UDP. */
	if (unlikely(ip->proto != IPPROTO_UDP))
		return MWP_DROP_NOT_UDP;
	p->tos = (uint8_t)(vtc >> 20);
	*ip_payload = plen;
	return MWP_DROP_NONE;
}

/* Every header, every check, every drop reason. */
static __rte_always_inline enum mwp_drop
mwp_parse_generic(const struct rte_mbuf *m, struct mwp_pkt *p)
{
	const uint32_t pkt_len = rte_pktmbuf_pkt_len(m);
	const uint32_t seg_len = rte_pktmbuf_data_len(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ether_hdr *eth;
	const struct rte_udp_hdr *udp;
	const struct roce_bth *bth;
	const struct roce_opcode_info *op;
	uint32_t ip_payload, udp_len, raw, l3, l4, bth_off, icrc_off, payload_off, pad;
	uint8_t flags = 0, opcode;
	uint16_t type;
	enum mwp_drop e;

	p->flags = 0;
	p->mask = 0;
	MWP_PARSE_NEED(sizeof(*eth), MWP_DROP_RUNT);
	eth = (const struct rte_ether_hdr *)d;
	type = eth->ether_type;
	l3 = sizeof(*eth);
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN)) {
		const struct rte_vlan_hdr *vh;

		MWP_PARSE_NEED(sizeof(*eth) + sizeof(*vh), MWP_DROP_RUNT);
		vh = (const struct rte_vlan_hdr *)(eth + 1);
		flags = MWP_PKT_VLAN;
		p->flags = flags;
		p->vlan_tci = ROCE_BE16(vh->vlan_tci);
		type = vh->eth_proto;
		l3 += sizeof(*vh);
	}
	p->l3_off = (uint16_t)l3;

	if (likely(type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))) {
		e = mwp_parse_ipv4(d, l3, p, seg_len, pkt_len, &ip_payload);
		l4 = l3 + sizeof(struct rte_ipv4_hdr);
	} else if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		e = mwp_parse_ipv6(d, l3, p, seg_len, pkt_len, &ip_payload);
		l4 = l3 + sizeof(struct rte_ipv6_hdr);
		flags |= MWP_PKT_IPV6;
	} else {
		return MWP_DROP_NOT_IP;
	}
	if (unlikely(e != MWP_DROP_NONE))
		return e;
	p->flags = flags;
	p->l4_off = (uint16_t)l4;

	if (unlikely(ip_payload < sizeof(*udp)))
		return MWP_DROP_UDP_TRUNC;
	MWP_PARSE_NEED(l4 + sizeof(*udp), MWP_DROP_UDP_TRUNC);
	udp = (const struct rte_udp_hdr *)(d + l4);
	if (unlikely(udp->dst_port != rte_cpu_to_be_16(ROCE_UDP_PORT)))
		return MWP_DROP_NOT_ROCE_PORT;
	udp_len = ROCE_BE16(udp->dgram_len);
	if (unlikely(udp_len != ip_payload))
		return MWP_DROP_UDP_BAD_LEN;
	if (unlikely(udp_len < sizeof(*udp) + sizeof(*bth) + ROCE_ICRC_BYTES))
		return MWP_DROP_BTH_TRUNC;

	bth_off = l4 + sizeof(*udp);
	p->bth_off = (uint16_t)bth_off;
	MWP_PARSE_NEED(bth_off + sizeof(*bth), MWP_DROP_BTH_TRUNC);
	bth = (const struct roce_bth *)(d + bth_off);
	opcode = bth_opcode(bth);
	pad = bth_pad(bth);
	icrc_off = l4 + udp_len - ROCE_ICRC_BYTES;
	p->opcode = opcode;
	p->qpn = bth_dqpn(bth);
	p->psn = bth_psn(bth);
	p->pad = (uint8_t)pad;
	p->icrc_off = (uint16_t)icrc_off;
	p->flags = flags | MWP_PKT_BTH;

	if (unlikely(bth_tver(bth) != 0))
		return MWP_DROP_BAD_TVER;
	op = &roce_opcode[opcode];
	if (unlikely(op->mask == 0))
		return MWP_DROP_UNKNOWN_OPCODE;
	p->mask = op->mask;
	payload_off = bth_off + op->hdr_len;
	p->payload_off = (uint16_t)payload_off;
	if (unlikely(payload_off > icrc_off))
		return MWP_DROP_HDR_TRUNC;
	MWP_PARSE_NEED(payload_off, MWP_DROP_HDR_TRUNC);
	raw = icrc_off - payload_off;
	if (unlikely(pad > raw))
		return MWP_DROP_BAD_PAD;
	p->payload_len = (uint16_t)(raw - pad);
	return MWP_DROP_NONE;
}

static inline uint16_t
mwp_parse_load16(const uint8_t *at)
{
	uint16_t v;

	memcpy(&v, at, sizeof(v));
	return v;
}

/* Where the fast path finds an accepted frame's headers. */
#define MWP_PARSE_FAST_L3 RTE_ETHER_HDR_LEN
#define MWP_PARSE_FAST_BTH (MWP_PARSE_FAST_L3 + sizeof(struct rte_ipv4_hdr) + \
			    sizeof(struct rte_udp_hdr))

/*
 * The common frame -- untagged IPv4 without options, UDP 4791, a known
 * opcode, headers in the first segment -- checked with fewer and wider
 * loads.  Returns its opcode's entry (non-NULL) only for a frame the
 * generic parser accepts, having filled *p exactly as it would (IP at
 * MWP_PARSE_FAST_L3, the BTH at MWP_PARSE_FAST_BTH); on NULL *p is
 * untouched and the generic parser decides (and names the reason).
 * test_parse and the fuzz target hold the two to the same answers.
 */
static __rte_always_inline const struct roce_opcode_info *
mwp_parse_fast(const struct rte_mbuf *m, struct mwp_pkt *p)
{
	enum {
		L3 = MWP_PARSE_FAST_L3,
		L4 = L3 + sizeof(struct rte_ipv4_hdr),
		BTH = MWP_PARSE_FAST_BTH,
		HDRS = BTH + sizeof(struct roce_bth),
	};
	const uint32_t pkt_len = rte_pktmbuf_pkt_len(m);
	const uint32_t seg_len = rte_pktmbuf_data_len(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct roce_opcode_info *op;
	uint32_t tot, udp_len, icrc_off, payload_off, pad, end, bflags;

	if (unlikely(seg_len < HDRS))
		return NULL;
	if (mwp_parse_load16(d + 12) != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    d[L3] != 0x45 || d[L3 + 9] != IPPROTO_UDP ||
	    (mwp_parse_load16(d + L3 + 6) &
	     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0 ||
	    mwp_parse_load16(d + L4 + 2) != rte_cpu_to_be_16(ROCE_UDP_PORT))
		return NULL;
	tot = ROCE_BE16(mwp_parse_load16(d + L3 + 2));
	udp_len = ROCE_BE16(mwp_parse_load16(d + L4 + 4));
	if (L3 + tot > pkt_len || udp_len + sizeof(struct rte_ipv4_hdr) != tot ||
	    udp_len < sizeof(struct rte_udp_hdr) + sizeof(struct roce_bth) + ROCE_ICRC_BYTES)
		return NULL;
	/* the payload ends before the pad, which ends before the ICRC (at
	 * least 54 bytes into the frame, so neither subtraction wraps); the
	 * end is computed while the flags are in a register: GCC spilled
	 * them as a byte and reloaded a word, which store forwarding cannot
	 * serve */
	bflags = d[BTH + 1];
	icrc_off = L4 + udp_len - ROCE_ICRC_BYTES;
	pad = (bflags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
	end = icrc_off - pad;
	if ((bflags & ROCE_BTH_TVER_MASK) != 0)
		return NULL;
	op = &roce_opcode[d[BTH]];
	payload_off = BTH + op->hdr_len;
	if (op->mask == 0 || payload_off > end || payload_off > seg_len)
		return NULL;
	p->mask = op->mask;
	p->qpn = bth_dqpn((const struct roce_bth *)(d + BTH));
	p->psn = bth_psn((const struct roce_bth *)(d + BTH));
	p->l3_off = L3;
	p->l4_off = L4;
	p->bth_off = BTH;
	p->payload_off = (uint16_t)payload_off;
	p->payload_len = (uint16_t)(end - payload_off);
	p->icrc_off = (uint16_t)icrc_off;
	p->opcode = d[BTH];
	p->pad = (uint8_t)pad;
	p->flags = MWP_PKT_BTH;
	p->tos = d[L3 + 1];
	return op;
}

/* mwp_parse, inline: a queue's rx sorter and mwp_parse_burst call
 * it once per frame, where a call costs more than some of the checks. */
static __rte_always_inline enum mwp_drop
mwp_parse_inline(const struct rte_mbuf *m, struct mwp_pkt *p)
{
	if (likely(mwp_parse_fast(m, p) != NULL))
		return MWP_DROP_NONE;
	return mwp_parse_generic(m, p);
}

#endif /* ROCE_PARSE_INLINE_H */
