/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "roce_icrc.h"
#include "roce_parse.h"
#include "roce_resp.h"

/* A RoCE NIC answers only what is addressed to it.  A port with no IP
 * address configured accepts any destination (replays of foreign traffic). */
static inline enum mwp_drop
check_dest(const struct mwp_port_conf *c, const struct rte_mbuf *m,
	   const struct mwp_pkt *p)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const void *);

	if (!rte_is_zero_ether_addr(&c->mac) &&
	    !rte_is_same_ether_addr(&eth->dst_addr, &c->mac))
		return MWP_DROP_NOT_FOR_US;
	if (!c->has_ipv4 && !c->has_ipv6)
		return MWP_DROP_NONE;
	if (p->flags & MWP_PKT_IPV6) {
		const struct rte_ipv6_hdr *ip6 =
			rte_pktmbuf_mtod_offset(m, const void *, p->l3_off);

		if (!c->has_ipv6 || memcmp(ip6->dst_addr, c->ipv6, 16) != 0)
			return MWP_DROP_NOT_FOR_US;
	} else {
		const struct rte_ipv4_hdr *ip4 =
			rte_pktmbuf_mtod_offset(m, const void *, p->l3_off);

		if (!c->has_ipv4 || ip4->dst_addr != c->ipv4)
			return MWP_DROP_NOT_FOR_US;
	}
	return MWP_DROP_NONE;
}

uint16_t
mwp_resp_burst(struct mwp_port *port, struct rte_mbuf **pkts, uint16_t n,
	       struct rte_mbuf **tx, struct mwp_stats *st)
{
	struct mwp_pkt p[MWP_BURST_MAX];
	enum mwp_drop why[MWP_BURST_MAX];
	struct rte_mbuf *dead[MWP_BURST_MAX];
	uint16_t nb_dead = 0;
	uint64_t bytes = 0;

	RTE_ASSERT(n <= MWP_BURST_MAX);
	for (uint16_t i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	st->rx_pkts += n;
	st->rx_bytes += bytes;

	mwp_parse_burst(pkts, n, p, why);
	mwp_icrc_verify_burst(pkts, p, why, n);

	for (uint16_t i = 0; i < n; i++) {
		enum mwp_drop e = why[i];

		if (e == MWP_DROP_NONE)
			e = check_dest(&port->conf, pkts[i], &p[i]);
		if (e == MWP_DROP_NONE && p[i].opcode == ROCE_OP_CNP)
			e = MWP_DROP_CNP;
		if (e == MWP_DROP_NONE && mwp_port_qp(port, p[i].qpn) == NULL)
			e = MWP_DROP_UNKNOWN_QP;
		if (e == MWP_DROP_NONE) {
			/* Execution on the QP (WRITE/READ/ATOMIC/SEND and
			 * their answers) is the next stage of the pipeline;
			 * until a QP engine consumes the frame it is counted
			 * as accepted and released. */
			st->accepted++;
		} else {
			st->drop[e]++;
		}
		dead[nb_dead++] = pkts[i];
	}
	rte_pktmbuf_free_bulk(dead, nb_dead);
	RTE_SET_USED(tx);
	return 0;
}
