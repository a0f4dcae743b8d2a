/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_DROP_H
#define MWP_DROP_H

/**
 * @file
 * Why mwpath did not accept a received frame.
 *
 * Every reason is declared once here (symbol and one-line text) and expanded
 * into the enum, the name table and the per-port counters, so that a reason
 * cannot exist without its counter and its text.  Source order is the order
 * in which the checks run.
 */

#define MWP_FOREACH_DROP(_)						\
	_(RUNT,           "frame shorter than an Ethernet header")	\
	_(NOT_IP,         "not IPv4/IPv6 (ARP, LLDP, stacked VLANs...)") \
	_(IP_TRUNC,       "IP header truncated")				\
	_(IP_BAD_VERSION, "IP version disagrees with the EtherType")	\
	_(IPV4_OPTIONS,   "IPv4 header with options")			\
	_(IP_BAD_LEN,     "IP length disagrees with the frame")		\
	_(IP_FRAGMENT,    "IPv4 fragment")				\
	_(NOT_UDP,        "IP payload is not UDP")			\
	_(UDP_TRUNC,      "UDP header truncated")			\
	_(NOT_ROCE_PORT,  "UDP destination port is not 4791")		\
	_(UDP_BAD_LEN,    "UDP length disagrees with the IP length")	\
	_(BTH_TRUNC,      "BTH and ICRC do not fit the UDP payload")	\
	_(BAD_TVER,       "BTH transport version is not 0")		\
	_(UNKNOWN_OPCODE, "BTH opcode unknown to mwpath")		\
	_(HDR_TRUNC,      "extension headers do not fit the packet")	\
	_(SEG_SPLIT,      "headers split across mbuf segments")		\
	_(BAD_PAD,        "pad count larger than the payload")		\
	_(BAD_ICRC,       "ICRC mismatch")				\
	_(NOT_FOR_US,     "destination MAC or IP is not this port's")	\
	_(CNP,            "congestion notification for no QP of the port")	\
	_(UNKNOWN_QP,     "destination QP does not exist on this port")	\
	_(GUESSING,       "source blocked: too many requests refused for key, bounds or access") \
	_(QP_STATE,       "QP not in RTR/RTS, or its responder stopped on a NAK") \
	_(WRONG_TRANSPORT, "opcode of another transport, or not a request") \
	_(PSN_AHEAD,      "PSN ahead of expected (sequence-error NAK sent once)") \
	_(DUPLICATE,      "duplicate that cannot be answered again")	\
	_(RESP_STALE,     "response for a PSN already acknowledged")	\
	_(RESP_GHOST,     "response for a PSN never sent, or none outstanding") \
	_(RESP_IMPLICIT,  "response past a lost one: implicit NAK, sent again") \
	_(RESP_BAD,       "response of the wrong opcode or length: BAD_RESP_ERR") \
	_(UC_DISCARD,     "UC packet of a broken or refused message")	\
	_(UD_QKEY,        "UD SEND whose Q_Key is not its QP's")		\
	_(UD_TOO_LONG,    "UD SEND longer than the port's MTU")		\
	_(UD_NO_RECV,     "UD SEND with no receive posted")		\
	_(UD_RECV_SHORT,  "UD SEND longer than its receive (the receive kept)") \
	_(HANDOFF_FULL,   "hand-off to the QP's owning queue full")	\
	_(HOST_FULL,      "for the host's kernel, but its exception path was full") \
	_(INV_BUSY,       "SEND with invalidate while the device lock was held: sent again") \
	_(NO_MBUF,        "response lost: no mbuf")			\
	_(TX_FULL,        "response lost: tx queue full")

/** Reasons a frame is dropped; MWP_DROP_NONE means accepted. */
enum mwp_drop {
	MWP_DROP_NONE = 0,
#define _(sym, str) MWP_DROP_##sym,
	MWP_FOREACH_DROP(_)
#undef _
	MWP_DROP__MAX
};

/**
 * Short lower-case name of a drop reason (e.g. "bad_icrc"), stable for
 * scripts and JSON.
 *
 * @param d
 *   A drop reason; out-of-range values give "invalid".
 * @return
 *   A static string.
 */
const char *mwp_drop_name(enum mwp_drop d);

/**
 * One-line human description of a drop reason.
 *
 * @param d
 *   A drop reason; out-of-range values give "invalid".
 * @return
 *   A static string.
 */
const char *mwp_drop_text(enum mwp_drop d);

#endif /* MWP_DROP_H */
