/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_IBV_H
#define MWP_IBV_H

/*
 * libmwpath-ibverbs: mwpath as a libibverbs device for unmodified
 * programs, loaded with LD_PRELOAD (provider/mwpath-run does it).  It
 * defines the exported functions of libibverbs.so.1 that take a device,
 * a context or an object: for mwpath's devices it answers itself, for any
 * other it calls the real function (found with dlvsym in the real
 * library).  docs/verbs-device.md gives the reasons for this route and
 * the list.  Private to provider/.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include <infiniband/verbs.h>

#include "config.h"
#include "mwp_pmd.h"
#include "mwpath.h"
#include "mwp_cm.h"

/* Reader id of the thread that polls in the program's calls: above any
 * EAL lcore id. */
#define MWP_IBV_READER		(RTE_MAX_LCORE - 1)

/* Objects (QPs, CQs, SRQs) a device tracks with events handed out and
 * not all acknowledged. */
#define MWP_IBV_REPORTED	1024

/* GID table of a port: ::ffff:IPv4 (RoCE v2), then IPv6 (RoCE v2). */
#define MWP_IBV_MAX_GIDS	2

/** One configured device, [device N] of $MWPATH_CONFIG: mwpathN. */
struct mwp_ibv_dev {
	struct ibv_device dev;		/* what ibv_get_device_list hands out */
	unsigned int index;		/* N */
	struct app_device conf;		/* [device N] */
	struct mwp_port_conf pc;	/* [port conf.port] */
	struct mwp_host_conf hc;	/* its exception path */
	struct mwp_host host;		/* ... running (port_id MWP_HOST_NONE: none) */
	struct mwp_xdp xdp;		/* a net_af_xdp port: the kernel's neighbours */
	bool sequential_keys;		/* [security] keys = sequential */
	union ibv_gid gid[MWP_IBV_MAX_GIDS];
	unsigned int nb_gids;
	uint64_t guid;			/* EUI-64 of the MAC, network order */

	/* open: from the first ibv_open_device to the end of the process */
	pthread_mutex_t lock;		/* open/close */
	unsigned int refs;		/* contexts the program holds */
	struct ibv_context *ctx;	/* the library's device */
	struct mwp_port *port;
	struct rte_mempool *mp;
	struct mwp_lcore lc;
	bool stop;
	pthread_t thread;		/* the progress thread (progress = thread) */
	bool has_thread;
	unsigned int lcore;		/* the polling lcore (progress = lcore) */
	int failed;			/* the first open's errno: every open's */
	/* asynchronous events not yet taken (ibv_get_async_event): the
	 * context's async_fd counts them (an eventfd, semaphore mode) */
	pthread_mutex_t async_lock;
	struct ibv_async_event async[256];
	unsigned int async_head, async_count;
	uint64_t async_lost;		/* events that found the queue full */
	/* objects with events handed to the program (ibv_get_async_event),
	 * and how many: destroying one waits until libibverbs'
	 * ibv_ack_async_event has counted as many on it, as the kernel's
	 * uverbs makes ibv_destroy_qp wait */
	struct {
		const void *obj;
		uint32_t n;
	} reported[MWP_IBV_REPORTED];
	uint32_t poll;			/* one poller at a time (poll_trylock) */
	uint64_t app_poll_tsc;		/* when the program last polled a CQ */
	/* the progress thread stands aside longer than APP_ACTIVE_US (a
	 * futex wait on aside_kick) while the program keeps polling; a
	 * program about to stop polling wakes it (mwp_ibv_app_waits) */
	uint32_t aside_long;
	uint32_t aside_kick;
	uint64_t asides_long;		/* long stand-asides begun (MWPATH_STATS) */
	uint64_t asides_ended;		/* ... of them ended by mwp_ibv_app_waits */
	uint32_t cm_kick;		/* the CM thread's sleep: a futex */
	/* the port's connection manager (QP1) and the thread that runs it */
	bool cm_on;			/* the port has an address, not cm = off */
	struct mwp_cm *cm;
	pthread_t cm_thread;
	bool has_cm_thread;
	bool cm_stop;			/* the CM thread ends (at exit) */
	/* fork (a port whose host keeps its addresses): the device moves to
	 * the child; the parent's threads park, and stay parked */
	bool park;			/* its threads stop where they hold nothing */
	bool progress_parked, cm_parked;	/* ... and have */
	bool moved;			/* a child took it: this process's is idle */
	/* share = on: other processes drive the port too, each with a
	 * packet socket of its own (mwp_ibv_share.c) */
	struct mwp_ibv_share_tbl *share;	/* shared by them (NULL: not shared) */
	char share_if[64];		/* the interface (net_af_packet's iface) */
	int share_part;			/* this process's part, -1: none */
	unsigned int share_qps;		/* QPs at the start (QP1): a child
					 * takes the device only with as many */
	/* the port is memif's: the CM thread (started for it alone if the
	 * port has no CM) faults its regions in when its link comes up */
	bool memif;
	bool memif_warm;		/* ... done for this link-up */
};

/* ---- a device shared by processes (mwp_ibv_share.c) ---- */

/** Parts (processes at once) of a shared device, and the bits of a CM
 *  communication ID that name one. */
#define MWP_IBV_SHARE_PART_BITS	4
#define MWP_IBV_SHARE_PARTS	(1u << MWP_IBV_SHARE_PART_BITS)

struct mwp_ibv_share_tbl;

/** The processes' table of the device on interface ifname (shared
 *  memory named after it and the port's MAC, made by the first); this
 *  process takes a part.  0 or -errno. */
int mwp_ibv_share_create(struct mwp_ibv_dev *d, const char *ifname);
/** A forked child's part.  0, or -ENOSPC: every part is a live
 *  process's. */
int mwp_ibv_share_join(struct mwp_ibv_dev *d);
/** At exit: the part and the listeners of this process are free. */
void mwp_ibv_share_leave(struct mwp_ibv_dev *d);
/** The QP numbers of a part: 1/MWP_IBV_SHARE_PARTS of the 24 bits. */
void mwp_ibv_share_qpns(int part, uint32_t *lo, uint32_t *hi);
/** A listener of this process on sid/mask (0: exact): 0, EADDRINUSE
 *  (another live process listens on it), ENOSPC.  0 if not shared. */
int mwp_ibv_share_listen(struct mwp_ibv_dev *d, uint64_t sid, uint64_t mask);
/** ... and gone. */
void mwp_ibv_share_unlisten(struct mwp_ibv_dev *d, uint64_t sid, uint64_t mask);
/** In a forked child: the EAL's memory, which --no-huge keeps in a file
 *  the fork shares (a memfd, MAP_SHARED), copied into this process's
 *  own at the same addresses -- what a fork does to the rest of it.
 *  0 or -errno. */
int mwp_ibv_share_privatize(void);
/** The device's CM, made one of the processes' (mwp_cm_share). */
int mwp_ibv_share_cm(struct mwp_ibv_dev *d);

/** An int verb's answer: libibverbs returns the errno value, and
 *  programs that print strerror(errno) (qperf) find it in errno too. */
static inline int
mwp_ibv_ret(int ret)
{
	if (ret != 0)
		errno = ret;
	return ret;
}

/* ---- the real libibverbs (mwp_ibv_real.c) ---- */

/** The real library's functions that mwpath forwards to. */
struct mwp_ibv_real {
	struct ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	__be64 (*get_device_guid)(struct ibv_device *dev);
	int (*get_device_index)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
	int (*query_port)(struct ibv_context *ctx, uint8_t port, void *attr);
	int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
	int (*query_gid_ex)(struct ibv_context *ctx, uint32_t port, uint32_t index,
			    struct ibv_gid_entry *entry, uint32_t flags, size_t size);
	ssize_t (*query_gid_table)(struct ibv_context *ctx, struct ibv_gid_entry *entries,
				   size_t max, uint32_t flags, size_t size);
	int (*query_gid_type)(struct ibv_context *ctx, uint8_t port, unsigned int index,
			      int *type);
	int (*query_pkey)(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey);
	int (*get_pkey_index)(struct ibv_context *ctx, uint8_t port, __be16 pkey);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
	struct ibv_mr *(*reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t len,
				      uint64_t iova, int access);
	struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *pd, void *addr, size_t len,
				       uint64_t iova, unsigned int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			struct ibv_qp_init_attr *init);
	int (*destroy_qp)(struct ibv_qp *qp);
};

extern struct mwp_ibv_real mwp_ibv_real;

/** Find the real library's functions (once; thread-safe).  0 or ENOENT. */
int mwp_ibv_real_init(void);

/** One more function of the real library (version NULL: its default);
 *  the program cannot go on without it: a missing one aborts. */
void *mwp_ibv_real_sym(const char *name, const char *version);

/* ---- mwpath's devices (mwp_ibv_device.c) ---- */

/** The configured devices (read once from $MWPATH_CONFIG). */
unsigned int mwp_ibv_devices(struct mwp_ibv_dev **devs);

/** The mwpath device dev is, or NULL: another provider's. */
struct mwp_ibv_dev *mwp_ibv_dev_of(const struct ibv_device *dev);

/** The mwpath device of a context, or NULL: another provider's. */
static inline struct mwp_ibv_dev *
mwp_ibv_ctx_dev(const struct ibv_context *ctx)
{
	return ctx != NULL ? mwp_ibv_dev_of(ctx->device) : NULL;
}

/** The device whose context's cmd_fd fd is (or a dup of it), or NULL. */
struct mwp_ibv_dev *mwp_ibv_fd_dev(int fd);

/** Open (the first time: start DPDK and the port) and hold the device. */
struct ibv_context *mwp_ibv_open(struct mwp_ibv_dev *d);

/** Let go of one hold. */
int mwp_ibv_close(struct mwp_ibv_dev *d);

/** Until fd is readable, run the device's datapath (progress = calls). */
void mwp_ibv_wait_polling(struct mwp_ibv_dev *d, int fd);

/** Make cq signal its completion channel ch (one of mwpath's). */
int mwp_ibv_channel_attach(struct ibv_cq *cq, struct ibv_comp_channel *ch);

/** cq signals no more (before it is destroyed). */
void mwp_ibv_channel_detach(struct ibv_cq *cq);

/** Queue an asynchronous event of d's (mwp_device_set_async's function). */
void mwp_ibv_async(struct ibv_context *ctx, const struct ibv_async_event *ev, void *arg);

/** The program polls a CQ: the datapath's turn (mwp_ibv_progress), and
 *  the progress thread stays out of its way while it keeps polling. */
unsigned int mwp_ibv_app_poll(struct mwp_ibv_dev *d);

/** The program may stop polling soon (it armed a CQ, or waits for a
 *  completion event): the progress thread, if it stands aside longer
 *  than its first look, looks again now and starts over. */
void mwp_ibv_app_waits(struct mwp_ibv_dev *d);

/** The device's CM thread has work (an address to resolve): it looks
 *  now, not at the end of its sleep. */
void mwp_ibv_cm_kick(struct mwp_ibv_dev *d);

/**
 * Before an object with asynchronous events (a QP, CQ or SRQ of d's) is
 * destroyed: its events not yet handed to the program are dropped (as
 * the kernel drops them), and this waits until the program has
 * acknowledged those it was handed (ibv_ack_async_event), which touch
 * the object.
 */
void mwp_ibv_async_forget(struct mwp_ibv_dev *d, const void *obj, pthread_mutex_t *mutex,
			  pthread_cond_t *cond, const uint32_t *completed);

/** Run the datapath once if no other thread is (progress in calls).
 *  Returns the work done: 0 when idle or busy elsewhere (or when an
 *  lcore of the device's polls). */
unsigned int mwp_ibv_progress(struct mwp_ibv_dev *d);

/* ---- the RDMA CM (mwp_rdmacm.c) ---- */

/** The CM's events of d, into the librdmacm face's channels (the CM
 *  thread, after each mwp_cm_progress). */
void mwp_rdmacm_events(struct mwp_ibv_dev *d);

/** Some id of any device is resolving an address: the CM threads tick. */
bool mwp_rdmacm_resolving(void);
/** The RDMA CM's address resolutions on d: each tick of its CM thread. */
void mwp_rdmacm_tick(struct mwp_ibv_dev *d, uint64_t now);

/** The extended op behind ibv_create_srq_ex for what its inline does
 *  not turn into ibv_create_srq (mwp_ibv_ud.c). */
struct ibv_srq *mwp_ibv_create_srq_ex(struct ibv_context *ctx,
				      struct ibv_srq_init_attr_ex *attr);

/** A CQ of mwpath's made: its context, events and channel, as
 *  libibverbs sets them for its providers' (0, or the errno; then the
 *  CQ is destroyed). */
int mwp_ibv_cq_init(struct ibv_cq *cq, void *cq_context, struct ibv_comp_channel *channel);

/** The capabilities of a QP to make: no SGE asked for is one. */
void mwp_ibv_qp_caps(struct ibv_qp_cap *cap);

/** A QP of mwpath's just made (or NULL, errno set): on d's port, with
 *  its event fields; NULL with errno if it cannot be (then it is
 *  destroyed). */
struct ibv_qp *mwp_ibv_qp_attach(struct mwp_ibv_dev *d, struct ibv_qp *qp);

/** The extended ops behind ibv_create_cq_ex and ibv_create_qp_ex
 *  (mwp_ibv_ex.c). */
struct ibv_cq_ex *mwp_ibv_create_cq_ex(struct ibv_context *ctx,
				       struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *mwp_ibv_create_qp_ex(struct ibv_context *ctx,
				    struct ibv_qp_init_attr_ex *attr);

/** Stop the datapath for a change only a stopped port takes (a QP
 *  attached or freed), and start it again. */
void mwp_ibv_pause(struct mwp_ibv_dev *d);
void mwp_ibv_resume(struct mwp_ibv_dev *d);

#endif /* MWP_IBV_H */
