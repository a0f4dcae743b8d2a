/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_ENGINE_H
#define MWP_ENGINE_H

/**
 * @file
 * Engines and queues: who runs a QP.
 *
 * An engine is the datapath of one polling thread (an lcore).  It owns
 * QPs: their send queues (binds, invalidations, the requester's packets,
 * retransmissions), their timers (a timer wheel, one timer per QP) and
 * their responder state are touched by that thread alone.  A queue is one
 * rx/tx queue pair of a port that an engine polls; a QP attached to a port
 * is owned by the engine of one of the port's queues (queue QPN %
 * nb_queues of the port's configuration; queue 0 if it has none), and a
 * frame for it that arrives on another queue is handed to that queue
 * through a multi-producer ring instead of being processed where it
 * arrived.
 *
 * Other threads reach an engine's QPs through rings: ibv_post_send rings
 * the QP's doorbell; destroying a QP or moving it to RESET waits until the
 * engine has let go of it.  While an engine is stopped (before its lcore
 * starts, after it returns), mwp_poll() runs its QPs' send queues
 * instead, under the device lock, and nothing is sent.
 *
 * The loop of a polling thread, once per pass:
 * @code
 *	now = rte_rdtsc();
 *	mwp_engine_run_work(eng, now);
 *	for each queue q of the thread:
 *		n = mwp_queue_tx(q, tx, room);             // requests, READ responses
 *		nb_rx = rte_eth_rx_burst(port, queue, rx, 32);
 *		n += mwp_queue_rx(q, rx, nb_rx, tx + n, room - n);
 *		rte_eth_tx_burst(port, queue, tx, n);
 *	mwp_engine_run_timers(eng, now);
 *	mwp_reader_quiescent(ctx, id);
 * @endcode
 *
 * The timers run after the queues' rx: a thread that the OS did not run
 * for longer than a QP's ACK timeout reads the ACKs that came meanwhile
 * before that QP's timer can fire and send its window again.
 * mwp_engine_run() is the two at once, for a loop that has no rx of its
 * own.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "mwp_port.h"
#include "mwp_stats.h"

struct mwp_engine;
struct mwp_queue;

/** An engine's counters. */
struct mwp_engine_stats {
	uint64_t runs;		/**< passes (mwp_engine_run_work calls) */
	uint64_t doorbells;	/**< send queues rung by posting threads */
	uint64_t watched;	/**< send queues it began to watch (posts to
				 *   them ring no doorbell) */
	uint64_t unwatched;	/**< ... and let go, idle (a membarrier(2)
				 *   for each batch) */
	uint64_t sq_runs;	/**< send queue runs */
	uint64_t sq_deferred;	/**< ... whose work requests waited for a
				 *   later pass: a control thread held the
				 *   device lock (the engine never waits) */
	uint64_t timers;	/**< timers fired */
	uint64_t cmds;		/**< control requests served */
	uint32_t qps;		/**< QPs it owns */
};

/**
 * Create an engine, stopped.
 *
 * @param id
 *   A number for its ring names and messages (its lcore id).
 * @param socket
 *   NUMA socket for its memory, or SOCKET_ID_ANY.
 * @return
 *   The engine, or NULL with rte_errno ENOMEM.
 */
struct mwp_engine *mwp_engine_create(unsigned int id, int socket);

/**
 * Free a stopped engine whose queues are freed.
 *
 * @return
 *   0, or EBUSY while it owns QPs or has queues.
 */
int mwp_engine_free(struct mwp_engine *e);

/**
 * The calling thread runs the engine from now on: mwp_poll() leaves its
 * QPs alone, and every QP it owns is looked at once on the next run.
 */
void mwp_engine_start(struct mwp_engine *e);

/**
 * The calling thread stops running the engine (its QPs' send queues go
 * back to mwp_poll()).  Control requests waiting for it are served first.
 */
void mwp_engine_stop(struct mwp_engine *e);

/**
 * For an engine that threads run in turns (a device's program and its
 * threads, one at a time: the caller excludes the others): take a turn.
 * The first starts the engine (mwp_engine_start); a later one takes it
 * back from the park its last turn left it in, without the device lock.
 *
 * @return
 *   true: the calling thread runs the engine until mwp_engine_park();
 *   false: a control thread is doing an op on the parked engine (try
 *   again later).
 */
bool mwp_engine_resume(struct mwp_engine *e);

/**
 * End a turn: control requests waiting are served, and the engine stays
 * started with no thread in it.  A control op on a parked engine is done
 * by the control thread itself, which takes the turn meanwhile; its QPs
 * stay the engine's (mwp_poll() leaves them).  mwp_engine_resume() takes
 * it again; mwp_engine_stop() after a resume stops it.
 */
void mwp_engine_park(struct mwp_engine *e);

/**
 * One pass of the engine's own work: control requests, and the send
 * queues rung since the last pass or watched and posted to (a QP whose
 * doorbell it took is watched until it has had no post for 1 ms; its
 * posts ring none meanwhile).  Binds and invalidations execute here,
 * under the device lock if it is free -- the engine never waits for it: while a
 * control thread holds it, they wait for a later pass, counted as
 * sq_deferred; data work requests go to the requester).  Call once per
 * loop pass, before the queues' mwp_queue_tx(); mwp_engine_run_timers()
 * after their rx.
 *
 * @param now
 *   The current TSC (rte_rdtsc()); the engine's notion of time until the
 *   next call.
 * @return
 *   Work done (0: nothing).
 */
unsigned int mwp_engine_run_work(struct mwp_engine *e, uint64_t now);

/**
 * The engine's timers due by now (ACK and RNR timeouts, the requester's
 * waits, congestion control's): call once per loop pass, after the
 * queues' rx, so that the ACKs that came while the thread was not run
 * are read before an ACK timeout fires.  What they send (a window sent
 * again) leaves with the next pass's mwp_queue_tx().
 *
 * @param now
 *   The TSC given to this pass's mwp_engine_run_work().
 * @return
 *   Timers fired (0: none).
 */
unsigned int mwp_engine_run_timers(struct mwp_engine *e, uint64_t now);

/**
 * mwp_engine_run_work() and then mwp_engine_run_timers(): one pass of the
 * engine for a loop without rx of its own between the two (a test's, a
 * benchmark's).
 *
 * @param now
 *   The current TSC (rte_rdtsc()).
 * @return
 *   Work done (0: nothing).
 */
unsigned int mwp_engine_run(struct mwp_engine *e, uint64_t now);

/** The engine's counters (a snapshot; safe from any thread). */
void mwp_engine_stats_get(const struct mwp_engine *e, struct mwp_engine_stats *st);

/** The id the engine was created with (its lcore). */
unsigned int mwp_engine_id(const struct mwp_engine *e);

struct ibv_qp;

/**
 * Who runs a QP: the id of the engine that owns it (its lcore) and the
 * queue whose frames it answers on.
 * @return
 *   0, or ENOENT: not attached to a port with a running queue.
 */
int mwp_qp_owner(const struct ibv_qp *qp, unsigned int *engine_id, uint16_t *queue_id);

/**
 * Create a queue: the engine polls rx/tx queue pair queue_id of port, and
 * owns the port's QPs whose QPN % the port's nb_queues is queue_id (all of
 * them for queue 0 if nb_queues is 0 or 1): those attached already, and
 * those attached later.
 *
 * @param st
 *   Where its frames are counted (the polling thread's counters for this
 *   port); written by that thread alone.
 * @return
 *   The queue, or NULL with rte_errno EINVAL (the port has that queue, or
 *   too many) or ENOMEM.
 */
struct mwp_queue *mwp_queue_create(struct mwp_engine *e, struct mwp_port *port,
				   uint16_t queue_id, struct mwp_stats *st);

/**
 * Free a queue of a stopped engine.  Frames handed to it and not yet
 * processed are freed.
 */
void mwp_queue_free(struct mwp_queue *q);

/** Largest burst mwp_queue_rx takes. */
#define MWP_BURST_MAX 64

/**
 * Everything a queue receives: sort a burst by kind and hand each frame
 * to its home -- RoCE requests to the responder (answers into tx),
 * responses and ACKs to the requester's completer, ARP/ND/ICMP to the
 * control path (replies into tx), frames for QPs that do not exist to
 * the guessing defence, frames for a QP another queue's engine owns to
 * that queue (mwp_queue_tx processes them there); anything malformed,
 * not for this port or with a bad ICRC is dropped.
 *
 * On a port whose host keeps its addresses (mwp_port_conf.host_path),
 * what is not RoCE is set aside for the host's kernel instead
 * (mwp_queue_host_take).
 *
 * Every input mbuf is consumed: freed, handed over, or set aside for the
 * host.  Every frame is counted once in the queue's counters: accepted,
 * taken by the control path, passed to the host, or dropped by reason.  No allocation except the mbufs of the
 * frames to send, no locks, no logging.  From the queue's engine's
 * thread only.
 *
 * @param q
 *   The queue the burst arrived on (mwp_queue_create).
 * @param pkts
 *   The frames, at most MWP_BURST_MAX.
 * @param n
 *   How many.
 * @param tx
 *   Where to put the frames to send (ICRCs done).
 * @param tx_room
 *   Room in tx (up to 64 is used).  READ responses that do not fit wait
 *   for mwp_queue_tx.
 * @return
 *   The number of frames placed in tx.
 */
uint16_t mwp_queue_rx(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n,
		      struct rte_mbuf **tx, uint16_t tx_room);

/**
 * mwp_queue_rx for the frames the queue's port sent to itself (one QP of
 * the port to another), which the polling thread turned back in without
 * a wire: their ICRCs were made in this process, by mwp_queue_tx or
 * mwp_queue_rx, and are not checked again.  Everything else is as
 * mwp_queue_rx: they are counted received, sorted and answered.  Give it
 * nothing that came from a port's rx queue.
 */
uint16_t mwp_queue_rx_own(struct mwp_queue *q, struct rte_mbuf **pkts, uint16_t n,
			  struct rte_mbuf **tx, uint16_t tx_room);

/**
 * What the queue sends without new input: answers to frames other queues
 * handed over, READ responses that earlier bursts had no room for, the
 * requests of the QPs it owns (new ones and retransmissions), and the
 * address resolution probes other threads asked the port for
 * (mwp_port_neigh_ask).  Call once per loop pass, from its engine's thread.
 *
 * @param tx
 *   Where to put the frames (ICRCs done).
 * @param room
 *   Room in tx (up to 64 are used).
 * @return
 *   Frames placed in tx.
 */
uint16_t mwp_queue_tx(struct mwp_queue *q, struct rte_mbuf **tx, uint16_t room);

/**
 * Frames mwp_queue_rx set aside for the host's kernel, on a port whose
 * host keeps its addresses (mwp_port_conf.host_path: the exception path):
 * everything that is not RoCE and is addressed to the port's MAC or a
 * group address, in the order received.  The caller passes them to the
 * kernel (a tap) and owns them from here.  Call after each mwp_queue_rx:
 * a queue holds one burst's worth (MWP_BURST_MAX); more are dropped and
 * counted as MWP_DROP_HOST_FULL.
 *
 * @return
 *   Frames placed in out (at most room).
 */
uint16_t mwp_queue_host_take(struct mwp_queue *q, struct rte_mbuf **out, uint16_t room);

struct mwp_ctrl_stats;

/** The queue's control path counters (ARP, ND, ICMP echo; mwp_ctrl.h). */
void mwp_queue_ctrl_stats(const struct mwp_queue *q, struct mwp_ctrl_stats *st);

struct mwp_guard;

/** The queue's guessing defence: its sources (mwp_guard.h; written by the
 * queue's thread alone, read here as they are). */
const struct mwp_guard *mwp_queue_guard(const struct mwp_queue *q);

/** Frames this queue handed to the owner of their QP, and frames it was
 * handed (counters of its thread). */
void mwp_queue_handoffs(const struct mwp_queue *q, uint64_t *out, uint64_t *in);

#endif /* MWP_ENGINE_H */
