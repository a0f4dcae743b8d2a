/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_WQE_H
#define MWP_WQE_H

/*
 * A send work request's local buffers (mwp_wqe.c): checked once when the
 * WQE joins its send queue's window, then read by the requester (WRITE
 * and SEND payload) and written (READ data, atomic results) at the
 * offsets its packets name.  Private.
 */

#include <stdbool.h>
#include <stdint.h>

#include "mwp_qp.h"

/**
 * A data WQE is about to join the send queue's window: check its local
 * buffers (each SGE a region of the QP's PD, inside it, with local write
 * for READ and ATOMIC results) and length, and count its PSNs.
 *
 * @return
 *   IBV_WC_SUCCESS, IBV_WC_LOC_PROT_ERR or IBV_WC_LOC_LEN_ERR.
 */
enum ibv_wc_status mwp_wqe_prepare(struct mwp_qp *qp, struct mwp_swqe *e);

/* Where byte off of the WQE's data is, for len bytes at most: the host
 * address, with how many bytes follow there in *span; NULL if the SGE's
 * region is gone or does not cover it (or allow the write).  The first
 * SGE's region is the one mwp_wqe_prepare found while no key has left the
 * key table since (its generation); the caller is an online reader. */
const uint8_t *mwp_wqe_span(const struct mwp_qp *qp, const struct mwp_swqe *e, uint64_t off,
			    uint32_t len, bool write, uint32_t *span);

/* Copy len bytes between buf and the WQE's buffers from offset off: out
 * of them (into_wqe false: WRITE and SEND payload) or into them (READ
 * data; buf is then only read).  false: a region is gone or too short. */
bool mwp_wqe_copy(const struct mwp_qp *qp, const struct mwp_swqe *e, uint64_t off, uint8_t *buf,
		  uint32_t len, bool into_wqe);

#endif /* MWP_WQE_H */
