/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_PORT_H
#define MWP_PORT_H

/**
 * @file
 * A RoCE port as the library sees it: its addresses, its path MTU and the
 * QPs reachable through it.  Setting up the DPDK ethdev behind it is the
 * poll-mode side's job (pmd/); the library never touches ports.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "mwp_dcqcn.h"
#include "mwp_neigh.h"

struct ibv_context;
struct ibv_qp;
struct mwp_key_table;

/** What a port's frames carry in their ECN bits (mwp_port_cc.ecn). */
enum mwp_ecn_mode {
	MWP_ECN_MODE_ECT0 = 0,		/**< ECT(0), as a ConnectX sends */
	MWP_ECN_MODE_ECT1,		/**< ECT(1) */
	MWP_ECN_MODE_OFF,		/**< not ECN-capable */
};

/**
 * Congestion control of a port (docs/congestion.md).  All zeros: RoCE
 * frames sent ECT(0), no CNPs sent, no rate control; mwp_port_cc_defaults
 * gives what the configuration defaults to.
 */
struct mwp_port_cc {
	uint8_t ecn;			/**< enum mwp_ecn_mode of every RoCE
					 *   frame sent (requests and answers;
					 *   CNPs are not ECN-capable) */
	bool notify;			/**< notification point: answer a frame
					 *   marked CE with a CNP to its
					 *   sender's QP */
	uint8_t cnp_dscp;		/**< the CNPs' DSCP */
	uint32_t min_time_between_cnps;	/**< us between two CNPs to one QP;
					 *   0: one for every CE frame */
	bool react;			/**< reaction point: DCQCN paces a QP
					 *   that receives CNPs */
	uint32_t line_rate;		/**< Mb/s DCQCN starts from where
					 *   dcqcn.rpg_max_rate is 0; 0: 100000 */
	struct mwp_dcqcn_params dcqcn;	/**< its parameters */
};

/**
 * What the configuration of a port defaults to: ECT(0), CNPs at DSCP 48
 * at most every 4 us to a QP, DCQCN on with ConnectX's defaults.
 */
void mwp_port_cc_defaults(struct mwp_port_cc *cc);

/** Addresses and limits of a port. */
struct mwp_port_conf {
	struct rte_ether_addr mac;	/**< our MAC; all zeros: accept any */
	bool has_ipv4;			/**< ipv4 is set */
	bool has_ipv6;			/**< ipv6 is set */
	rte_be32_t ipv4;		/**< our IPv4 address */
	uint8_t ipv6[16];		/**< our IPv6 address */
	uint16_t mtu;			/**< RoCE path MTU: 256 ... 4096 */
	uint32_t neigh_size;		/**< neighbour table entries; 0: 256 */
	struct mwp_neigh_params neigh;	/**< its timings; zeros: defaults */
	uint32_t ctrl_rate;		/**< ARP/ND/ICMP replies a second, per
					 *   polling thread; 0: 10000 */
	uint16_t nb_queues;		/**< queues the port will have: QP n is
					 *   owned by the engine of queue
					 *   n % nb_queues; 0 or 1: queue 0's */
	uint32_t guess_threshold;	/**< requests a source may have refused
					 *   (key, bounds, access) before it is
					 *   blocked; 0: never (mwp_guard.h) */
	uint32_t guess_block_ms;	/**< how long a block lasts; 0: 1000 */
	struct mwp_port_cc cc;		/**< congestion control */
	/** The host's kernel keeps the port's addresses (the exception
	 *  path, docs/host.md): every frame that is not RoCE goes to it
	 *  (mwp_queue_host_take), and the kernel answers ARP, ND and echo
	 *  -- the control path only learns from what passes. */
	bool host_path;
	/** The kernel owns the port's interface and resolves its neighbours
	 *  (net_af_xdp, docs/host.md "AF_XDP"): ARP and ND never reach
	 *  mwpath, so a probe the table wants is queued (mwp_port_neigh_asked)
	 *  for the thread that asks the kernel, not sent; what the kernel
	 *  learns comes back through mwp_port_neigh_learn.  The control path
	 *  answers nothing, as with host_path. */
	bool kernel_neigh;
};

struct mwp_qp;
struct mwp_owner;

/** Queues a port may have (rx/tx queue pairs polled by engines). */
#define MWP_PORT_MAX_QUEUES 16

/** Number of QP slots in a port's direct-index table (QPN & mask). */
#define MWP_PORT_QP_SLOTS 4096

/** One slot of the QP table: the QPN is kept beside the pointer so that a
 * lookup needs no access to the QP itself. */
struct mwp_port_qp_slot {
	uint32_t qpn;			/**< QPN of qp */
	struct mwp_qp *qp;		/**< the QP, or NULL */
};

/** A port. */
struct mwp_port {
	struct mwp_port_conf conf;	/**< addresses */
	/** conf's MAC as the first eight bytes of a frame read it, and the
	 *  mask of its six (0: any MAC); set by mwp_port_create */
	uint64_t dest_mac, dest_mac_mask;
	bool dest_any_ip;		/**< conf has no IP address: accept any */
	uint8_t ecn;			/**< ROCE_ECN_* bits of the RoCE frames
					 *   it sends (conf.cc.ecn) */
	uint64_t cnp_gap;		/**< TSC cycles between CNPs to a QP */
	/** DCQCN's parameters for this port's clock (if conf.cc.react) */
	struct mwp_dcqcn_cfg dcqcn;
	uint16_t index;			/**< the port's number in the config */
	struct rte_mempool *mp;		/**< where response mbufs come from */
	struct ibv_context *ctx;	/**< device of the attached QPs */
	struct mwp_key_table *keys;	/**< its R_Key table */
	/** Who is where on the link (ARP, ND); the control path learns into
	 *  it, requesters resolve their peers' GIDs with it. */
	struct mwp_neigh_table *neigh;
	/** Probes asked for by threads that do not poll the port
	 *  (mwp_port_neigh_ask); its queues send them (mwp_port_neigh_asked). */
	struct rte_ring *asks;
	/** Its queues as their QPs see them, by queue id (set by
	 *  mwp_queue_create); their engines own the port's QPs, by QPN %
	 *  conf.nb_queues. */
	struct mwp_owner *owner[MWP_PORT_MAX_QUEUES];
	/** QPs by QPN & (MWP_PORT_QP_SLOTS - 1); filled by the verbs layer. */
	struct mwp_port_qp_slot qp[MWP_PORT_QP_SLOTS];
};

/**
 * Check that a RoCE path MTU is one IBA allows.
 *
 * @return
 *   true for 256, 512, 1024, 2048 and 4096.
 */
bool mwp_mtu_valid(unsigned int mtu);

/**
 * Bytes an IP packet carrying RoCEv2 adds to its path MTU's payload at
 * most: IPv6 (40), UDP (8), BTH (12), the longest extended headers
 * (AtomicETH, 28), pad (3) and ICRC (4), rounded up.  A port whose RoCE
 * path MTU plus this exceeds Ethernet's 1500 needs a larger MTU on its
 * link (jumbo frames), as a RoCE NIC's active MTU 4096 needs 9000.
 */
#define MWP_IP_OVERHEAD		96

/** And with the Ethernet header and a VLAN tag: a frame's bytes. */
#define MWP_FRAME_OVERHEAD	(MWP_IP_OVERHEAD + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)

/**
 * The data room (headroom included) of the mbufs of a port whose RoCE
 * path MTU is @p mtu: its largest frame in one segment, for the builders
 * write a frame into one mbuf; never less than DPDK's default.
 */
static inline uint16_t
mwp_port_mbuf_room(uint16_t mtu)
{
	const unsigned int room = RTE_PKTMBUF_HEADROOM + mtu + MWP_FRAME_OVERHEAD;

	return (uint16_t)(room > RTE_MBUF_DEFAULT_BUF_SIZE ? room : RTE_MBUF_DEFAULT_BUF_SIZE);
}

/**
 * Create a port.
 *
 * @param conf
 *   Its addresses; copied.
 * @param index
 *   Its number.
 * @param socket
 *   NUMA socket for its memory, or SOCKET_ID_ANY.
 * @return
 *   The port (with its neighbour table), or NULL with rte_errno EINVAL
 *   (bad MTU) or ENOMEM.
 */
struct mwp_port *mwp_port_create(const struct mwp_port_conf *conf,
				 uint16_t index, int socket);

/**
 * Free a port.  No lcore may be polling it.
 *
 * @param port
 *   The port; NULL is allowed.
 */
void mwp_port_free(struct mwp_port *port);

/** The QP with this QPN on a port, or NULL (inline: once per packet). */
static inline struct mwp_qp *
mwp_port_qp(const struct mwp_port *port, uint32_t qpn)
{
	const struct mwp_port_qp_slot *s = &port->qp[qpn & (MWP_PORT_QP_SLOTS - 1)];

	return s->qpn == qpn ? s->qp : NULL;
}

/**
 * Is ip (IPv6, or IPv4 as ::ffff:a.b.c.d) one of the port's own
 * addresses?  A QP whose peer is at one talks to another QP of this port:
 * its frames go to the port's own MAC, with no ARP or ND (a host does not
 * ask for itself), and the poll loop turns them back in (mwp_pmd.h).
 */
static inline bool
mwp_port_is_own_ip(const struct mwp_port *port, const uint8_t ip[16])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(ip, v4mapped, sizeof(v4mapped)) == 0)
		return port->conf.has_ipv4 && memcmp(ip + 12, &port->conf.ipv4, 4) == 0;
	return port->conf.has_ipv6 && memcmp(ip, port->conf.ipv6, 16) == 0;
}

/** A probe asked for by mwp_port_neigh_ask, for a queue to send. */
struct mwp_port_ask {
	uint8_t ip[16];			/**< whom to ask for */
	struct rte_ether_addr mac;	/**< unicast to it (a STALE entry) ... */
	uint8_t unicast;		/**< ... when set; else broadcast */
	uint8_t pad;
};

/**
 * Resolve ip through the port's neighbour table from a thread that does
 * not poll the port (the RDMA CM's address resolution): the table's
 * answer, and when it wants a probe sent (an ARP request, a neighbour
 * solicitation), the probe is queued for the port's queues to send on
 * their next turn (mwp_port_neigh_asked).  The port's own addresses are
 * MWP_NEIGH_OK at once.  Thread-safe; the slow path.
 *
 * @param now
 *   rte_rdtsc().
 * @param mac
 *   Set with MWP_NEIGH_OK (may be NULL).
 */
enum mwp_neigh_res mwp_port_neigh_ask(struct mwp_port *port, const uint8_t ip[16],
				      uint64_t now, struct rte_ether_addr *mac);

/**
 * Take up to n probes asked for (mwp_port_neigh_ask, and with
 * conf.kernel_neigh every probe); a queue's poll loop sends them, or with
 * conf.kernel_neigh the thread that asks the kernel.  Any one of them
 * may; each probe goes once.
 *
 * @return
 *   How many were taken into asks.
 */
static inline unsigned int
mwp_port_neigh_asked(struct mwp_port *port, struct mwp_port_ask *asks, unsigned int n)
{
	if (likely(rte_ring_empty(port->asks)))
		return 0;
	return rte_ring_dequeue_burst_elem(port->asks, asks, sizeof(*asks), n, NULL);
}

/**
 * What the host's kernel found out about ip (conf.kernel_neigh): its MAC
 * is mac, confirmed now -- the neighbour table's entry becomes REACHABLE,
 * as for an answer to its own probe.  Thread-safe; the slow path.
 */
void mwp_port_neigh_learn(struct mwp_port *port, const uint8_t ip[16],
			  const struct rte_ether_addr *mac, uint64_t now);

/**
 * Give a port the mempool its responses are allocated from.
 */
void mwp_port_set_mempool(struct mwp_port *port, struct rte_mempool *mp);

/**
 * Attach a QP to a port: requests for its QPN arriving on the port are
 * answered by it, and its own requests leave through the port.  The
 * engine of the port's queue QPN % conf.nb_queues (queue 0 with none)
 * runs it from then on, once that queue exists.  All QPs of a port
 * belong to one device.  Control path; no lcore may be polling the port.
 *
 * @return
 *   0; EINVAL (QP of another device, or attached to another port, or
 *   the queue 0 engine serves another device); EEXIST (its slot is
 *   taken: QPN modulo MWP_PORT_QP_SLOTS).
 */
int mwp_port_attach_qp(struct mwp_port *port, struct ibv_qp *qp);

#endif /* MWP_PORT_H */
