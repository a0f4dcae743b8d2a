/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_OBJECTS_H
#define MWP_APP_OBJECTS_H

#include "config.h"
#include "mwp_pmd.h"
#include "summary.h"

struct app_objects;

/** The work requests due on one port at given frame counts (after_rx). */
struct app_gate {
	struct mwp_rx_gate g;		/**< what the port's lcore checks */
	struct app_objects *o;
	uint16_t port;
};

/** Every completion one CQ gave, in order. */
struct app_cqe_log {
	struct ibv_wc *wc;
	size_t n, cap;
};

/** The verbs objects the configuration makes. */
struct app_objects {
	const struct app_config *cfg;
	struct ibv_context *ctx;
	struct ibv_pd *pd[APP_MAX_OBJ];
	struct ibv_mr *mr[APP_MAX_OBJ];
	void *mem[APP_MAX_OBJ];
	struct ibv_mw *mw[APP_MAX_OBJ];
	struct ibv_cq *cq[APP_MAX_OBJ];
	struct ibv_qp *qp[APP_MAX_QP];
	struct ibv_mr *recv_mr[APP_MAX_QP];
	void *recv_mem[APP_MAX_QP];
	unsigned int nb_qps;
	bool posted[APP_MAX_WR];	/* [wr N] posted (at start or its after_rx) */
	unsigned int wr_posted, wr_ok, wr_failed;	/* send-queue outcomes */
	unsigned int recv_ok, recv_failed, recv_flushed;	/* receive completions */
	struct app_cqe_log log[APP_MAX_OBJ];		/* per [cq N] */
	struct app_gate gate[RTE_MAX_ETHPORTS];
	bool starting;			/* app_workreqs_start is running */
	unsigned int gate_delay_us;	/* MWPATH_DEBUG_GATE_DELAY_US (tests) */
};

/**
 * Make the configuration's objects, attach its QPs to the ports, post
 * receives and run the start-up work requests to completion.  On error,
 * prints one line naming the section.
 *
 * @return
 *   0 or -1.
 */
int app_objects_create(const struct app_config *cfg, struct app_run *run,
		       struct app_objects *o);

/**
 * The gate of port's work requests with after_rx > 0, to hand to the lcore
 * polling the port's first queue; NULL if it has none.
 */
struct mwp_rx_gate *app_objects_gate(struct app_objects *o, uint16_t port);

/**
 * Run the device's deferred work and take every completion waiting in the
 * CQs into the logs (the main lcore's housekeeping, and at exit).
 */
void app_objects_collect(struct app_objects *o);

/** Work requests posted and not yet executed, on any QP. */
unsigned int app_objects_pending(const struct app_objects *o);

/** Work requests posted and not yet complete (the peer may still have to
 * answer), on any QP. */
unsigned int app_objects_outstanding(const struct app_objects *o);

/** The QP of [qp QPN], or NULL. */
struct ibv_qp *app_objects_qp(const struct app_objects *o, uint32_t qpn);

/**
 * The SGE address of byte addr of [mr N] as the configuration names it:
 * the address itself for a region registered with an iova, else an offset
 * from the region's start.
 */
uint64_t app_mr_sge_addr(const struct app_objects *o, unsigned int mr, uint64_t addr);

/**
 * Post the start-up work requests (after_rx 0) and run them to completion
 * (workreqs.c).  Returns 0.
 */
int app_workreqs_start(struct app_objects *o);

/** A completion status as the dump writes it ("success", "mw_bind_err"...). */
const char *app_wc_status_name(enum ibv_wc_status s);

/** A completion opcode as the dump writes it ("send", "bind_mw"...). */
const char *app_wc_opcode_name(enum ibv_wc_opcode op);

/** "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR". */
const char *app_qp_state_name(enum ibv_qp_state s);

/** Print each region's and window's keys, in hex (at start). */
void app_objects_print_keys(FILE *out, const struct app_objects *o);

/** Print what the objects did (one line per QP). */
void app_objects_print(FILE *out, const struct app_objects *o);

/** Free everything app_objects_create made. */
void app_objects_destroy(struct app_objects *o);

#endif
