/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_VERBS_H
#define MWP_VERBS_H

/**
 * @file
 * The verbs face of mwpath.
 *
 * mwp_open_device() returns a software struct ibv_context whose ops table
 * is mwpath's, so the inline verbs of the real <infiniband/verbs.h> --
 * ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw, ibv_post_send, ibv_post_recv,
 * ibv_poll_cq, ibv_inc_rkey -- work unchanged on it.  The verbs libibverbs
 * does not inline have mwp_ twins of the same shape.  Errors follow verbs:
 * NULL with errno, or a positive errno value.
 *
 * The caller must have initialised DPDK's EAL; nothing else (no port, no
 * hugepage) is needed.  Work posted to send queues runs when mwp_poll() is
 * called (or, in the mwpath program, on the owning lcore).
 *
 * Thread safety: control verbs (alloc, reg, bind posting, modify, destroy)
 * may be called from any thread; they serialise on a per-device lock that
 * the datapath never waits for (an lcore only tries it, to execute a bind
 * or invalidation or a SEND with invalidate, and defers that work while a
 * control thread holds it).  Datapath readers (mwp_keys_lookup_bulk) take
 * no lock but must be registered RCU readers (mwp_reader_register).
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "mwp_keys.h"

struct rte_ether_addr;

/** What mwp_open_device creates. */
struct mwp_device_attr {
	uint32_t max_keys;	/**< live R_Keys (MRs + bound MWs); 0: 65536 */
	uint32_t max_readers;	/**< RCU reader threads; 0: RTE_MAX_LCORE */
	int socket;		/**< NUMA socket, or SOCKET_ID_ANY */
	uint32_t flags;		/**< MWP_DEVICE_F_* */
};

/**
 * Keys and QPNs in sequence: each MR and MW in the lowest free slot, key
 * bytes counting up per slot, QPNs counting up from 0x11 -- for tests and
 * for replays of captures whose keys are fixed.  Without it (the
 * default) they are unguessable: slots drawn at random, indices a keyed
 * permutation of them, key bytes and QPNs from a CSPRNG, a slot just
 * freed quarantined (docs/security.md).
 */
#define MWP_DEVICE_F_SEQUENTIAL	(1u << 0)

/** Scatter-gather entries a work request (send or receive) and an SRQ's
 *  receive may have at most: a send's share their room with its inline
 *  data, which replaces them. */
#define MWP_MAX_SGE		16

/** Entries a CQ may have at most. */
#define MWP_MAX_CQE		(1 << 20)

/**
 * Open a device.
 *
 * @param attr
 *   Its limits; NULL for the defaults (a device with no port, for tests
 *   and embedding).
 * @return
 *   The context, or NULL with errno ENOMEM or EINVAL.
 */
struct ibv_context *mwp_open_device(const struct mwp_device_attr *attr);

/**
 * Close a device and free everything it still holds.
 *
 * @return
 *   0, or EBUSY if a reader is still registered.
 */
int mwp_close_device(struct ibv_context *ctx);

/** ibv_alloc_pd: NULL with errno ENOMEM on failure. */
struct ibv_pd *mwp_alloc_pd(struct ibv_context *ctx);

/** ibv_dealloc_pd: 0, or EBUSY while MRs, MWs or QPs use the PD. */
int mwp_dealloc_pd(struct ibv_pd *pd);

/**
 * ibv_reg_mr: register [addr, addr + length) with the host address as the
 * address peers use.
 *
 * @return
 *   The MR (lkey == rkey), or NULL with errno EINVAL (bad access flags,
 *   zero length, REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE,
 *   wrapping range) or ENOMEM (no key left).
 */
struct ibv_mr *mwp_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  int access);

/**
 * ibv_reg_mr_iova: as mwp_reg_mr, but peers address byte 0 of the region
 * as iova.
 */
struct ibv_mr *mwp_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t iova, int access);

/**
 * As mwp_reg_mr_iova, with the region's R_Key chosen by the caller (to
 * replay captured traffic whose keys a real NIC chose).  The L_Key is
 * made as usual and differs from the R_Key.  A pinned key that later
 * collides with a key mwpath makes fails that later registration or bind
 * with EEXIST/ENOMEM rather than shadowing it.
 *
 * @return
 *   The MR, or NULL with errno EEXIST (the R_Key is live), or as
 *   mwp_reg_mr_iova.
 */
struct ibv_mr *mwp_reg_mr_key(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t iova, int access, uint32_t rkey);

/**
 * ibv_dereg_mr.  Returns after every datapath reader has stopped using the
 * MR's key (an RCU grace period), so the memory may be freed at once: it
 * blocks until every registered reader has reported a quiescent state
 * (ibv_dealloc_mw of a bound window does the same).
 *
 * @return
 *   0, or EBUSY while memory windows are bound to the MR (Linux rxe
 *   answers EINVAL; mwpath chooses EBUSY).
 */
int mwp_dereg_mr(struct ibv_mr *mr);

/**
 * ibv_rereg_mr: the region's PD (IBV_REREG_MR_CHANGE_PD), access flags
 * (IBV_REREG_MR_CHANGE_ACCESS) or memory (IBV_REREG_MR_CHANGE_TRANSLATION:
 * addr and length, peers' addresses starting at addr) changed in place.
 * Its L_Key and R_Key stay; what they lead to changes at once for every
 * lcore, and, as for mwp_dereg_mr, the call returns only once no reader
 * still uses what the region was (its old memory may be freed).
 *
 * @return
 *   0, or EINVAL (no flag or an unknown one, a PD of another device,
 *   access flags a region cannot have, no memory), EBUSY (memory windows
 *   are bound to it), ENOMEM; on an error nothing changed.
 */
int mwp_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access);

/** ibv_create_cq with cqe entries: NULL with errno EINVAL or ENOMEM. */
struct ibv_cq *mwp_create_cq(struct ibv_context *ctx, int cqe);

/**
 * ibv_create_cq_ex: a CQ read through ibv_start_poll / ibv_next_poll /
 * ibv_end_poll and the ibv_wc_read_* accessors (and ibv_poll_cq, through
 * ibv_cq_ex_to_cq).  wc_flags may ask for byte_len, imm, qp_num, src_qp,
 * slid, sl and dlid_path_bits; comp_mask for flags, of which
 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED (no lock between start_poll and
 * end_poll).  The completion channel and comp_vector are the caller's
 * (as for mwp_create_cq).
 *
 * @return
 *   The CQ, or NULL with errno EOPNOTSUPP (another wc_flags, comp_mask or
 *   flags bit: timestamps, a parent domain...), EINVAL (cqe 0 or above
 *   MWP_MAX_CQE), ENOMEM.
 */
struct ibv_cq_ex *mwp_create_cq_ex(struct ibv_context *ctx,
				   struct ibv_cq_init_attr_ex *attr);

/** What an asynchronous event calls (ev->element names the QP or CQ):
 *  in the thread that finds the error (an engine's), so it must be
 *  short and must not block. */
typedef void (*mwp_async_event_fn)(struct ibv_context *ctx,
				   const struct ibv_async_event *ev, void *arg);

/**
 * Asynchronous events of a device, as verbs defines them for what mwpath
 * finds on its own: IBV_EVENT_CQ_ERR for a CQ that overran (and
 * IBV_EVENT_QP_FATAL for the QP whose completion it could not take);
 * for an RC responder that stopped on a fatal NAK, IBV_EVENT_QP_REQ_ERR
 * (invalid request, 0x61), IBV_EVENT_QP_ACCESS_ERR (remote access, 0x62)
 * or IBV_EVENT_QP_FATAL (remote operation, 0x63).  Errors a completion
 * reports raise none.  fn NULL: none raised.
 */
void mwp_device_set_async(struct ibv_context *ctx, mwp_async_event_fn fn, void *arg);

/**
 * The numbers the device's QPs take from now on, lo to hi: the share of
 * the 24-bit space of one of several processes that drive one port (each
 * sees every frame, and takes only those to its own QPs).  QPs that
 * exist keep theirs; mwp_create_qp_num may still name any number.
 *
 * @return
 *   0, or EINVAL: lo below 0x11 (0 and 1 are InfiniBand's special QPs,
 *   and the first few are kept), hi above 0xffffff, or lo above hi.
 */
int mwp_device_set_qpn_range(struct ibv_context *ctx, uint32_t lo, uint32_t hi);

/** What a completion event calls: in the thread that delivers the
 *  completion (an engine's), so it must be short and must not block. */
typedef void (*mwp_cq_event_fn)(struct ibv_cq *cq, void *arg);

/**
 * Completion events for a CQ: once ibv_req_notify_cq has armed it, the
 * next completion that reaches it disarms it and calls fn(cq, arg) (a
 * completion channel's signal).  solicited_only arms it like any
 * request: the next completion of any kind signals (one event more than
 * verbs asks for, which consumers tolerate: they poll after each).
 * fn NULL: no events (ibv_req_notify_cq answers EOPNOTSUPP).
 *
 * @return
 *   0.
 */
int mwp_cq_set_event(struct ibv_cq *cq, mwp_cq_event_fn fn, void *arg);

/** ibv_destroy_cq: 0, or EBUSY while a QP uses it. */
int mwp_destroy_cq(struct ibv_cq *cq);

/**
 * ibv_create_ah: where UD sends go.  RoCE addresses by GID: attr must
 * carry a GRH (is_global) naming a unicast IPv6 or IPv4-mapped GID, on
 * port 1.  hop_limit 0 means 64.
 *
 * @return
 *   The handle, or NULL with errno EINVAL (no GRH, zero GID, other port),
 *   EOPNOTSUPP (a multicast GID), ENOMEM.
 */
struct ibv_ah *mwp_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);

/** ibv_destroy_ah: 0, or EINVAL.  Sends already posted with the handle
 *  keep their own copy of the address. */
int mwp_destroy_ah(struct ibv_ah *ah);

/**
 * The address that answers a UD receive, read from its completion and its
 * 40-byte GRH area as rdma-core reads a RoCE v2 one (an IPv4 header in
 * its last 20 bytes, or an IPv6 header): ibv_init_ah_from_wc's attributes
 * for port 1 (grh.sgid_index left 0) and the GID the frame was sent to
 * (*local, to find that index).  Without IBV_WC_GRH, no GRH (is_global 0).
 *
 * @return
 *   0, EINVAL (sent to a multicast address), EPROTONOSUPPORT (the area
 *   holds neither IP header).
 */
int mwp_ah_attr_from_grh(const struct ibv_wc *wc, const struct ibv_grh *grh,
			 struct ibv_ah_attr *attr, union ibv_gid *local);

/**
 * ibv_create_srq: a shared receive queue of attr->attr.max_wr receives
 * (at most 65536) of attr->attr.max_sge entries (at most 16), which any
 * thread may post to (ibv_post_srq_recv) and every QP attached takes
 * from, in order.  attr->attr is updated with what was made.
 *
 * @return
 *   The SRQ, or NULL with errno EINVAL (max_wr 0 or too large, max_sge
 *   too large, srq_limit above max_wr), ENOMEM.
 */
struct ibv_srq *mwp_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);

/**
 * ibv_modify_srq: IBV_SRQ_MAX_WR grows or shrinks it (up to the room it
 * was made with; not below the receives it holds); IBV_SRQ_LIMIT arms the
 * limit event (IBV_EVENT_SRQ_LIMIT_REACHED once fewer receives remain;
 * 0 disarms).
 *
 * @return
 *   0, or EINVAL (unknown mask bits, max_wr 0, beyond the room or below
 *   what is posted, a limit above max_wr).
 */
int mwp_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);

/** ibv_query_srq: max_wr, max_sge and the armed limit (0: none). */
int mwp_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);

/** ibv_destroy_srq: 0, or EBUSY while a QP is attached to it. */
int mwp_destroy_srq(struct ibv_srq *srq);

/**
 * ibv_create_qp for IBV_QPT_RC, IBV_QPT_UC and IBV_QPT_UD, with its own
 * receive queue or attached to attr->srq (then max_recv_wr is ignored).
 *
 * @return
 *   The QP in RESET, or NULL with errno EINVAL (other types, no CQ, CQ or
 *   SRQ of another device), ENOMEM.
 */
struct ibv_qp *mwp_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);

/**
 * mwp_create_qp with a chosen QP number (configurations and replays of
 * captured traffic name their QPs).  QP 1 is the GSI, a UD QP: a port's
 * connection manager makes it (mwp_cm.h).
 *
 * @return
 *   The QP, or NULL with errno EEXIST (number in use), EINVAL (0, 1 but
 *   for UD, above 24 bits, or as mwp_create_qp), ENOMEM.
 */
struct ibv_qp *mwp_create_qp_num(struct ibv_pd *pd, struct ibv_qp_init_attr *attr,
				 uint32_t qpn);

/**
 * ibv_create_qp_ex: a QP as mwp_create_qp makes it, from extended
 * attributes.  comp_mask must name the PD (IBV_QP_INIT_ATTR_PD) and may
 * name create_flags (0 only) and send_ops_flags; with send_ops_flags the
 * QP has the ibv_wr_* post API (mwp_qp_to_qp_ex).  The opcodes a QP may
 * be made for: SEND and SEND_WITH_IMM (UD); those, RDMA WRITE (with
 * immediate), LOCAL_INV and BIND_MW (UC); and, on RC, RDMA READ, both
 * atomics and SEND_WITH_INV too.  attr->cap is updated.
 *
 * @return
 *   The QP, or NULL with errno EINVAL (no PD, or as mwp_create_qp),
 *   EOPNOTSUPP (XRC or raw packet QPs, an XRC domain, RSS, TSO, create
 *   flags, a send opcode the QP's type cannot post), ENOMEM.
 */
struct ibv_qp *mwp_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);

/**
 * ibv_qp_to_qp_ex: the ibv_wr_* API of a QP made with send_ops_flags.
 * Between wr_start and wr_complete the work requests built are checked
 * as ibv_post_send checks them and posted together, all or none, in one
 * order with everything else the QP posts; an error met while building
 * (a bad attribute: EINVAL; a batch the send queue has no room for:
 * ENOSPC, as rxe's provider answers) is returned by wr_complete, which
 * then posts nothing.
 *
 * @return
 *   The extended QP, or NULL for a QP made without send_ops_flags.
 */
struct ibv_qp_ex *mwp_qp_to_qp_ex(struct ibv_qp *qp);

/**
 * Where the QP's own requests (SEND, WRITE, READ, ATOMIC) go at layer 2,
 * instead of the MAC that address resolution (ARP, IPv6 neighbour
 * discovery on the QP's port) finds for its peer's GID.
 *
 * @return
 *   0, or EINVAL for a NULL or multicast address.
 */
int mwp_qp_set_peer_mac(struct ibv_qp *qp, const struct rte_ether_addr *mac);

/**
 * Work requests posted to the QP's send queue and not yet executed (a bind
 * has changed the key table once it is executed; its completion may follow
 * later).  Safe from any thread.
 */
unsigned int mwp_qp_sq_queued(struct ibv_qp *qp);

/**
 * Work requests posted to the QP's send queue and not yet completed
 * (queued, executing, or on the wire awaiting the peer).  Safe from any
 * thread.
 */
unsigned int mwp_qp_sq_outstanding(struct ibv_qp *qp);

/**
 * Data work requests of the QP's send queue that are with the requester:
 * executed, and on their way to the wire or awaiting the peer's answer.
 * While there are some, a later work request fenced behind them may wait
 * for traffic; while there are none, everything queued can run without
 * the peer.  Call it from the thread of the QP's engine.
 */
unsigned int mwp_qp_sq_with_requester(struct ibv_qp *qp);

/**
 * ibv_modify_qp: RESET -> INIT -> RTR -> RTS, any -> ERR, any -> RESET,
 * with the attributes verbs requires for each transition.  RoCEv2
 * addressing comes from attr->ah_attr (the GID is the peer's IPv6 or
 * IPv4-mapped address), dest_qp_num, rq_psn, sq_psn, path_mtu,
 * qp_access_flags and max_dest_rd_atomic.
 *
 * A QP attached to a port going to ERR or RESET first stops its responder
 * and waits for the RCU readers' quiescent reports (not from a reader).
 *
 * @return
 *   0, or EINVAL (illegal transition, missing or bad attribute).
 */
int mwp_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);

/**
 * ibv_query_qp: the QP's attributes as its creation and the modifications
 * since set them (every field, whatever attr_mask asks: a superset is
 * what verbs allows), and its creation attributes with the capacities it
 * has.
 *
 * @return
 *   0, or EINVAL (attr or init NULL).
 */
int mwp_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init);

/** ibv_destroy_qp: 0; outstanding work is dropped without completions.  A
 *  QP on a port is freed after the RCU readers' quiescent reports (not
 *  from a reader). */
int mwp_destroy_qp(struct ibv_qp *qp);

/**
 * Run one iteration of the device's work from the calling thread: the
 * send queue of each QP that no running engine owns (see mwp_engine.h),
 * in order, and the completions waiting for an RCU grace period.  Data
 * work requests of a QP on no port wait: they need a wire.
 *
 * @return
 *   How many work requests were executed or completed.
 */
int mwp_poll(struct ibv_context *ctx);

/**
 * DET-style bind (../shared/spec/memory-windows.md section 6): check up
 * front, then post a bind WQE that fences every later WQE of the QP until
 * it completes.  The binding is usable on every QP of the PD (Type 1).
 *
 * @param qp
 *   The QP whose send queue runs the bind.
 * @param mw
 *   A Type 1 window.
 * @param mr
 *   The region (NULL only with length 0).
 * @param addr, length
 *   The window; length 0 invalidates the previous binding.
 * @param access
 *   Remote rights (IBV_ACCESS_REMOTE_*).
 * @param wr_id
 *   Reported in the completion (always signaled).
 * @param rkey
 *   The new R_Key, written on success.
 * @return
 *   0 (posted); EACCES (the region does not allow binding or the rights
 *   asked exceed it); EFAULT (bad address); EINVAL (bad parameter); ENOMEM;
 *   ENOTCONN (the QP state forbids posting); ENOSPC (send queue full);
 *   EPERM (QP, MW and MR not in one PD); ERANGE (window outside the region).
 */
int mwp_det_bind(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mr *mr,
		 uint64_t addr, uint64_t length, unsigned int access,
		 uint64_t wr_id, uint32_t *rkey);

/**
 * Register the calling thread as a datapath reader of the device's key
 * table (an RCU QSBR reader, online from now on).
 *
 * @param thread_id
 *   Unique per reader, below mwp_device_attr.max_readers.
 * @return
 *   0, or EINVAL (out of range, or already registered).
 */
int mwp_reader_register(struct ibv_context *ctx, unsigned int thread_id);

/** Report a quiescent state: the reader holds no key table pointer. */
void mwp_reader_quiescent(struct ibv_context *ctx, unsigned int thread_id);

/** A registered reader stops reading for a while (it holds no pointer):
 *  grace periods stop waiting for it until it is online again.  For a
 *  reader that polls only now and then (a program's own verbs calls). */
void mwp_reader_offline(struct ibv_context *ctx, unsigned int thread_id);

/** A reader that went offline reads again. */
void mwp_reader_online(struct ibv_context *ctx, unsigned int thread_id);

/** Unregister a reader (it goes offline first). */
int mwp_reader_unregister(struct ibv_context *ctx, unsigned int thread_id);

struct mwp_key_table;

/** The device's R_Key table, for its readers (mwp_keys.h). */
struct mwp_key_table *mwp_device_keys(struct ibv_context *ctx);

/**
 * mwp_keys_walk over a device's table, holding the device lock: safe while
 * lcores read the table and other threads bind and invalidate (they wait).
 * The descriptors' counters are read as the lcores left them.
 */
unsigned int mwp_device_keys_walk(struct ibv_context *ctx, mwp_keys_walk_fn fn,
				  void *arg);


#endif /* MWP_VERBS_H */
