/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_CC_H
#define MWP_CC_H

/*
 * Congestion control on the wire (docs/congestion.md): the notification
 * point answers a frame a switch marked CE with a CNP to its sender's QP,
 * and the reaction point hands a CNP to the QP's DCQCN (rate/mwp_dcqcn.h),
 * whose pacer the requester and the READ responder obey.  The rx sorter
 * (engine/mwp_rx.c) calls both, on the lcore that owns the QP.
 */

#include <stdint.h>

#include "mwp_port.h"
#include "mwp_qp.h"
#include "mwp_stats.h"
#include "roce_tx.h"

/**
 * A frame marked CE, for qp (its ICRC good): counted, and answered with a
 * CNP into tx -- unless the port sends none, the tx batch is full, or one
 * went to this QP's sender less than the port's min_time_between_cnps ago.
 */
void mwp_cc_ce(struct mwp_tx *tx, struct mwp_port *port, struct mwp_qp *qp,
	       const struct rte_mbuf *m, const struct mwp_pkt *p, uint64_t now,
	       struct mwp_stats *st);

/** A CNP for qp (its ICRC good): counted, and DCQCN's if the port reacts. */
void mwp_cc_cnp(struct mwp_port *port, struct mwp_qp *qp, uint64_t now, struct mwp_stats *st);

#endif /* MWP_CC_H */
