/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_COMP_H
#define ROCE_COMP_H

/*
 * The completer (roce_comp.c) as the sender (roce_req.c) sees it, private
 * to req/: the sender completes, fails and times what it sends through
 * the completer; the completer makes the sender go back by moving its
 * PSNs and kicking it (mwp_sched.h), never by calling it.  And the PSN
 * arithmetic both use.
 */

#include <stdbool.h>
#include <stdint.h>

#include "mwp_priv.h"
#include "roce_req.h"

/* b - a in the 24-bit PSN space, as a signed distance */
static inline int32_t
psn_diff(uint32_t b, uint32_t a)
{
	return (int32_t)((b - a) << 8) >> 8;
}

static inline bool
is_rc(const struct mwp_qp *qp)
{
	return qp->transport == ROCE_TRANSPORT_RC;
}

/* The oldest WQE with the requester (started, if anything is
 * outstanding), or NULL. */
struct mwp_swqe *mwp_comp_oldest(const struct mwp_qp *qp);

/* The local ACK timer, from the last progress (req.ack_clock). */
void mwp_comp_arm_ack_timer(struct mwp_qp *qp);

/* A WQE (NULL: none) fails with st: the QP goes to ERR, its runner
 * flushes the rest. */
void mwp_comp_fail(struct mwp_qp *qp, struct mwp_swqe *e, enum ibv_wc_status st);

/* A WQE is complete (acknowledged; UC: sent). */
void mwp_comp_complete(struct mwp_qp *qp, struct mwp_swqe *e);

#endif /* ROCE_COMP_H */
