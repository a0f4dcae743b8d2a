/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CRC_MB_H
#define ROCE_CRC_MB_H

/*
 * Multi-buffer CRC-32 (gzip polynomial, reflected) for short buffers
 * (private to libmwpath; roce_icrc.c's burst verification uses it).
 */

#include <stdbool.h>
#include <stdint.h>

/** The CPU has what mwp_crc32_mb needs (x86 PCLMULQDQ and SSE4.1). */
bool mwp_crc32_mb_available(void);

/** Blocks of 16 bytes a lane reads from its head before its tail.  A
 *  masked copy of a whole short frame beats reading its payload in place
 *  (bench_wire, 64-byte WRITE: 33-36 ns against 40-45 ns per parse and
 *  verify): the copy streams the frame in while the folds would wait on it. */
#define MWP_CRC_MB_HEAD 17

/**
 * One buffer: 16 * nblocks bytes, the first MWP_CRC_MB_HEAD blocks at
 * head (a masked copy, say) and the rest at tail (the data in place), so
 * only the head needs copying.  No alignment is needed.
 */
struct mwp_crc_lane {
	const uint8_t *head;
	const uint8_t *tail;	/**< block MWP_CRC_MB_HEAD; unused if fewer */
	uint16_t nblocks;	/**< at least 1 */
};

/**
 * The CRC register after each of n buffers, starting from 0 and not
 * inverted: fold an initial value into the first four bytes and invert
 * the result as the CRC in use wants.  Leading zero bytes do not change a
 * CRC that starts from 0, so a buffer may be padded at the front to a
 * multiple of 16 bytes.
 *
 * @param lanes
 *   The buffers.
 * @param crc
 *   Out: n registers.
 * @param n
 *   Buffers.
 */
void mwp_crc32_mb(const struct mwp_crc_lane *lanes, uint32_t *crc, unsigned int n);

#endif
