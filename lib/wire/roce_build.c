/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_memcpy.h>
#include <rte_udp.h>

#include "roce_build.h"
#include "roce_icrc.h"

#define DEFAULT_TTL 64

/* Store a big-endian word at an unaligned address. */
static inline void
put_be32(void *at, uint32_t v)
{
	const rte_be32_t w = rte_cpu_to_be_32(v);

	memcpy(at, &w, sizeof(w));
}

static inline void
put_be64(void *at, uint64_t v)
{
	const rte_be64_t w = rte_cpu_to_be_64(v);

	memcpy(at, &w, sizeof(w));
}

/* The BTH as three big-endian words (one store each, on every frame). */
static __rte_always_inline void
put_bth(uint8_t *b, uint8_t opcode, uint8_t flags, uint16_t pkey, uint8_t fecn_becn,
	uint32_t dqpn, uint8_t ackreq, uint32_t psn)
{
	put_be32(b, (uint32_t)opcode << 24 | (uint32_t)flags << 16 | pkey);
	put_be32(b + 4, (uint32_t)fecn_becn << 24 | (dqpn & ROCE_PSN_MASK));
	put_be32(b + 8, (uint32_t)ackreq << 24 | (psn & ROCE_PSN_MASK));
}

static inline void
put_aeth(uint8_t *at, uint8_t syndrome, uint32_t msn)
{
	put_be32(at, (uint32_t)syndrome << 24 | (msn & ROCE_PSN_MASK));
}

/* Write each extension header the opcode carries at its table offset. */
static void
write_ehs(uint8_t *bth, const struct roce_opcode_info *op,
	  const struct mwp_hdrs *h)
{
	const uint8_t *off = op->off;

	if (op->mask & ROCE_M_DETH) {
		struct roce_deth *d = (void *)(bth + off[ROCE_EH_DETH]);

		d->qkey = rte_cpu_to_be_32(h->deth.qkey);
		d->reserved = 0;
		roce_put24(d->sqpn, h->deth.sqpn);
	}
	if (op->mask & ROCE_M_RETH) {
		struct roce_reth *r = (void *)(bth + off[ROCE_EH_RETH]);

		r->va = rte_cpu_to_be_64(h->reth.va);
		r->rkey = rte_cpu_to_be_32(h->reth.rkey);
		r->dmalen = rte_cpu_to_be_32(h->reth.dmalen);
	}
	if (op->mask & ROCE_M_ATMETH) {
		struct roce_atmeth *a = (void *)(bth + off[ROCE_EH_ATMETH]);

		a->va = rte_cpu_to_be_64(h->atmeth.va);
		a->rkey = rte_cpu_to_be_32(h->atmeth.rkey);
		a->swap_add = rte_cpu_to_be_64(h->atmeth.swap_add);
		a->compare = rte_cpu_to_be_64(h->atmeth.compare);
	}
	if (op->mask & ROCE_M_AETH)
		put_aeth(bth + off[ROCE_EH_AETH], h->aeth.syndrome, h->aeth.msn);
	if (op->mask & ROCE_M_ATMACK)
		put_be64(bth + off[ROCE_EH_ATMACK], h->atmack_orig);
	if (op->mask & ROCE_M_IMMDT) {
		struct roce_immdt *i = (void *)(bth + off[ROCE_EH_IMMDT]);

		i->imm = h->imm;
	}
	if (op->mask & ROCE_M_IETH) {
		struct roce_ieth *i = (void *)(bth + off[ROCE_EH_IETH]);

		i->rkey = rte_cpu_to_be_32(h->ieth_rkey);
	}
	if (op->mask & ROCE_M_CNP)
		memset(bth + off[ROCE_EH_CNP], 0, sizeof(struct roce_cnp));
}

static __rte_always_inline void
write_bth(uint8_t *b, const struct mwp_hdrs *h, uint8_t pad)
{
	put_bth(b, h->opcode,
		(h->se ? ROCE_BTH_SE : 0) | (h->mig ? ROCE_BTH_MIG : 0) |
		(uint8_t)(pad << ROCE_BTH_PAD_SHIFT),
		h->pkey != 0 ? h->pkey : 0xffff,
		(h->fecn ? ROCE_BTH_FECN : 0) | (h->becn ? ROCE_BTH_BECN : 0),
		h->dqpn, h->ackreq ? ROCE_BTH_ACKREQ : 0, h->psn);
}

/* The checksum of the IPv4 header write_l2_l3 writes, from the values in
 * registers.  rte_ipv4_cksum() loads the header just stored field by
 * field with one wide load, which waits for the stores (store forwarding
 * fails): write_l2_l3 was 6.7% of the one-process 64 B WRITE's time, 2.0%
 * after.  Summed in network order here, the same value (RFC 1071). */
static inline rte_be16_t
ipv4_cksum(uint8_t tos, uint16_t total_length, uint8_t ttl, rte_be32_t sip, rte_be32_t dip)
{
	const uint32_t s = rte_be_to_cpu_32(sip), d = rte_be_to_cpu_32(dip);
	uint32_t sum = ((uint32_t)RTE_IPV4_VHL_DEF << 8 | tos) + total_length +
		       RTE_IPV4_HDR_DF_FLAG + ((uint32_t)ttl << 8 | IPPROTO_UDP) +
		       (s >> 16) + (s & 0xffff) + (d >> 16) + (d & 0xffff);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return rte_cpu_to_be_16((uint16_t)~sum);
}

/* Ethernet (+VLAN) and IP headers; returns the UDP offset. */
static uint16_t
write_l2_l3(uint8_t *d, const struct mwp_flow *f, struct mwp_pkt *p,
	    uint16_t ip_payload)
{
	struct rte_ether_hdr *eth = (void *)d;
	uint16_t off = sizeof(*eth);
	rte_be16_t type = rte_cpu_to_be_16(f->ipv6 ? RTE_ETHER_TYPE_IPV6 :
						     RTE_ETHER_TYPE_IPV4);
	uint8_t ttl = f->ttl != 0 ? f->ttl : DEFAULT_TTL;

	rte_ether_addr_copy(&f->dmac, &eth->dst_addr);
	rte_ether_addr_copy(&f->smac, &eth->src_addr);
	if (f->vlan) {
		struct rte_vlan_hdr *vh = (void *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(f->vlan_tci);
		vh->eth_proto = type;
		off += sizeof(*vh);
		p->flags |= MWP_PKT_VLAN;
		p->vlan_tci = f->vlan_tci;
	} else {
		eth->ether_type = type;
	}
	p->l3_off = off;
	if (f->ipv6) {
		struct rte_ipv6_hdr *ip = (void *)(d + off);

		ip->vtc_flow = rte_cpu_to_be_32((6u << 28) |
			((uint32_t)f->tos << 20) | (f->flow_label & 0xfffff));
		ip->payload_len = rte_cpu_to_be_16(ip_payload);
		ip->proto = IPPROTO_UDP;
		ip->hop_limits = ttl;
		memcpy(ip->src_addr, f->sip6, 16);
		memcpy(ip->dst_addr, f->dip6, 16);
		off += sizeof(*ip);
		p->flags |= MWP_PKT_IPV6;
	} else {
		struct rte_ipv4_hdr *ip = (void *)(d + off);

		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->type_of_service = f->tos;
		ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + ip_payload);
		ip->packet_id = 0;
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = ttl;
		ip->next_proto_id = IPPROTO_UDP;
		ip->src_addr = f->sip4;
		ip->dst_addr = f->dip4;
		ip->hdr_checksum = ipv4_cksum(f->tos, sizeof(*ip) + ip_payload, ttl, f->sip4,
					      f->dip4);
		off += sizeof(*ip);
	}
	p->tos = f->tos;
	return off;
}

/* After the headers up to the BTH's extension headers: the payload, the
 * pad, and the parsed view from the BTH on (both builders). */
static __rte_always_inline void
write_payload(uint8_t *d, uint16_t bth, const struct roce_opcode_info *op,
	      uint8_t opcode, uint32_t dqpn, uint32_t psn, const void *payload,
	      uint32_t len, uint8_t pad, struct mwp_pkt *p)
{
	const uint16_t off = bth + op->hdr_len;

	if (len != 0)
		rte_memcpy(d + off, payload, len);
	/* the pad (0-3 bytes): four zero bytes, the rest of which the ICRC
	 * after it overwrites */
	memset(d + off + len, 0, ROCE_ICRC_BYTES);

	p->bth_off = bth;
	p->payload_off = off;
	p->opcode = opcode;
	p->mask = op->mask;
	p->qpn = dqpn & ROCE_PSN_MASK;
	p->psn = psn & ROCE_PSN_MASK;
	p->pad = pad;
	p->payload_len = (uint16_t)len;
	p->icrc_off = (uint16_t)(off + len + pad);
}

/* UDP (lengths already known), BTH, extension headers, payload and pad
 * after the L2/L3 headers; fills *p from l4 on. */
static void
write_l4_up(uint8_t *d, uint16_t l4, const struct roce_opcode_info *op,
	    const struct mwp_hdrs *h, uint16_t sport, uint32_t udp_len,
	    const void *payload, uint32_t len, uint8_t pad, struct mwp_pkt *p)
{
	struct rte_udp_hdr *udp = (void *)(d + l4);
	const uint16_t bth = l4 + sizeof(*udp);

	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(ROCE_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)udp_len);
	udp->dgram_cksum = 0;
	write_bth(d + bth, h, pad);
	write_ehs(d + bth, op, h);
	write_payload(d, bth, op, h->opcode, h->dqpn, h->psn, payload, len, pad, p);
	p->l4_off = l4;
	p->flags |= MWP_PKT_BTH;
}

static int
build(struct rte_mbuf *m, const struct mwp_flow *f, const struct mwp_hdrs *h,
      const void *payload, uint32_t len, struct mwp_pkt *out, bool icrc)
{
	const struct roce_opcode_info *op = &roce_opcode[h->opcode];
	const uint8_t pad = (uint8_t)(-len & 3);
	struct mwp_pkt pk = { 0 };
	struct mwp_pkt *p = out != NULL ? out : &pk;
	uint32_t l3_len, udp_len, frame;
	uint8_t *d;

	if (op->mask == 0 || m->data_len != 0 ||
	    (len != 0 && !(op->mask & ROCE_M_PAYLOAD)))
		return -EINVAL;
	udp_len = sizeof(struct rte_udp_hdr) + op->hdr_len + len + pad + ROCE_ICRC_BYTES;
	l3_len = f->ipv6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
	frame = sizeof(struct rte_ether_hdr) +
		(f->vlan ? sizeof(struct rte_vlan_hdr) : 0) + l3_len + udp_len;
	if (frame > UINT16_MAX || frame > rte_pktmbuf_tailroom(m))
		return -ENOSPC;
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)frame);

	memset(p, 0, sizeof(*p));
	write_l4_up(d, write_l2_l3(d, f, p, (uint16_t)udp_len), op, h, f->sport,
		    udp_len, payload, len, pad, p);
	if (!icrc)
		return 1;
	mwp_icrc_fill(m, p);
	/* The UDP checksum covers the ICRC, and the ICRC masks the checksum. */
	if (f->ipv6 && f->udp6_csum) {
		struct rte_udp_hdr *udp = (void *)(d + p->l4_off);

		udp->dgram_cksum = rte_ipv6_udptcp_cksum(
			(const struct rte_ipv6_hdr *)(d + p->l3_off), udp);
	}
	return 0;
}

void
mwp_flow_tmpl_make(struct mwp_flow_tmpl *t, const struct mwp_flow *f)
{
	struct mwp_pkt p = { 0 };

	memset(t, 0, sizeof(*t));
	t->usable = !(f->ipv6 && f->udp6_csum);
	t->sport = f->sport;
	t->l4_off = (uint8_t)write_l2_l3(t->hdr, f, &p, 0);
	t->l3_off = (uint8_t)p.l3_off;
	t->flags = p.flags;
	t->tos = p.tos;
	t->vlan_tci = p.vlan_tci;
	t->len = (uint8_t)(t->l4_off + sizeof(struct rte_udp_hdr));
	{
		struct rte_udp_hdr *udp = (void *)(t->hdr + t->l4_off);

		udp->src_port = rte_cpu_to_be_16(f->sport);
		udp->dst_port = rte_cpu_to_be_16(ROCE_UDP_PORT);
	}
	if (!(p.flags & MWP_PKT_IPV6)) {
		struct rte_ipv4_hdr *ip = (void *)(t->hdr + t->l3_off);

		/* the header's sum without its length and checksum: each
		 * answer adds its length */
		ip->total_length = 0;
		ip->hdr_checksum = 0;
		t->ip_sum = __rte_raw_cksum(ip, sizeof(*ip), 0);
	}
}

void
mwp_answer_hdrs(struct mwp_hdrs *h, const struct mwp_answer *a)
{
	*h = (struct mwp_hdrs){
		.opcode = a->opcode, .dqpn = a->dqpn, .psn = a->psn,
		.aeth = { .syndrome = a->syndrome, .msn = a->msn },
		.atmack_orig = a->orig,
	};
}

/* The template's headers into m, with the lengths of a frame of
 * opcode op and len payload bytes: returns its first byte, or NULL if
 * it does not fit (-ENOSPC). */
static __rte_always_inline uint8_t *
tmpl_frame(struct rte_mbuf *m, const struct mwp_flow_tmpl *t, const struct roce_opcode_info *op,
	   uint32_t len, uint8_t pad)
{
	const uint32_t udp_len = sizeof(struct rte_udp_hdr) + op->hdr_len + len + pad +
				 ROCE_ICRC_BYTES;
	const uint32_t frame = t->l4_off + udp_len;
	const uint32_t copy = RTE_ALIGN_CEIL((uint32_t)t->len, 16u);
	struct rte_udp_hdr *udp;
	uint8_t *d;

	RTE_BUILD_BUG_ON(sizeof(t->hdr) % 16 != 0);
	/* the headers go in as whole 16-byte blocks: room for those too */
	if (unlikely(frame > UINT16_MAX || RTE_MAX(frame, copy) > rte_pktmbuf_tailroom(m)))
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)frame);
	for (unsigned int i = 0; i < copy; i += 16)
		rte_mov16(d + i, t->hdr + i);
	if (t->flags & MWP_PKT_IPV6) {
		struct rte_ipv6_hdr *ip = (void *)(d + t->l3_off);

		ip->payload_len = rte_cpu_to_be_16((uint16_t)udp_len);
	} else {
		struct rte_ipv4_hdr *ip = (void *)(d + t->l3_off);
		const rte_be16_t tot = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + udp_len));

		ip->total_length = tot;
		ip->hdr_checksum = (uint16_t)~__rte_raw_cksum_reduce(t->ip_sum + tot);
	}
	/* UDP ports and checksum come with the template */
	udp = (void *)(d + t->l4_off);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)udp_len);
	return d;
}

/* The parsed view's fields up to the BTH, from the template. */
static __rte_always_inline void
tmpl_view(struct mwp_pkt *p, const struct mwp_flow_tmpl *t)
{
	p->l3_off = t->l3_off;
	p->l4_off = t->l4_off;
	p->vlan_tci = t->vlan_tci;
	p->flags = t->flags | MWP_PKT_BTH;
	p->tos = t->tos;
}

int
mwp_build_answer(struct rte_mbuf *m, const struct mwp_flow_tmpl *t,
		 const struct mwp_answer *a, const void *payload, uint32_t len,
		 struct mwp_pkt *p)
{
	const struct roce_opcode_info *op = &roce_opcode[a->opcode];
	const uint8_t pad = (uint8_t)(-len & 3);
	const uint32_t bth = t->l4_off + sizeof(struct rte_udp_hdr);
	uint8_t *d;

	/* an answer's opcode: no extension header but AETH and AtomicAckETH */
	if (unlikely(!(op->mask & ROCE_M_RESP) ||
		     (op->mask & (ROCE_M_DETH | ROCE_M_RETH | ROCE_M_ATMETH |
				  ROCE_M_IMMDT | ROCE_M_IETH | ROCE_M_CNP)) ||
		     m->data_len != 0 || (len != 0 && !(op->mask & ROCE_M_PAYLOAD))))
		return -EINVAL;
	d = tmpl_frame(m, t, op, len, pad);
	if (unlikely(d == NULL))
		return -ENOSPC;
	/* an answer's BTH: no SE, MIG, FECN, BECN or AckReq, the default
	 * P_Key (what mwp_answer_hdrs gives write_bth) */
	put_bth(d + bth, a->opcode, (uint8_t)(pad << ROCE_BTH_PAD_SHIFT), 0xffff, 0,
		a->dqpn, 0, a->psn);
	if (op->mask & ROCE_M_AETH)
		put_aeth(d + bth + op->off[ROCE_EH_AETH], a->syndrome, a->msn);
	if (op->mask & ROCE_M_ATMACK)
		put_be64(d + bth + op->off[ROCE_EH_ATMACK], a->orig);
	write_payload(d, (uint16_t)bth, op, a->opcode, a->dqpn, a->psn, payload, len,
		      pad, p);
	tmpl_view(p, t);
	return 1;
}

int
mwp_build_tmpl(struct rte_mbuf *m, const struct mwp_flow_tmpl *t,
	       const struct mwp_hdrs *h, const void *payload, uint32_t len,
	       struct mwp_pkt *p)
{
	const struct roce_opcode_info *op = &roce_opcode[h->opcode];
	const uint8_t pad = (uint8_t)(-len & 3);
	const uint32_t bth = t->l4_off + sizeof(struct rte_udp_hdr);
	uint8_t *d;

	if (unlikely(op->mask == 0 || m->data_len != 0 ||
		     (len != 0 && !(op->mask & ROCE_M_PAYLOAD))))
		return -EINVAL;
	d = tmpl_frame(m, t, op, len, pad);
	if (unlikely(d == NULL))
		return -ENOSPC;
	write_bth(d + bth, h, pad);
	write_ehs(d + bth, op, h);
	write_payload(d, (uint16_t)bth, op, h->opcode, h->dqpn, h->psn, payload, len, pad, p);
	tmpl_view(p, t);
	return 1;
}

int
mwp_build(struct rte_mbuf *m, const struct mwp_flow *f,
	  const struct mwp_hdrs *h, const void *payload, uint32_t len,
	  struct mwp_pkt *out)
{
	return build(m, f, h, payload, len, out, true);
}

int
mwp_build_deferred(struct rte_mbuf *m, const struct mwp_flow *f,
		   const struct mwp_hdrs *h, const void *payload, uint32_t len,
		   struct mwp_pkt *p)
{
	/* an IPv6 UDP checksum covers the ICRC: that frame is finished now */
	return build(m, f, h, payload, len, p, f->ipv6 && f->udp6_csum);
}

int
mwp_build_ack(struct rte_mbuf *m, const struct mwp_flow *f, uint32_t dqpn,
	      uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	const struct mwp_answer a = {
		.opcode = ROCE_OP_RC_ACKNOWLEDGE, .syndrome = syndrome,
		.dqpn = dqpn, .psn = psn, .msn = msn,
	};
	struct mwp_hdrs h;

	mwp_answer_hdrs(&h, &a);
	return mwp_build(m, f, &h, NULL, 0, NULL);
}

int
mwp_build_read_resp(struct rte_mbuf *m, const struct mwp_flow *f,
		    uint8_t opcode, uint32_t dqpn, uint32_t psn,
		    uint8_t syndrome, uint32_t msn, const void *data,
		    uint32_t len)
{
	const struct mwp_answer a = {
		.opcode = opcode, .syndrome = syndrome, .dqpn = dqpn, .psn = psn,
		.msn = msn,
	};
	struct mwp_hdrs h;

	if (!(roce_opcode[opcode].mask & ROCE_M_READ) ||
	    !(roce_opcode[opcode].mask & ROCE_M_RESP))
		return -EINVAL;
	mwp_answer_hdrs(&h, &a);
	return mwp_build(m, f, &h, data, len, NULL);
}

int
mwp_build_atomic_ack(struct rte_mbuf *m, const struct mwp_flow *f,
		     uint32_t dqpn, uint32_t psn, uint32_t msn, uint64_t orig)
{
	/* its AETH has no end-to-end credit count, as every ACK */
	const struct mwp_answer a = {
		.opcode = ROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
		.syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
		.dqpn = dqpn, .psn = psn, .msn = msn, .orig = orig,
	};
	struct mwp_hdrs h;

	mwp_answer_hdrs(&h, &a);
	return mwp_build(m, f, &h, NULL, 0, NULL);
}

void
mwp_flow_mirror(struct mwp_flow *f, const struct rte_mbuf *m, const struct mwp_pkt *p,
		uint8_t ecn)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const void *);
	const struct rte_udp_hdr *udp =
		rte_pktmbuf_mtod_offset(m, const void *, p->l4_off);

	memset(f, 0, sizeof(*f));
	rte_ether_addr_copy(&eth->dst_addr, &f->smac);
	rte_ether_addr_copy(&eth->src_addr, &f->dmac);
	f->vlan = p->flags & MWP_PKT_VLAN;
	f->vlan_tci = p->vlan_tci;
	f->ipv6 = p->flags & MWP_PKT_IPV6;
	if (f->ipv6) {
		const struct rte_ipv6_hdr *ip =
			rte_pktmbuf_mtod_offset(m, const void *, p->l3_off);

		memcpy(f->sip6, ip->dst_addr, 16);
		memcpy(f->dip6, ip->src_addr, 16);
	} else {
		const struct rte_ipv4_hdr *ip =
			rte_pktmbuf_mtod_offset(m, const void *, p->l3_off);

		f->sip4 = ip->dst_addr;
		f->dip4 = ip->src_addr;
	}
	f->tos = (uint8_t)((p->tos & ~3u) | (ecn & 3u));
	f->sport = rte_be_to_cpu_16(udp->src_port);
}
