/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CRC_MB_H
#define ROCE_CRC_MB_H

/*
 * Multi-buffer CRC-32 (gzip polynomial, reflected) for short buffers
 * (private to libmwpath; roce_icrc.c's burst verification uses it).
 */

#include <stdbool.h>
#include <stdint.h>

/** The CPU has what mwp_crc32_mb needs: x86 PCLMULQDQ and SSE4.1 (CPUID;
 *  with AVX2 and VPCLMULQDQ it also takes eight lanes at once), arm64
 *  PMULL (AT_HWCAP's HWCAP_PMULL).  Elsewhere false. */
bool mwp_crc32_mb_available(void);

/** Leading blocks of a lane that may be masked. */
#define MWP_CRC_MB_MASKED 5

/** What to do to a lane's first blocks as they are loaded: AND, then OR
 *  (zero what comes before the data, force the fields a CRC ignores). */
struct mwp_crc_mask {
	uint8_t and_[MWP_CRC_MB_MASKED][16] __attribute__((aligned(16)));
	uint8_t or_[MWP_CRC_MB_MASKED][16] __attribute__((aligned(16)));
	/** Leading blocks that are not all AND 0xff, OR 0 (the rest load
	 *  as they are); at most MWP_CRC_MB_MASKED. */
	uint8_t nblocks;
};

/**
 * One buffer of 16 * nblocks bytes at base, read in place (no alignment
 * needed); its first MWP_CRC_MB_MASKED blocks go through mask if that is
 * not NULL, so a frame's CRC needs no masked copy.
 */
struct mwp_crc_lane {
	const uint8_t *base;
	const struct mwp_crc_mask *mask;
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
