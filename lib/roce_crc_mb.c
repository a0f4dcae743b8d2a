/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 (the gzip polynomial, bit-reflected) of several short buffers at
 * once, by carry-less multiplication.
 *
 * A single short buffer is latency-bound: each 16-byte fold waits for the
 * previous one's PCLMULQDQ (several cycles), so ISA-L's crc32_gzip_refl,
 * the fastest single-buffer code we measured, spends ~40 ns on a 64-byte
 * WRITE's ICRC.  The folds of different buffers are independent: run four
 * in lock step and the multiplier stays busy.  ISA-L has multi-buffer
 * hashes but no multi-buffer CRC, hence this file; ISA-L still computes
 * every CRC that is not a burst of short frames.
 *
 * The method and constants are those of Intel's "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al., 2009),
 * for the reflected polynomial 0x104c11db7: fold by 16 bytes with
 * k3 = x^(128+32) mod P and k4 = x^(128-32) mod P, then 128 -> 64 bits with
 * k5 = x^64 mod P, then Barrett reduction with mu = x^64 / P.
 */
#include <rte_common.h>
#include <rte_cpuflags.h>

#include "roce_crc_mb.h"

#if defined(RTE_ARCH_X86)
#include <immintrin.h>

#define TARGET __attribute__((target("pclmul,sse4.1")))

static const uint64_t k3k4[2] __rte_aligned(16) = { 0x01751997d0, 0x00ccaa009e };
static const uint64_t k5k0[2] __rte_aligned(16) = { 0x0163cd6124, 0 };
static const uint64_t poly[2] __rte_aligned(16) = { 0x01db710641, 0x01f7011641 };

static inline TARGET __m128i
fold16(__m128i x, __m128i k, const uint8_t *next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(hi, lo),
			     _mm_loadu_si128((const __m128i *)next));
}

/* 128 bits of folded state -> the 32-bit CRC register. */
static inline TARGET uint32_t
reduce(__m128i x1)
{
	const __m128i mask = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i x0 = _mm_load_si128((const __m128i *)k3k4);
	__m128i x2;

	/* 128 -> 64 bits */
	x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
	x1 = _mm_srli_si128(x1, 8);
	x1 = _mm_xor_si128(x1, x2);
	x0 = _mm_loadl_epi64((const __m128i *)k5k0);
	x2 = _mm_srli_si128(x1, 4);
	x1 = _mm_and_si128(x1, mask);
	x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	/* Barrett: 64 -> 32 bits */
	x0 = _mm_load_si128((const __m128i *)poly);
	x2 = _mm_and_si128(x1, mask);
	x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
	x2 = _mm_and_si128(x2, mask);
	x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	return (uint32_t)_mm_extract_epi32(x1, 1);
}

/* Block j of a lane: the first MWP_CRC_MB_HEAD from its head, the rest
 * from its tail. */
static inline const uint8_t *
block(const struct mwp_crc_lane *l, uint16_t j)
{
	return j < MWP_CRC_MB_HEAD ? l->head + 16 * j :
				     l->tail + 16 * (j - MWP_CRC_MB_HEAD);
}

static TARGET uint32_t
crc_one(const struct mwp_crc_lane *l)
{
	const __m128i k = _mm_load_si128((const __m128i *)k3k4);
	__m128i x = _mm_loadu_si128((const __m128i *)l->head);

	for (uint16_t j = 1; j < l->nblocks; j++)
		x = fold16(x, k, block(l, j));
	return reduce(x);
}

/* Four lanes; the common length in lock step, the rest one by one. */
static TARGET void
crc_four(const struct mwp_crc_lane *l, uint32_t *crc)
{
	const __m128i k = _mm_load_si128((const __m128i *)k3k4);
	__m128i x0 = _mm_loadu_si128((const __m128i *)l[0].head);
	__m128i x1 = _mm_loadu_si128((const __m128i *)l[1].head);
	__m128i x2 = _mm_loadu_si128((const __m128i *)l[2].head);
	__m128i x3 = _mm_loadu_si128((const __m128i *)l[3].head);
	const uint16_t common = RTE_MIN(RTE_MIN(l[0].nblocks, l[1].nblocks),
					RTE_MIN(l[2].nblocks, l[3].nblocks));
	const uint16_t in_head = RTE_MIN(common, (uint16_t)MWP_CRC_MB_HEAD);
	uint16_t j;

	for (j = 1; j < in_head; j++) {
		x0 = fold16(x0, k, l[0].head + 16 * j);
		x1 = fold16(x1, k, l[1].head + 16 * j);
		x2 = fold16(x2, k, l[2].head + 16 * j);
		x3 = fold16(x3, k, l[3].head + 16 * j);
	}
	for (; j < common; j++) {
		const uint16_t t = 16 * (j - MWP_CRC_MB_HEAD);

		x0 = fold16(x0, k, l[0].tail + t);
		x1 = fold16(x1, k, l[1].tail + t);
		x2 = fold16(x2, k, l[2].tail + t);
		x3 = fold16(x3, k, l[3].tail + t);
	}
	for (uint16_t i = j; i < l[0].nblocks; i++)
		x0 = fold16(x0, k, block(&l[0], i));
	for (uint16_t i = j; i < l[1].nblocks; i++)
		x1 = fold16(x1, k, block(&l[1], i));
	for (uint16_t i = j; i < l[2].nblocks; i++)
		x2 = fold16(x2, k, block(&l[2], i));
	for (uint16_t i = j; i < l[3].nblocks; i++)
		x3 = fold16(x3, k, block(&l[3], i));
	crc[0] = reduce(x0);
	crc[1] = reduce(x1);
	crc[2] = reduce(x2);
	crc[3] = reduce(x3);
}

#define TARGET256 __attribute__((target("vpclmulqdq,avx2,pclmul,sse4.1")))

static inline TARGET256 __m256i
fold16x2(__m256i x, __m256i k, const uint8_t *lo, const uint8_t *hi)
{
	__m256i a = _mm256_clmulepi64_epi128(x, k, 0x00);
	__m256i b = _mm256_clmulepi64_epi128(x, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_loadu2_m128i(
		(const __m128i *)hi, (const __m128i *)lo));
}

/* Eight lanes, two to a 256-bit register (VPCLMULQDQ): the common
 * length in lock step, the rest of each lane alone. */
static TARGET256 void
crc_eight(const struct mwp_crc_lane *l, uint32_t *crc)
{
	const __m256i k = _mm256_broadcastsi128_si256(
		_mm_load_si128((const __m128i *)k3k4));
	const __m128i k1 = _mm_load_si128((const __m128i *)k3k4);
	__m256i y[4];
	uint16_t common = l[0].nblocks;
	uint16_t j;

	for (int i = 1; i < 8; i++)
		common = RTE_MIN(common, l[i].nblocks);
	for (int i = 0; i < 4; i++)
		y[i] = _mm256_loadu2_m128i((const __m128i *)l[2 * i + 1].head,
					   (const __m128i *)l[2 * i].head);
	for (j = 1; j < RTE_MIN(common, (uint16_t)MWP_CRC_MB_HEAD); j++)
		for (int i = 0; i < 4; i++)
			y[i] = fold16x2(y[i], k, l[2 * i].head + 16 * j,
					l[2 * i + 1].head + 16 * j);
	for (; j < common; j++) {
		const uint32_t t = 16u * (j - MWP_CRC_MB_HEAD);

		for (int i = 0; i < 4; i++)
			y[i] = fold16x2(y[i], k, l[2 * i].tail + t, l[2 * i + 1].tail + t);
	}
	for (int i = 0; i < 8; i++) {
		__m128i x = i & 1 ? _mm256_extracti128_si256(y[i / 2], 1) :
				    _mm256_castsi256_si128(y[i / 2]);

		for (uint16_t b = j; b < l[i].nblocks; b++)
			x = fold16(x, k1, block(&l[i], b));
		crc[i] = reduce(x);
	}
}

static bool has_vpclmul;

bool
mwp_crc32_mb_available(void)
{
	has_vpclmul = rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0;
	return rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
	       rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
}

void
mwp_crc32_mb(const struct mwp_crc_lane *lanes, uint32_t *crc, unsigned int n)
{
	unsigned int i = 0;

	if (has_vpclmul)
		for (; i + 8 <= n; i += 8)
			crc_eight(&lanes[i], &crc[i]);
	for (; i + 4 <= n; i += 4)
		crc_four(&lanes[i], &crc[i]);
	for (; i < n; i++)
		crc[i] = crc_one(&lanes[i]);
}

#else /* not x86: callers use ISA-L */

bool
mwp_crc32_mb_available(void)
{
	return false;
}

void
mwp_crc32_mb(const struct mwp_crc_lane *lanes, uint32_t *crc, unsigned int n)
{
	RTE_SET_USED(lanes);
	RTE_SET_USED(crc);
	RTE_SET_USED(n);
}

#endif
