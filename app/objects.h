/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_OBJECTS_H
#define MWP_APP_OBJECTS_H

#include "config.h"
#include "summary.h"

/** The verbs objects the configuration makes. */
struct app_objects {
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
	unsigned int wr_ok, wr_failed;	/* start-up work requests */
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

/** Print what the objects did (one line per QP). */
void app_objects_print(FILE *out, const struct app_objects *o);

/** Free everything app_objects_create made. */
void app_objects_destroy(struct app_objects *o);

#endif
