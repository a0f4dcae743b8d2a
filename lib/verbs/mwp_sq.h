/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_SQ_H
#define MWP_SQ_H

/*
 * A QP's send queue (mwp_sq.c).  Everything but mwp_sq_post runs on the
 * thread that runs the QP: its engine's, or mwp_poll's (holding the
 * device lock) when it has none or its engine is stopped (mwp_sched.h).
 * Private.
 */

#include "mwp_qp.h"

/* Put a WQE on the send ring (any thread) and ring the QP's doorbell: 0,
 * EINVAL (the QP cannot post in its state) or ENOMEM (full). */
int mwp_sq_post(struct mwp_qp *qp, const struct mwp_wqe *w);
/* n WQEs posted together, all or none (the ibv_wr_* API's batch, one
 * doorbell): 0, EINVAL (the QP's state), ENOMEM (no room for them all). */
int mwp_sq_post_n(struct mwp_qp *qp, const struct mwp_wqe *w, unsigned int n);

/* Execute up to max of the WQEs posted, in order, as far as they can go
 * (binds and invalidations need the device lock: a caller passes max > 0
 * only while it holds it), deliver completions in order, flush in ERR.
 * Returns the work done. */
int mwp_sq_run(struct mwp_qp *qp, unsigned int max);

/* Drop everything without completions (RESET). */
void mwp_sq_reset(struct mwp_qp *qp);

/* Deliver what is complete, in order, to the send CQ (an overrun moves
 * the QP to ERR; the completion waits).  Returns the completions
 * delivered. */
int mwp_sq_deliver(struct mwp_qp *qp);

/* The requester's: a data WQE is complete with this status (an error
 * moves the QP to ERR). */
void mwp_sq_done(struct mwp_qp *qp, struct mwp_swqe *e, enum ibv_wc_status status);

/* The QP is in ERR: its requester stops -- its timer, its place among
 * its owner's senders. */
void mwp_sq_req_stop(struct mwp_qp *qp);

#endif /* MWP_SQ_H */
