/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CTRL_H
#define MWP_CTRL_H

/**
 * @file
 * A port's control path, as its counters show it: ARP (RFC 826), IPv6
 * neighbour discovery (RFC 4861: NS and NA), and ICMP / ICMPv6 echo (RFC
 * 792, 4443), so that a peer finds the port by its addresses and `ping`
 * answers (mwp_queue_ctrl_stats, mwp_engine.h).
 */

#include <stdbool.h>
#include <stdint.h>


/** Counters: _(SYM, text), declared once. */
#define MWP_FOREACH_CTRL(_)						\
	_(ARP_REQUEST_IN,  "ARP requests for our IPv4 address")		\
	_(ARP_REPLY_IN,    "ARP replies to us")				\
	_(ARP_OTHER,       "other ARP (for other hosts, gratuitous)")	\
	_(ARP_REPLY_OUT,   "ARP replies sent")				\
	_(ARP_REQUEST_OUT, "ARP requests sent (address resolution)")	\
	_(NS_IN,           "neighbour solicitations for our IPv6 address") \
	_(NA_IN,           "neighbour advertisements")			\
	_(NA_OUT,          "neighbour advertisements sent")		\
	_(NS_OUT,          "neighbour solicitations sent (resolution)")	\
	_(ECHO_IN,         "ICMP echo requests to us")			\
	_(ECHO_OUT,        "ICMP echo replies sent")			\
	_(ECHO6_IN,        "ICMPv6 echo requests to us")		\
	_(ECHO6_OUT,       "ICMPv6 echo replies sent")			\
	_(ICMP_OTHER,      "other ICMP / ICMPv6 (RS, RA, MLD...) to us")	\
	_(NOT_OURS,        "ARP/ND/ICMP addressed to another host")	\
	_(BAD_CSUM,        "ICMP / ICMPv6 checksum wrong")		\
	_(MALFORMED,       "ARP/ND/ICMP too short or inconsistent")	\
	_(RATE_LIMITED,    "a reply not sent: over the reply rate")	\
	_(NO_MBUF,         "a reply or probe not sent: no mbuf")

/** The counters' indexes. */
enum mwp_ctrl_ctr {
#define _(sym, str) MWP_CTRL_##sym,
	MWP_FOREACH_CTRL(_)
#undef _
	MWP_CTRL__MAX
};

/** Counters of one context. */
struct mwp_ctrl_stats {
	uint64_t c[MWP_CTRL__MAX];	/**< by enum mwp_ctrl_ctr */
};

/** Lower-case name of a counter ("arp_request_in"); "?" if out of range. */
const char *mwp_ctrl_name(unsigned int c);

/** Is ip (16 bytes) IPv4-mapped (::ffff:a.b.c.d)? */
bool mwp_ip_is_v4mapped(const uint8_t ip[16]);

#endif /* MWP_CTRL_H */
