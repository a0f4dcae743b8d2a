/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_PMD_H
#define MWP_PMD_H

/**
 * @file
 * The poll-mode side of mwpath: ethdev set-up and the per-lcore loop
 * (rx burst -> mwp_queue_rx -> tx burst), with per-lcore counters and a
 * clean stop on a flag.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <net/if.h>
#include <pthread.h>

#include "mwpath.h"

/** Frames asked of rte_eth_rx_burst at a time (l3fwd's MAX_PKT_BURST). */
#define MWP_RX_BURST 32

/** Room for answers per poll (READ responses may outnumber requests). */
#define MWP_TX_ROOM 64

/** Most rx queues one lcore polls. */
#define MWP_MAX_QUEUES_PER_LCORE 8

/** The exception path of a port, as configured ([port N] exception). */
struct mwp_host_conf {
	bool on;			/**< exception = tap */
	char ifname[16];		/**< the tap; "": mwp<port> */
	uint8_t prefix4;		/**< the IPv4 address's prefix length */
	uint8_t prefix6;		/**< the IPv6 address's */
};

/** Queues a tap of the exception path may have. */
#define MWP_MAX_TAP_QUEUES 16

/** Frames from the kernel a queue's ring holds for its poller. */
#define MWP_HOST_RING 1024

/**
 * A port's exception path, running: a tap, one descriptor a queue.  What
 * the kernel sends is read by a thread of its own, which sleeps in
 * epoll_wait while the kernel is quiet, into one ring a queue; the poller
 * takes it from there (a ring's count: no system call on the RoCE path).
 */
struct mwp_host {
	uint16_t nb_queues;		/**< the tap's queues; 0: no tap */
	int fd[MWP_MAX_TAP_QUEUES];	/**< queue i's descriptor (non-blocking) */
	struct rte_ring *down[MWP_MAX_TAP_QUEUES]; /**< the kernel's frames
					 *   for queue i's poller */
	struct rte_mempool *mp;		/**< what the kernel's frames go into */
	char ifname[16];		/**< its kernel interface */
	bool made;			/**< made by us (not attached to) */
	int ep;				/**< the reader's epoll (fds, and wake) */
	int wake;			/**< an eventfd that ends its wait */
	pthread_t reader;		/**< the reader thread */
	bool reading;			/**< it runs */
	bool stop;			/**< it is to end */
	uint64_t ring_full;		/**< kernel frames dropped: a ring full */
};

/** Is the exception path h running? */
static inline bool
mwp_host_on(const struct mwp_host *h)
{
	return h->nb_queues != 0;
}

/**
 * Frames the kernel sent on queue q of the tap, at most n (taken from the
 * reader's ring: no system call).  From queue q's poller only.
 *
 * @return
 *   Frames placed in m.
 */
static inline uint16_t
mwp_host_rx(const struct mwp_host *h, uint16_t q, struct rte_mbuf **m, uint16_t n)
{
	return (uint16_t)rte_ring_sc_dequeue_burst(h->down[q], (void **)m, n, NULL);
}

/**
 * Stop the reader thread (before a fork: the child starts its own with
 * mwp_host_resume; a ring or an mbuf must not be copied mid-change).
 */
void mwp_host_pause(struct mwp_host *h);

/** Start the reader thread again (after mwp_host_pause). */
int mwp_host_resume(struct mwp_host *h);

/**
 * Give the kernel m[0..n) on queue q of the tap, and free them.
 *
 * @return
 *   Frames it took (the others are freed too).
 */
uint16_t mwp_host_tx(const struct mwp_host *h, uint16_t q, struct rte_mbuf **m, uint16_t n);

/**
 * Give the host's kernel a port's addresses (the exception path,
 * docs/host.md): make the tap hc->ifname (or attach to it, if a tap of
 * that name exists) with the port's MAC, one queue per queue of the port
 * (a multi-queue tap for several), bring it up, give it the port's
 * addresses and check that the kernel agrees (mwp_host_check).  The tap
 * is read and written with the kernel's own calls, non-blocking: no
 * signal reaches the program (DPDK's net_tap raises SIGIO for every
 * frame, which interrupts a program's select and read).  The port's configuration must have host_path set
 * for its queues to pass what is not RoCE; mwp_lcore_queue.host then
 * moves the frames.
 *
 * @param index
 *   The port's number, for the default name (mwpN).
 * @param mp
 *   The pool frames from the kernel are received into.
 * @param err
 *   Why not, in one line.
 * @return
 *   0, or a negative errno.
 */
int mwp_host_start(struct mwp_host *h, const struct mwp_host_conf *hc,
		   const struct mwp_port_conf *pc, unsigned int index, uint16_t nb_queues,
		   struct rte_mempool *mp, char *err, size_t errlen);

/**
 * Do the kernel and the port agree on the port's addresses: ifname holds
 * them (set: or none yet), and no other interface of this network
 * namespace holds one of them?
 *
 * @return
 *   0, or a negative errno with err saying what disagrees.
 */
int mwp_host_check(const char *ifname, const struct mwp_port_conf *pc, bool set, char *err,
		   size_t errlen);

/** Close the tap (one we made disappears from the kernel with it). */
void mwp_host_stop(struct mwp_host *h);

/** What mwpath's XDP program counted (mwp_xdp_counts), by verdict. */
enum mwp_xdp_count {
	MWP_XDP_TO_MWPATH = 0,	/**< RoCE for the port's addresses: to mwpath */
	MWP_XDP_NOT_OURS,	/**< RoCE for another address: to the kernel */
	MWP_XDP_TO_KERNEL,	/**< everything else: to the kernel */
	MWP_XDP_NO_SOCKET,	/**< ours, on a queue without a socket: to the kernel */
	MWP_XDP_NB_COUNTS,
};

/** A port on net_af_xdp: the kernel keeps the interface (mwp_xdp_start). */
struct mwp_xdp {
	struct mwp_port *port;		/**< the library's port */
	char ifname[IF_NAMESIZE];	/**< the kernel interface */
	int ifindex;			/**< ... its index */
	int addrs_fd;			/**< the program's map of our addresses */
	int stats_fd;			/**< its counters (-1: none) */
	int nl_ev;			/**< netlink: the kernel's neighbour events */
	int nl_req;			/**< netlink: our requests, their answers */
	int wake;			/**< an eventfd that ends the thread's wait */
	uint32_t seq;			/**< netlink sequence numbers */
	pthread_t thread;		/**< resolves through the kernel */
	bool running;			/**< the thread runs */
	bool stop;			/**< it is to end */
	uint64_t asked;			/**< probes handed to the kernel */
	uint64_t reports;		/**< usable neighbour entries the kernel
					 *   reported (events, dump, answers) */
};

/**
 * The XDP program net_af_xdp ports get: $MWPATH_XDP_PROG, else the build
 * tree's mwp_xdp.bpf.o while it exists, else the installed one.
 */
const char *mwp_xdp_prog(void);

/**
 * EAL arguments with xdp_prog=mwp_xdp_prog() added to every net_af_xdp
 * vdev (--vdev=X or --vdev X) that names no program of its own.  *out is
 * a new array of argc (argv's strings, and new ones for the vdevs
 * changed); free it with mwp_xdp_eal_args_free once rte_eal_init has
 * returned (the EAL copies what it keeps).  Each vdev's interface is
 * checked first, before the EAL touches it (the PMD takes off any program
 * when its port closes): one with another XDP program is refused; one
 * with the program of an mwpath that has ended has it taken off.
 *
 * @return
 *   How many vdevs were changed, or a negative errno with err saying why.
 */
int mwp_xdp_eal_args(int argc, char **argv, char ***out, char *err, size_t errlen);

/** Free what mwp_xdp_eal_args made (NULL is allowed). */
void mwp_xdp_eal_args_free(int argc, char **out);

/**
 * An mbuf pool for net_af_xdp ports (rte_pktmbuf_pool_create's
 * arguments, no private area): its objects back to back in one chunk, as
 * the PMD's umem, made of the pool, assumes.
 *
 * @return
 *   The pool, or NULL with rte_errno set.
 */
struct rte_mempool *mwp_xdp_pool_create(const char *name, unsigned int n, unsigned int cache,
					uint16_t room, int socket);

/** Is the ethdev port a net_af_xdp one? */
bool mwp_xdp_port(uint16_t port_id);

/**
 * Prepare a port's configuration before mwp_port_create: on net_af_xdp,
 * the MAC is the interface's (taken when pc has none; an error when it
 * differs), the port needs an address, and the kernel resolves its
 * neighbours (kernel_neigh).  Other ports are left as they are.
 *
 * @return
 *   0, or a negative errno with err saying why in one line.
 */
int mwp_xdp_port_conf(uint16_t port_id, struct mwp_port_conf *pc, char *err, size_t errlen);

/**
 * After a net_af_xdp port has started (the PMD has loaded the program and
 * put its sockets in xsks_map): check that the interface holds the port's
 * addresses and no other interface does (mwp_host_check), that the
 * program is mwpath's, give it the addresses, and start the thread that
 * resolves neighbours through the kernel.
 *
 * @return
 *   0, or a negative errno with err saying why in one line.
 */
int mwp_xdp_start(struct mwp_xdp *x, uint16_t port_id, struct mwp_port *port, char *err,
		  size_t errlen);

/** Stop the thread and let go of the maps (the PMD unloads the program);
 *  nothing for an x never started (all zeros) or stopped already. */
void mwp_xdp_stop(struct mwp_xdp *x);

/** Is x started? */
static inline bool
mwp_xdp_on(const struct mwp_xdp *x)
{
	return x->running;
}

/** The program's counters, summed over CPUs (zeros where unknown). */
void mwp_xdp_counts(const struct mwp_xdp *x, uint64_t c[MWP_XDP_NB_COUNTS]);

struct mwp_rx_gate;

struct mwp_engine;

/**
 * Called by the lcore when its queue has received exactly gate->next
 * frames, before it receives more: runs the local work due at that point
 * (so a replay interleaves it with traffic deterministically) and sets
 * gate->next to the next such point, or UINT64_MAX.  eng is the lcore's
 * engine (the work it posts runs there).
 */
typedef void (*mwp_rx_gate_fn)(struct mwp_rx_gate *gate, struct mwp_engine *eng,
			       unsigned int lcore_id);

/** A point in a queue's stream of received frames where work is due. */
struct mwp_rx_gate {
	uint64_t rx;			/**< frames received so far (the lcore's) */
	uint64_t next;			/**< stop here and call fn; UINT64_MAX: never */
	mwp_rx_gate_fn fn;		/**< the work */
	void *arg;			/**< fn's */
};

/** One rx/tx queue pair polled by an lcore. */
struct mwp_lcore_queue {
	uint16_t port_id;		/**< ethdev port */
	uint16_t queue_id;		/**< rx and tx queue */
	struct mwp_port *port;		/**< the library's view of the port */
	struct mwp_queue *mq;		/**< the library's view of the queue */
	struct mwp_rx_gate *gate;	/**< work due at frame counts, or NULL */
	/** Frames sent to the port itself -- its MAC and one of its IP
	 *  addresses: one QP of the port to another -- received again on
	 *  the next poll instead of leaving, as a NIC loops them; NULL for
	 *  a port without a MAC. */
	struct rte_ring *loop;
	/** Set when other processes drive the same address on one kernel
	 *  interface, each with its own packet socket and its own share of
	 *  QP numbers (a shared device, docs/verbs-device.md): of the
	 *  frames to the port itself, only those to QPs numbered
	 *  own_qpn_lo..own_qpn_hi loop; those to other QPs leave (their
	 *  process's socket sees them), and those to QP1 do both (every
	 *  process's CM sees every MAD).  0 and 0: every frame loops. */
	uint32_t own_qpn_lo, own_qpn_hi;
	/** The port's exception path (frames that are not RoCE to and from
	 *  the host's kernel), or NULL. */
	const struct mwp_host *host;
	struct mwp_stats stats;		/**< written by the owning lcore only */
};

/** What one lcore polls, and how it reports back. */
struct mwp_lcore {
	unsigned int lcore_id;		/**< the EAL lcore */
	struct mwp_engine *eng;		/**< its QPs, timers and doorbells */
	uint16_t nb_queues;		/**< entries used in q */
	struct mwp_lcore_queue q[MWP_MAX_QUEUES_PER_LCORE];
	const bool *stop;		/**< the loop ends when this becomes true */
	uint64_t last_busy_tsc;		/**< TSC of the last iteration with work */
	uint64_t last_idle_tsc;		/**< TSC of the last iteration without */
	uint64_t iterations;		/**< poll-loop iterations */
	/** Called about every tick_us microseconds from the loop, if set:
	 *  lets the main lcore run the program's housekeeping when it polls
	 *  queues itself. */
	void (*tick)(void *arg);
	void *tick_arg;			/**< argument of tick */
	uint32_t tick_us;		/**< period of tick */
} __rte_cache_aligned;

/**
 * Configure and start an ethdev port with one rx and one tx queue per
 * polling lcore.
 *
 * @param port_id
 *   The ethdev port.
 * @param nb_queues
 *   Queue pairs to set up.
 * @param mp
 *   Mempool for received frames.
 * @param mac
 *   MAC address to set on the port, or NULL to keep the port's own.
 * @param ip_mtu
 *   The link MTU (IP bytes) the port's RoCE path MTU needs; up to
 *   Ethernet's 1500 the device's own is kept, above it the device is
 *   asked for it (an error if it cannot carry it).
 * @return
 *   0, or a negative errno; the reason is logged.
 */
int mwp_ethdev_start(uint16_t port_id, uint16_t nb_queues,
		     struct rte_mempool *mp, const struct rte_ether_addr *mac,
		     uint32_t ip_mtu);

/**
 * Stop and close an ethdev port (a pcap vdev flushes its tx file here).
 *
 * @param port_id
 *   The port.
 */
void mwp_ethdev_close(uint16_t port_id);

/**
 * Fault in an mbuf pool's memory (its data rooms are otherwise first
 * touched by the datapath, a page fault a page).
 *
 * @return
 *   Bytes populated.
 */
size_t mwp_warm_mempool(struct rte_mempool *mp);

/**
 * Fault in this process's mappings of every net_memif region (rings and
 * packet buffers, mapped when a memif link comes up; the datapath would
 * otherwise take a page fault a page on each side, for as long as the
 * rings take to go round once).  Call once the link is up, again after
 * it came up again.
 *
 * @return
 *   Bytes populated (0: no memif region mapped).
 */
size_t mwp_warm_memif(void);

/** What mwp_flow_setup could do on a port. */
struct mwp_flow_report {
	bool tried;			/**< the port has several queues */
	unsigned int qp_rules;		/**< rules steering one QP (IPv4, IPv6) */
	unsigned int roce_rules;	/**< rules spreading UDP 4791 over the queues */
	char reason[160];		/**< the PMD's answer to the first refusal */
	char reason2[96];		/**< ... and to a second kind of rule */
};

/**
 * Steer RoCEv2 with rte_flow on a port with several queues: each QP's
 * frames (UDP 4791 whose BTH DestQP is its QPN) to the queue of the lcore
 * that owns it, then the rest of UDP 4791 by RSS over all queues.  Rules
 * are validated first; what the PMD refuses is left to RSS and to the
 * hand-off rings (a frame on another queue goes to its QP's owner), so
 * the port works the same, with more hand-offs.
 *
 * @param qpns
 *   The QPNs attached to the port.
 * @param owner
 *   For each, the queue whose lcore owns it.
 * @param rep
 *   What was made, and why not.
 * @return
 *   0.
 */
int mwp_flow_setup(uint16_t port_id, uint16_t nb_queues, const uint32_t *qpns,
		   const uint16_t *owner, unsigned int nb_qps, struct mwp_flow_report *rep);

/** Frames a queue's loop holds (mwp_lcore_queue.loop). */
#define MWP_LOOP_RING 1024

/**
 * Create an lcore's engine and the library's queue for each entry of q[]
 * (port, port_id and queue_id filled in): queue 0 of a port makes the
 * lcore's engine the owner of the port's QPs.  Before the QPs are attached
 * or after: either way.
 *
 * @return
 *   0, or a negative errno (logged).
 */
int mwp_lcore_init(struct mwp_lcore *lc, int socket);

/**
 * Free what mwp_lcore_init made; the lcore has returned and the QPs of
 * its ports are destroyed.
 */
void mwp_lcore_fini(struct mwp_lcore *lc);

/**
 * The calling thread becomes the lcore's poller: it registers as a reader
 * of the key tables of its queues' devices (as reader lc->lcore_id) and
 * runs the engine.  mwp_lcore_main is enter, mwp_lcore_poll until stop,
 * and leave.
 */
void mwp_lcore_enter(struct mwp_lcore *lc);

/**
 * One iteration of the poll loop (see mwp_lcore_main), by a thread that is
 * a registered, online reader (as lc->lcore_id) of its queues' devices and
 * runs the engine: between mwp_lcore_enter and mwp_lcore_leave, or with
 * the same made by hand (the libibverbs device polls from the program's
 * calls that way).
 *
 * @return
 *   The work it did (frames received and sent, engine work): 0 when idle.
 */
unsigned int mwp_lcore_poll(struct mwp_lcore *lc);

/** The calling thread stops polling the lcore (undoes mwp_lcore_enter). */
void mwp_lcore_leave(struct mwp_lcore *lc);

/**
 * The poll loop; signature of lcore_function_t.
 *
 * Runs until *lc->stop is true, then returns 0.  On every iteration: the
 * engine's own work (mwp_engine_run_work: control requests, send queues),
 * then for each queue the gate's work if the queue has reached it, what
 * it sends unprompted (mwp_queue_tx: requests, retransmissions, READ
 * responses owed, frames handed over), an rx burst (no further than the
 * gate), mwp_queue_rx, and a tx burst (frames the queue cannot take are
 * freed and counted as MWP_DROP_TX_FULL); last the engine's timers
 * (mwp_engine_run_timers), after the ACKs of this pass were read.
 *
 * @param arg
 *   A struct mwp_lcore owned by this lcore for the duration of the call.
 * @return
 *   0.
 */
int mwp_lcore_main(void *arg);

/**
 * How long the lcore has polled without receiving a frame or producing an
 * answer, in microseconds, as the lcore itself observed it: 0 before it has
 * polled at all, and not growing while it is not scheduled.  Safe to call
 * from another lcore.
 */
uint64_t mwp_lcore_idle_us(const struct mwp_lcore *lc);

#endif /* MWP_PMD_H */
