/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_POST_H
#define MWP_POST_H

/*
 * Posting to a send queue (mwp_post.c): ibv_post_send's work requests and
 * ibv_bind_mw's Type 1 binds (and mwp_det_bind's), checked and made WQEs
 * at post time, from any thread.  The device's ops table names these.
 * Private.
 */

#include <infiniband/verbs.h>

int mwp_op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int mwp_op_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b);

struct mwp_qp;
struct mwp_wqe;

/* One work request checked against its QP and made a WQE, as
 * ibv_post_send does it (the ibv_wr_* API's, mwp_wr.c): 0 or the errno. */
int mwp_post_make_wqe(struct mwp_qp *qp, const struct ibv_send_wr *wr, struct mwp_wqe *w);

#endif /* MWP_POST_H */
