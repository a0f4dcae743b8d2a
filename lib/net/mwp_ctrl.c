/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control path (mwp_ctrl.h): ARP, NS/NA, ICMP and ICMPv6 echo.  Every
 * read is checked against the frame's first segment before it is made;
 * headers are read with memcpy (no alignment assumed).  Replies are built
 * whole in a new mbuf, mirroring an 802.1Q tag if the request had one.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "mwp_ctrl_priv.h"
#include "mwp_neigh_priv.h"
#include "mwp_names.h"

#define ETH_HLEN	14
#define VLAN_HLEN	4
#define ARP_LEN		28
#define IP4_HLEN	20
#define IP6_HLEN	40
#define ICMP_HLEN	8
#define ND_HLEN		24	/* NS/NA: type, code, csum, flags/reserved, target */

#define IPPROTO_ICMP_	1
#define IPPROTO_ICMPV6_	58
#define IPPROTO_HOPOPTS_ 0

#define ICMP_ECHO_REPLY		0
#define ICMP_ECHO_REQUEST	8
#define ICMP6_ECHO_REQUEST	128
#define ICMP6_ECHO_REPLY	129
#define ND_NS			135
#define ND_NA			136
#define ND_OPT_SLLA		1
#define ND_OPT_TLLA		2
#define NA_F_SOLICITED		0x40
#define NA_F_OVERRIDE		0x20

/* Names are the symbols in lower case, as for drop reasons. */
static const char *const ctrl_sym[MWP_CTRL__MAX] = {
#define _(sym, str) #sym,
	MWP_FOREACH_CTRL(_)
#undef _
};

MWP_NAMES_LOWER(ctrl_name, ctrl_sym, MWP_CTRL__MAX, 24)

const char *
mwp_ctrl_name(unsigned int c)
{
	return c < MWP_CTRL__MAX ? ctrl_name[c] : "?";
}

bool
mwp_ip_is_v4mapped(const uint8_t ip[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(ip, prefix, 12) == 0;
}

void
mwp_ctrl_ctx_init(struct mwp_ctrl_ctx *cx, const struct mwp_port_conf *conf,
		  struct mwp_neigh_table *neigh, struct rte_mempool *mp, uint32_t rate,
		  uint32_t burst, uint64_t tsc_hz)
{
	memset(cx, 0, sizeof(*cx));
	cx->mac = conf->mac;
	cx->has_ipv4 = conf->has_ipv4;
	cx->has_ipv6 = conf->has_ipv6;
	cx->ipv4 = conf->ipv4;
	memcpy(cx->ipv6, conf->ipv6, 16);
	cx->neigh = neigh;
	cx->mp = mp;
	cx->tsc_hz = tsc_hz;
	cx->rate = rate;
	cx->burst = burst != 0 ? burst : RTE_MAX(rate / 100, 16u);
	cx->tokens = cx->burst * tsc_hz;
	cx->learn_only = conf->host_path || conf->kernel_neigh;
}

/* May a reply go out?  Not where the host's kernel answers (learn_only);
 * otherwise one token per reply, the bucket refilling at rate a second. */
static bool
may_reply(struct mwp_ctrl_ctx *cx, uint64_t now)
{
	const uint64_t full = cx->burst * cx->tsc_hz;

	if (cx->learn_only)
		return false;	/* the host's kernel answers */
	if (cx->rate == 0)
		return true;
	if (now > cx->last) {
		uint64_t dt = now - cx->last;

		cx->tokens = dt >= cx->tsc_hz ? full :
			     RTE_MIN(full, cx->tokens + dt * cx->rate);
		cx->last = now;
	}
	if (cx->tokens < cx->tsc_hz) {
		cx->st.c[MWP_CTRL_RATE_LIMITED]++;
		return false;
	}
	cx->tokens -= cx->tsc_hz;
	return true;
}

static inline uint16_t
get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return rte_be_to_cpu_16(v);
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	v = rte_cpu_to_be_16(v);
	memcpy(p, &v, 2);
}

/* The one's complement sum of a buffer, folded to 16 bits. */
static uint16_t
csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* A checksum as __rte_raw_cksum sums: in the host's order of the
 * frame's 16-bit words, so it is stored as it is, not swapped. */
static inline void
put_csum(uint8_t *p, uint32_t sum)
{
	const uint16_t v = (uint16_t)~csum_fold(sum);

	memcpy(p, &v, 2);
}

static uint32_t
csum_add(uint32_t sum, const void *buf, size_t len)
{
	return sum + __rte_raw_cksum(buf, len, 0);
}

/* The ICMPv6 pseudo-header's sum (RFC 8200 8.1). */
static uint32_t
pseudo6(const uint8_t *src, const uint8_t *dst, uint32_t len)
{
	uint8_t tail[8] = { 0 };
	uint32_t sum = 0;

	tail[0] = (uint8_t)(len >> 24);
	tail[1] = (uint8_t)(len >> 16);
	tail[2] = (uint8_t)(len >> 8);
	tail[3] = (uint8_t)len;
	tail[7] = IPPROTO_ICMPV6_;
	sum = csum_add(sum, src, 16);
	sum = csum_add(sum, dst, 16);
	return csum_add(sum, tail, sizeof(tail));
}

/* A new frame of len bytes: Ethernet (+ the request's 802.1Q tag), the
 * EtherType; returns where the payload goes, or NULL. */
static uint8_t *
new_frame(struct mwp_ctrl_ctx *cx, struct rte_mbuf **out, const uint8_t *dst,
	  const uint8_t *vlan, uint16_t type, uint16_t len)
{
	const uint16_t l2 = ETH_HLEN + (vlan != NULL ? VLAN_HLEN : 0);
	struct rte_mbuf *m = cx->mp != NULL ? rte_pktmbuf_alloc(cx->mp) : NULL;
	uint8_t *d;

	if (m == NULL || rte_pktmbuf_tailroom(m) < (uint32_t)l2 + len) {
		rte_pktmbuf_free(m);
		cx->st.c[MWP_CTRL_NO_MBUF]++;
		return NULL;
	}
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(l2 + len));
	memcpy(d, dst, 6);
	memcpy(d + 6, &cx->mac, 6);
	if (vlan != NULL) {
		put16(d + 12, RTE_ETHER_TYPE_VLAN);
		memcpy(d + 14, vlan, 2);	/* the TCI, as it came */
		put16(d + 16, type);
	} else {
		put16(d + 12, type);
	}
	*out = m;
	return d + l2;
}

/* ---- ARP ---- */

static void
learn4(struct mwp_ctrl_ctx *cx, const uint8_t *ip4, const uint8_t *mac, bool solicited,
       uint64_t now)
{
	uint8_t ip[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (cx->neigh == NULL)
		return;
	memcpy(ip + 12, ip4, 4);
	mwp_neigh_learn(cx->neigh, ip, (const struct rte_ether_addr *)mac, solicited,
			true, now);
}

/* An ARP packet for IPv4 over Ethernet from us: op 1 (request) or 2
 * (reply), to tha/tpa (a request's tha is zero). */
static uint8_t *
new_arp(struct mwp_ctrl_ctx *cx, struct rte_mbuf **out, const uint8_t *dst,
	const uint8_t *vlan, uint16_t op, const uint8_t *tha, const uint8_t *tpa)
{
	static const uint8_t zero6[6];
	uint8_t *r = new_frame(cx, out, dst, vlan, RTE_ETHER_TYPE_ARP, ARP_LEN);

	if (r == NULL)
		return NULL;
	put16(r, 1);			/* hardware: Ethernet */
	put16(r + 2, RTE_ETHER_TYPE_IPV4);
	r[4] = 6;
	r[5] = 4;
	put16(r + 6, op);
	memcpy(r + 8, &cx->mac, 6);
	memcpy(r + 14, &cx->ipv4, 4);
	memcpy(r + 18, tha != NULL ? tha : zero6, 6);
	memcpy(r + 24, tpa, 4);
	return r;
}

static bool
arp_input(struct mwp_ctrl_ctx *cx, const uint8_t *eth, const uint8_t *vlan,
	  const uint8_t *a, uint32_t len, uint64_t now, struct rte_mbuf **reply)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero4[4];
	const uint8_t *sha = a + 8, *spa = a + 14, *tpa = a + 24;
	uint16_t op;

	if (len < ARP_LEN || get16(a) != 1 || get16(a + 2) != RTE_ETHER_TYPE_IPV4 ||
	    a[4] != 6 || a[5] != 4) {
		cx->st.c[MWP_CTRL_MALFORMED]++;
		return false;
	}
	op = get16(a + 6);
	if (op != 1 && op != 2) {
		cx->st.c[MWP_CTRL_MALFORMED]++;
		return false;
	}
	if (memcmp(eth, bcast, 6) != 0 && memcmp(eth, &cx->mac, 6) != 0) {
		cx->st.c[MWP_CTRL_NOT_OURS]++;
		return true;
	}
	/* gratuitous: a host saying where it is */
	if (memcmp(spa, tpa, 4) == 0) {
		if (memcmp(spa, zero4, 4) != 0)
			learn4(cx, spa, sha, false, now);
		cx->st.c[MWP_CTRL_ARP_OTHER]++;
		return true;
	}
	if (!cx->has_ipv4 || memcmp(tpa, &cx->ipv4, 4) != 0) {
		cx->st.c[MWP_CTRL_ARP_OTHER]++;
		return true;
	}
	if (op == 2) {
		cx->st.c[MWP_CTRL_ARP_REPLY_IN]++;
		learn4(cx, spa, sha, true, now);
		return true;
	}
	cx->st.c[MWP_CTRL_ARP_REQUEST_IN]++;
	/* a probe (RFC 5227) has sender 0.0.0.0: answer, learn nothing */
	if (memcmp(spa, zero4, 4) != 0)
		learn4(cx, spa, sha, false, now);
	if (!may_reply(cx, now))
		return true;
	if (new_arp(cx, reply, eth + 6, vlan, 2, sha, spa) == NULL)
		return true;
	cx->st.c[MWP_CTRL_ARP_REPLY_OUT]++;
	return true;
}

/* ---- IPv4: ICMP echo ---- */

static bool
ipv4_input(struct mwp_ctrl_ctx *cx, const uint8_t *eth, const uint8_t *vlan,
	   const uint8_t *ip, uint32_t len, uint64_t now, struct rte_mbuf **reply)
{
	uint32_t ihl, tot, ilen;
	const uint8_t *icmp;
	uint8_t *r;

	if (len < IP4_HLEN || ip[9] != IPPROTO_ICMP_)
		return false;
	ihl = (uint32_t)(ip[0] & 0xf) * 4;
	tot = get16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < IP4_HLEN || tot < ihl + ICMP_HLEN || tot > len) {
		cx->st.c[MWP_CTRL_MALFORMED]++;
		return false;
	}
	if (!cx->has_ipv4 || memcmp(ip + 16, &cx->ipv4, 4) != 0 ||
	    memcmp(eth, &cx->mac, 6) != 0) {
		cx->st.c[MWP_CTRL_NOT_OURS]++;
		return false;
	}
	/* fragments: not reassembled, not answered */
	if (get16(ip + 6) & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) {
		cx->st.c[MWP_CTRL_ICMP_OTHER]++;
		return true;
	}
	icmp = ip + ihl;
	ilen = tot - ihl;
	if (csum_fold(csum_add(0, icmp, ilen)) != 0xffff) {
		cx->st.c[MWP_CTRL_BAD_CSUM]++;
		return true;
	}
	if (icmp[0] != ICMP_ECHO_REQUEST || icmp[1] != 0) {
		cx->st.c[MWP_CTRL_ICMP_OTHER]++;
		return true;
	}
	cx->st.c[MWP_CTRL_ECHO_IN]++;
	if (!may_reply(cx, now))
		return true;
	r = new_frame(cx, reply, eth + 6, vlan, RTE_ETHER_TYPE_IPV4,
		      (uint16_t)(IP4_HLEN + ilen));
	if (r == NULL)
		return true;
	/* no options in the reply; the same TOS */
	memset(r, 0, IP4_HLEN);
	r[0] = 0x45;
	r[1] = ip[1];
	put16(r + 2, (uint16_t)(IP4_HLEN + ilen));
	put16(r + 6, RTE_IPV4_HDR_DF_FLAG);
	r[8] = 64;
	r[9] = IPPROTO_ICMP_;
	memcpy(r + 12, &cx->ipv4, 4);
	memcpy(r + 16, ip + 12, 4);
	put_csum(r + 10, csum_add(0, r, IP4_HLEN));
	memcpy(r + IP4_HLEN, icmp, ilen);
	r[IP4_HLEN] = ICMP_ECHO_REPLY;
	put16(r + IP4_HLEN + 2, 0);
	put_csum(r + IP4_HLEN + 2, csum_add(0, r + IP4_HLEN, ilen));
	cx->st.c[MWP_CTRL_ECHO_OUT]++;
	return true;
}

/* ---- IPv6: neighbour discovery and echo ---- */

/* ff02::1:ffXX:XXXX, the solicited-node address of ip */
static void
solicited_node(const uint8_t *ip, uint8_t *out)
{
	static const uint8_t prefix[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff };

	memcpy(out, prefix, 13);
	memcpy(out + 13, ip + 13, 3);
}

static bool
for_us6(const struct mwp_ctrl_ctx *cx, const uint8_t *dst)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	uint8_t sn[16];

	if (!cx->has_ipv6)
		return false;
	solicited_node(cx->ipv6, sn);
	return memcmp(dst, cx->ipv6, 16) == 0 || memcmp(dst, sn, 16) == 0 ||
	       memcmp(dst, all_nodes, 16) == 0;
}

/* The MAC a source/target link-layer address option gives, or NULL;
 * false if an option is malformed (a zero length, past the end). */
static bool
nd_option(const uint8_t *o, uint32_t len, uint8_t type, const uint8_t **mac)
{
	*mac = NULL;
	while (len != 0) {
		uint32_t olen;

		if (len < 2 || o[1] == 0)
			return false;
		olen = (uint32_t)o[1] * 8;
		if (olen > len)
			return false;
		if (o[0] == type && olen >= 8)
			*mac = o + 2;
		o += olen;
		len -= olen;
	}
	return true;
}

/* An IPv6 header and ICMPv6 message of ilen bytes; the caller fills the
 * message, then nd_finish puts its checksum. */
static uint8_t *
new_icmp6(struct mwp_ctrl_ctx *cx, struct rte_mbuf **out, const uint8_t *dmac,
	  const uint8_t *vlan, const uint8_t *dst, uint8_t hlim, uint16_t ilen)
{
	uint8_t *r = new_frame(cx, out, dmac, vlan, RTE_ETHER_TYPE_IPV6,
			       (uint16_t)(IP6_HLEN + ilen));

	if (r == NULL)
		return NULL;
	memset(r, 0, IP6_HLEN);
	r[0] = 0x60;
	put16(r + 4, ilen);
	r[6] = IPPROTO_ICMPV6_;
	r[7] = hlim;
	memcpy(r + 8, cx->ipv6, 16);
	memcpy(r + 24, dst, 16);
	return r;
}

static void
icmp6_finish(uint8_t *ip6, uint16_t ilen)
{
	uint8_t *icmp = ip6 + IP6_HLEN;
	uint32_t sum;

	put16(icmp + 2, 0);
	sum = csum_add(pseudo6(ip6 + 8, ip6 + 24, ilen), icmp, ilen);
	put_csum(icmp + 2, sum);
}

/* A neighbour solicitation or advertisement from us, about target, with
 * our MAC in its one option (source or target link-layer address). */
static bool
new_nd(struct mwp_ctrl_ctx *cx, struct rte_mbuf **out, const uint8_t *dmac,
       const uint8_t *vlan, const uint8_t *dip, uint8_t type, uint8_t flags,
       const uint8_t *target)
{
	uint8_t *r = new_icmp6(cx, out, dmac, vlan, dip, 255, ND_HLEN + 8);

	if (r == NULL)
		return false;
	/* code, reserved bytes and padding are zero: the mbuf is not */
	memset(r + IP6_HLEN, 0, ND_HLEN + 8);
	r[IP6_HLEN] = type;
	r[IP6_HLEN + 4] = flags;
	memcpy(r + IP6_HLEN + 8, target, 16);
	r[IP6_HLEN + ND_HLEN] = type == ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	r[IP6_HLEN + ND_HLEN + 1] = 1;
	memcpy(r + IP6_HLEN + ND_HLEN + 2, &cx->mac, 6);
	icmp6_finish(r, ND_HLEN + 8);
	return true;
}

static bool
ns_input(struct mwp_ctrl_ctx *cx, const uint8_t *eth, const uint8_t *vlan,
	 const uint8_t *ip6, const uint8_t *icmp, uint32_t ilen, uint64_t now,
	 struct rte_mbuf **reply)
{
	static const uint8_t unspec[16];
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	const uint8_t *target = icmp + 8, *slla;
	const bool dad = memcmp(ip6 + 8, unspec, 16) == 0;

	if (ilen < ND_HLEN || ip6[7] != 255 || icmp[1] != 0 ||
	    !nd_option(icmp + ND_HLEN, ilen - ND_HLEN, ND_OPT_SLLA, &slla) ||
	    (dad && slla != NULL)) {
		cx->st.c[MWP_CTRL_MALFORMED]++;
		return true;
	}
	if (memcmp(target, cx->ipv6, 16) != 0) {
		cx->st.c[MWP_CTRL_NOT_OURS]++;
		return true;
	}
	cx->st.c[MWP_CTRL_NS_IN]++;
	if (!dad && slla != NULL && cx->neigh != NULL)
		mwp_neigh_learn(cx->neigh, ip6 + 8, (const struct rte_ether_addr *)slla,
				false, true, now);
	if (!may_reply(cx, now))
		return true;
	/* to the asker (DAD: to all nodes), with our address: solicited
	 * unless DAD, override */
	if (!new_nd(cx, reply, dad ? all_nodes_mac : (slla != NULL ? slla : eth + 6), vlan,
		    dad ? all_nodes : ip6 + 8, ND_NA,
		    NA_F_OVERRIDE | (dad ? 0 : NA_F_SOLICITED), cx->ipv6))
		return true;
	cx->st.c[MWP_CTRL_NA_OUT]++;
	return true;
}

static bool
na_input(struct mwp_ctrl_ctx *cx, const uint8_t *eth, const uint8_t *ip6,
	 const uint8_t *icmp, uint32_t ilen, uint64_t now)
{
	const uint8_t *tlla;

	if (ilen < ND_HLEN || ip6[7] != 255 || icmp[1] != 0 ||
	    !nd_option(icmp + ND_HLEN, ilen - ND_HLEN, ND_OPT_TLLA, &tlla)) {
		cx->st.c[MWP_CTRL_MALFORMED]++;
		return true;
	}
	cx->st.c[MWP_CTRL_NA_IN]++;
	RTE_SET_USED(eth);
	if (tlla != NULL && cx->neigh != NULL)
		mwp_neigh_learn(cx->neigh, icmp + 8, (const struct rte_ether_addr *)tlla,
				(icmp[4] & NA_F_SOLICITED) != 0,
				(icmp[4] & NA_F_OVERRIDE) != 0, now);
	return true;
}

static bool
echo6_input(struct mwp_ctrl_ctx *cx, const uint8_t *eth, const uint8_t *vlan,
	    const uint8_t *ip6, const uint8_t *icmp, uint32_t ilen, uint64_t now,
	    struct rte_mbuf **reply)
{
	uint8_t *r;

	/* to our address only: no answer to multicast echoes */
	if (memcmp(ip6 + 24, cx->ipv6, 16) != 0 || ilen < ICMP_HLEN) {
		cx->st.c[MWP_CTRL_ICMP_OTHER]++;
		return true;
	}
	cx->st.c[MWP_CTRL_ECHO6_IN]++;
	if (!may_reply(cx, now))
		return true;
	r = new_icmp6(cx, reply, eth + 6, vlan, ip6 + 8, 64, (uint16_t)ilen);
	if (r == NULL)
		return true;
	memcpy(r + IP6_HLEN, icmp, ilen);
	r[IP6_HLEN] = ICMP6_ECHO_REPLY;
	icmp6_finish(r, (uint16_t)ilen);
	cx->st.c[MWP_CTRL_ECHO6_OUT]++;
	return true;
}

static bool
ipv6_input(struct mwp_ctrl_ctx *cx, const uint8_t *eth, const uint8_t *vlan,
	   const uint8_t *ip6, uint32_t len, uint64_t now, struct rte_mbuf **reply)
{
	const uint8_t *icmp = ip6 + IP6_HLEN;
	uint32_t plen;

	if (len < IP6_HLEN || (ip6[0] >> 4) != 6)
		return false;
	if (ip6[6] != IPPROTO_ICMPV6_ && ip6[6] != IPPROTO_HOPOPTS_)
		return false;
	plen = get16(ip6 + 4);
	if (IP6_HLEN + plen > len) {
		cx->st.c[MWP_CTRL_MALFORMED]++;
		return false;
	}
	if (!for_us6(cx, ip6 + 24) ||
	    (memcmp(eth, &cx->mac, 6) != 0 && !(eth[0] == 0x33 && eth[1] == 0x33))) {
		cx->st.c[MWP_CTRL_NOT_OURS]++;
		return false;
	}
	/* hop-by-hop options first: MLD, which a port does not take part in */
	if (ip6[6] == IPPROTO_HOPOPTS_) {
		cx->st.c[MWP_CTRL_ICMP_OTHER]++;
		return true;
	}
	if (plen < 4) {
		cx->st.c[MWP_CTRL_MALFORMED]++;
		return false;
	}
	if (csum_fold(csum_add(pseudo6(ip6 + 8, ip6 + 24, plen), icmp, plen)) != 0xffff) {
		cx->st.c[MWP_CTRL_BAD_CSUM]++;
		return true;
	}
	switch (icmp[0]) {
	case ND_NS:
		return ns_input(cx, eth, vlan, ip6, icmp, plen, now, reply);
	case ND_NA:
		return na_input(cx, eth, ip6, icmp, plen, now);
	case ICMP6_ECHO_REQUEST:
		return echo6_input(cx, eth, vlan, ip6, icmp, plen, now, reply);
	default:
		cx->st.c[MWP_CTRL_ICMP_OTHER]++;
		return true;
	}
}

bool
mwp_ctrl_input(struct mwp_ctrl_ctx *cx, const struct rte_mbuf *m, uint64_t now,
	       struct rte_mbuf **reply)
{
	const uint32_t len = rte_pktmbuf_data_len(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *vlan = NULL;
	uint32_t l3 = ETH_HLEN;
	uint16_t type;

	*reply = NULL;
	if (len < ETH_HLEN || rte_is_zero_ether_addr(&cx->mac))
		return false;
	type = get16(d + 12);
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return false;
		vlan = d + 14;
		type = get16(d + 16);
		l3 += VLAN_HLEN;
	}
	switch (type) {
	case RTE_ETHER_TYPE_ARP:
		return arp_input(cx, d, vlan, d + l3, len - l3, now, reply);
	case RTE_ETHER_TYPE_IPV4:
		return ipv4_input(cx, d, vlan, d + l3, len - l3, now, reply);
	case RTE_ETHER_TYPE_IPV6:
		return ipv6_input(cx, d, vlan, d + l3, len - l3, now, reply);
	default:
		return false;
	}
}

struct rte_mbuf *
mwp_ctrl_probe(struct mwp_ctrl_ctx *cx, const uint8_t ip[16],
	       const struct rte_ether_addr *dmac)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct rte_mbuf *m = NULL;

	if (mwp_ip_is_v4mapped(ip)) {
		if (!cx->has_ipv4)
			return NULL;
		if (new_arp(cx, &m, dmac != NULL ? (const uint8_t *)dmac : bcast, NULL, 1,
			    NULL, ip + 12) == NULL)
			return NULL;
		cx->st.c[MWP_CTRL_ARP_REQUEST_OUT]++;
		return m;
	}
	if (!cx->has_ipv6)
		return NULL;
	{
		uint8_t sn[16], mmac[6] = { 0x33, 0x33, 0xff, ip[13], ip[14], ip[15] };

		solicited_node(ip, sn);
		if (!new_nd(cx, &m, dmac != NULL ? (const uint8_t *)dmac : mmac, NULL,
			    dmac != NULL ? ip : sn, ND_NS, 0, ip))
			return NULL;
		cx->st.c[MWP_CTRL_NS_OUT]++;
		return m;
	}
}
