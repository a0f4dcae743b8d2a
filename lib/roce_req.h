/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_REQ_H
#define ROCE_REQ_H

/*
 * The requester (private): the send ring's data WQEs leave as packets on
 * the port's requester ring; ACKs and NAKs from the peer complete them.
 */

#include "mwp_priv.h"

/**
 * The requester hook a QP gets when it is attached to a port (unless a
 * test set its own): SEND, SEND_WITH_IMM, SEND_WITH_INV (RC), RDMA_WRITE
 * and RDMA_WRITE_WITH_IMM.  Runs under the device lock.
 */
enum mwp_tx_result mwp_req_tx(struct mwp_qp *qp, const struct mwp_wqe *w,
			      void *arg);

/**
 * An RC ACKNOWLEDGE for this QP's requests arrived (the lcore's call):
 * complete every outstanding WQE it covers; a NAK or RNR NAK completes the
 * WQE holding psn with the matching error (the QP goes to ERR).
 */
void mwp_req_ack(struct mwp_qp *qp, uint32_t psn, uint8_t syndrome);

#endif
