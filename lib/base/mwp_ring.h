/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_RING_H
#define MWP_RING_H

/*
 * The rings of verbs objects (send and receive queues, CQs, SRQs), private
 * to libmwpath.  rte_ring_create_elem() takes a memzone for each, and a
 * process has RTE_MAX_MEMZONE (2560) of them: a device of rings made that
 * way stops at about 1270 QPs, far below what it tells programs it holds.
 * These come from the DPDK heap of the socket instead (rte_ring_init() on
 * rte_zmalloc_socket()), as many as memory allows; they are not named in
 * the ring list, which nothing of ours looks them up in.
 */

#include <rte_ring.h>

/**
 * A ring of count elements of esize bytes (RING_F_EXACT_SZ: exactly
 * count), on socket, with flags (RING_F_SC_DEQ, RING_F_MC_HTS_DEQ...).
 * @return the ring; NULL with rte_errno set (EINVAL, ENOMEM).
 */
struct rte_ring *mwp_ring_make(const char *what, unsigned int esize, unsigned int count,
			       int socket, unsigned int flags);

/** Frees a ring of mwp_ring_make(); NULL is nothing. */
void mwp_ring_free(struct rte_ring *r);

#endif /* MWP_RING_H */
