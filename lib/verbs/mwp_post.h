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

#endif /* MWP_POST_H */
