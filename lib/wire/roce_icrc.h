/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_ICRC_H
#define ROCE_ICRC_H

/**
 * @file
 * The RoCEv2 invariant CRC.
 *
 * CRC-32 (IEEE 802.3, reflected, the zlib crc32) over: 8 bytes of 0xff
 * standing for the LRH, the IP header with its variant fields set to ones
 * (IPv4: TOS, TTL, checksum; IPv6: traffic class, flow label, hop limit),
 * the UDP header with checksum 0xffff, the BTH with byte 4 (FECN, BECN,
 * reserved) 0xff, then everything up to the ICRC unmasked.  Stored
 * little-endian after the pad.
 *
 * Computed with ISA-L's crc32_gzip_refl (carry-less multiply folding).
 * Unlike rte_net_crc_calc it takes a seed, so it continues from a masked
 * copy of the headers into the payload in place; rte_net_crc needs a
 * masked copy of the whole packet.  bench/bench_wire measured verify at
 * 40 vs 37 ns (64-byte payload) and 111 vs 187 ns (1024-byte) per packet,
 * ISA-L vs rte_net_crc; see docs/benchmarks.md.
 *
 * All functions are thread-safe and take no locks.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "roce_parse.h"

/** Frames of a burst whose ICRCs are computed together (more are checked
 *  one by one). */
#define MWP_ICRC_BURST_MAX 32

/**
 * Compute the ICRC of a frame whose BTH has been located.
 *
 * @param m
 *   The frame; payload may span segments.
 * @param p
 *   Its parsed view, with MWP_PKT_BTH set.
 * @return
 *   The ICRC as a host-order value (the wire holds it little-endian).
 */
uint32_t mwp_icrc_compute(const struct rte_mbuf *m, const struct mwp_pkt *p);

/**
 * Read the ICRC a frame carries.
 *
 * @return
 *   The 4 trailer bytes as a host-order value.
 */
uint32_t mwp_icrc_read(const struct rte_mbuf *m, const struct mwp_pkt *p);

/**
 * Verify one frame's ICRC.
 *
 * @return
 *   true if the carried ICRC matches the computed one.
 */
static inline bool
mwp_icrc_ok(const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	return mwp_icrc_compute(m, p) == mwp_icrc_read(m, p);
}

/**
 * Verify the ICRCs of a burst.
 *
 * Entries with why[i] != MWP_DROP_NONE are skipped; a mismatch sets why[i]
 * to MWP_DROP_BAD_ICRC.
 *
 * @return
 *   The number of frames that failed.
 */
uint16_t mwp_icrc_verify_burst(struct rte_mbuf *const *pkts,
			       const struct mwp_pkt *p, enum mwp_drop *why,
			       uint16_t n);

/**
 * Compute and store the ICRC of a frame being built.
 *
 * @param m
 *   The frame; the trailer bytes at p->icrc_off must exist.
 * @param p
 *   Its parsed view, with MWP_PKT_BTH set.
 */
void mwp_icrc_fill(struct rte_mbuf *m, const struct mwp_pkt *p);

/**
 * Compute and write the ICRCs of n frames built with mwp_build_deferred
 * (together, as mwp_icrc_verify_burst checks them).
 *
 * @param m
 *   The frames (one segment each).
 * @param p
 *   Their parsed views, as mwp_build_deferred gave them.
 */
void mwp_icrc_fill_burst(struct rte_mbuf *const *m, const struct mwp_pkt *p,
			 uint16_t n);

#endif /* ROCE_ICRC_H */
