/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_CONFIG_H
#define MWP_APP_CONFIG_H

#include <stdbool.h>

#include <rte_cfgfile.h>
#include <rte_config.h>
#include <rte_ether.h>

#include "mwpath.h"
#include "mwp_pmd.h"

/** Default RoCE path MTU of a port. */
#define APP_DEFAULT_MTU 1024

#define APP_MAX_OBJ	64	/* [pd N], [mr N], [mw N], [cq N]: N below this */
#define APP_MAX_QP	64	/* [qp N] sections */
#define APP_MAX_WR	256	/* [wr N] sections */
#define APP_MAX_RECV	256	/* [recv N] sections */

struct app_mr {
	bool present;
	unsigned int pd;
	uint64_t length;
	unsigned int access;	/* IBV_ACCESS_* */
	bool has_iova;
	uint64_t iova;		/* default: the host address */
	bool pattern;		/* fill: byte i = i & 0xff (else zero) */
	bool random;		/* fill: bytes of an LCG from seed (app_fill) */
	uint64_t seed;
	bool has_rkey;
	uint32_t rkey;		/* pinned R_Key (replays of captured traffic) */
};

struct app_mw {
	bool present;
	unsigned int pd;
	unsigned int type;	/* 1 or 2 */
};

struct app_cq {
	bool present;
	unsigned int depth;
};

struct app_qp {
	uint32_t qpn;		/* the section's number */
	char section[CFG_NAME_LEN];
	unsigned int pd, cq, port;
	bool uc;
	unsigned int access;	/* given, or the transport's default */
	bool has_access;
	uint32_t remote_qpn;
	uint8_t remote_gid[16];	/* IPv6, or ::ffff:a.b.c.d */
	bool has_remote;
	uint32_t rq_psn, sq_psn;
	bool has_rq_psn, has_sq_psn;	/* given; else random (or 0: sequential) */
	unsigned int max_dest_rd_atomic;
	unsigned int min_rnr_timer;
	unsigned int timeout;		/* local ACK timeout: 4.096 us << timeout */
	unsigned int retry_cnt, rnr_retry;
	unsigned int max_rd_atomic;	/* READs/ATOMICs we keep outstanding */
	unsigned int recv_count, recv_size;
	bool has_remote_mac;
	struct rte_ether_addr remote_mac;	/* instead of ARP/ND */
};

/* [wr N] opcodes, in the order of app_wr_ops[] (config_verbs.c) */
enum app_wr_op {
	APP_WR_BIND_MW, APP_WR_LOCAL_INV, APP_WR_SEND, APP_WR_SEND_WITH_IMM,
	APP_WR_SEND_WITH_INV, APP_WR_WRITE, APP_WR_WRITE_WITH_IMM, APP_WR_READ,
	APP_WR_FETCH_ADD, APP_WR_CMP_SWAP, APP_WR__MAX
};

/** What a [wr] opcode is. */
struct app_wr_op_info {
	const char *name;	/* in the configuration */
	int ibv;		/* enum ibv_wr_opcode */
	bool rc_only;		/* RC QPs only */
	bool data;		/* has a local buffer (SGEs) */
	bool remote;		/* names the peer's memory: remote_addr, remote_rkey */
};
extern const struct app_wr_op_info app_wr_ops[APP_WR__MAX];

#define APP_WR_MAX_SGE 4

/** A buffer in a configured region, as an SGE names it. */
struct app_sge {
	unsigned int mr;
	uint64_t addr;		/* in the region's iova space (offset without one) */
	uint32_t length;
};

struct app_wr {
	char section[CFG_NAME_LEN];
	uint64_t wr_id;		/* N: its completion's wr_id */
	uint32_t qpn;
	enum app_wr_op op;
	bool has_mw, has_mr;
	unsigned int mw, mr;
	uint64_t addr, length;
	unsigned int access;
	uint8_t key;		/* Type 2 key byte */
	uint32_t rkey;		/* local_inv, send_with_inv */
	bool signaled;
	bool fence;		/* IBV_SEND_FENCE */
	bool inline_data;	/* IBV_SEND_INLINE */
	uint64_t after_rx;	/* post once the QP's port has received this many */
	bool has_remote;	/* remote_rkey given */
	uint64_t remote_addr;	/* write, read, atomics: the peer's address */
	uint32_t remote_rkey;	/* ... and key */
	bool has_imm;
	uint32_t imm;		/* send_with_imm, write_with_imm (host order) */
	uint64_t add;		/* fetch_add */
	uint64_t compare, swap;	/* cmp_swap */
	/* the local buffer: sge = MR:ADDR:LENGTH,... or one from mr, addr,
	 * length */
	unsigned int nb_sge;
	struct app_sge sge[APP_WR_MAX_SGE];
};

/** [recv N]: a receive whose buffers lie in configured regions. */
struct app_recv {
	char section[CFG_NAME_LEN];
	uint32_t qpn;
	uint64_t wr_id;
	unsigned int nb_sge;
	struct app_sge sge[4];
};

#define APP_MAX_DEVICES	4	/* [device N]: mwpath0 .. mwpath3 */
#define APP_DEVICE_EAL_LEN 1024

/** How a [device N] makes progress (docs/verbs-device.md). */
enum app_progress {
	APP_PROGRESS_THREAD,	/* a thread of the device's, and the program's
				 * ibv_poll_cq (the default) */
	APP_PROGRESS_CALLS,	/* the program's ibv_poll_cq alone */
	APP_PROGRESS_LCORE,	/* an EAL worker lcore of the device's, polling */
};

/** [device N]: the libibverbs device mwpathN (the mwpath app ignores it). */
/* [device N] peer_wait_ms unless given: long enough for the other side
 * of a test or a job to start. */
#define APP_DEVICE_PEER_WAIT_MS	10000

/** When a [device N] starts (its DPDK port, its datapath). */
enum app_start {
	APP_START_DEFAULT = 0,		/* load if its port has an exception
					 * path, else open */
	APP_START_OPEN,			/* at the first ibv_open_device */
	APP_START_LOAD,			/* when the program starts: the port's
					 * addresses exist before the program
					 * opens the device (a server that
					 * listens on TCP first, as qperf) */
};

struct app_device {
	bool present;
	uint16_t port;			/* the DPDK port: [port N] and the EAL's Nth */
	char eal[APP_DEVICE_EAL_LEN];	/* EAL arguments, split at spaces */
	enum app_progress progress;
	uint32_t max_keys;		/* regions and windows (0: the library's) */
	uint32_t peer_wait_ms;		/* how long a port that will not start
					 * yet (a memif client before its
					 * server) is tried again */
	enum app_start start;		/* when the device starts */
	bool share;			/* share = on: other processes (the
					 * program's children, other programs)
					 * drive the port too, each with a
					 * socket of its own */
};

/** A [port N] section: the library's port settings, and whether the port
 *  gets a connection manager (QP1). */
struct app_port {
	struct mwp_port_conf conf;
	bool cm_off;			/**< cm = off */
	struct mwp_host_conf host;	/**< exception = tap: the host keeps
					 *   the port's addresses */
};

/** The configuration file. */
struct app_config {
	const char *file;			/**< where it came from */
	bool port_present[RTE_MAX_ETHPORTS];	/**< [port N] exists */
	struct app_port port[RTE_MAX_ETHPORTS]; /**< its settings */
	bool pd_present[APP_MAX_OBJ];		/**< [pd N] */
	struct app_mr mr[APP_MAX_OBJ];		/**< [mr N] */
	struct app_mw mw[APP_MAX_OBJ];		/**< [mw N] */
	struct app_cq cq[APP_MAX_OBJ];		/**< [cq N] */
	struct app_qp qp[APP_MAX_QP];		/**< [qp N], in file order */
	unsigned int nb_qps;
	struct app_wr wr[APP_MAX_WR];		/**< [wr N], in file order */
	unsigned int nb_wrs;
	struct app_recv recv[APP_MAX_RECV];	/**< [recv N], in file order */
	unsigned int nb_recvs;
	struct app_device device[APP_MAX_DEVICES]; /**< [device N] */
	bool sequential_keys;			/**< [security] keys = sequential */
	uint32_t guess_threshold;		/**< [security] guess_threshold */
	uint32_t guess_block_ms;		/**< [security] guess_block_ms */
};

/** The configuration's names of the IBV_ACCESS_* flags (also what
 *  --dump-dir writes). */
struct app_access_name {
	const char *name;
	unsigned int bit;
};
#define APP_ACCESS_NAMES 6
extern const struct app_access_name app_access_names[APP_ACCESS_NAMES];

/**
 * Apply each key of section sec to obj by the table keys[0..nb_keys).
 *
 * @return
 *   0, or -1 after printing the error.
 */
struct app_key;
int app_config_apply(struct rte_cfgfile *cf, struct app_config *cfg, const char *sec,
		     const struct app_key *keys, size_t nb_keys, void *obj);

/**
 * Read and check a configuration file.  On error, prints one line naming
 * the file, line, section and key to stderr.
 *
 * @return
 *   0, or -1 after printing the error.
 */
int app_config_load(const char *file, struct app_config *cfg);

/** Whether port N has a connection manager: an address, and not cm = off. */
bool app_config_port_cm(const struct app_config *cfg, unsigned int port);

/**
 * The settings for ethdev port N: its section, or the defaults
 * (the device's own MAC, no IP address, path MTU 1024).
 */
void app_config_port(const struct app_config *cfg, unsigned int port,
		     struct mwp_port_conf *out);

/**
 * Fill a region as its [mr] says: zero, the pattern (byte i = i & 0xff),
 * or random:SEED -- byte i is the top byte of x(i + 1), where x(0) = SEED
 * and x(n + 1) = x(n) * 6364136223846793005 + 1442695040888963407 (mod
 * 2^64), so a test can compute it independently.
 */
void app_fill(const struct app_mr *mr, uint8_t *mem);

/** The [wr N] section whose work request has wr_id N, or NULL. */
const struct app_wr *app_config_wr(const struct app_config *cfg, uint64_t wr_id);

/* config.c's error line, for the section loaders */
void app_conf_err(const char *file, const char *section, const char *key,
		  const char *fmt, ...) __rte_format_printf(4, 5);

/* config_verbs.c: [pd], [mr], [mw], [cq], [qp], [wr] */
int app_config_verbs_section(struct rte_cfgfile *cf, struct app_config *cfg,
			     const char *kind, const char *section, unsigned long idx);
int app_config_verbs_check(struct app_config *cfg);

#endif
