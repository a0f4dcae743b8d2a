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
 * for the reflected polynomial 0x104c11db7 (x86 PCLMULQDQ and VPCLMULQDQ;
 * arm64 PMULL, below): fold by 16 bytes with
 * k3 = x^(128+32) mod P and k4 = x^(128-32) mod P, then 128 -> 64 bits with
 * k5 = x^64 mod P, then Barrett reduction with mu = x^64 / P.
 */
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cpuflags.h>

#include "roce_crc_mb.h"

#if defined(RTE_ARCH_X86)
#include <immintrin.h>

#define TARGET __attribute__((target("pclmul,sse4.1")))

/* The intrinsics of the folds and the reduction, by name, for one lane in
 * an SSE register (OP128) and two in an AVX2 one (OP256, below): FOLD and
 * REDUCE are written once for both. */
#define OP128_clmul	_mm_clmulepi64_si128
#define OP128_xor	_mm_xor_si128
#define OP128_and	_mm_and_si128
#define OP128_srli	_mm_srli_si128
#define OP128(name)	OP128_##name

static const uint64_t k3k4[2] __rte_aligned(16) = { 0x01751997d0, 0x00ccaa009e };
static const uint64_t k5k0[2] __rte_aligned(16) = { 0x0163cd6124, 0 };
static const uint64_t poly[2] __rte_aligned(16) = { 0x01db710641, 0x01f7011641 };

/* One lane's 128 bits of state, and the fold constants k3, k4. */
typedef __m128i crc_vec;

static inline TARGET crc_vec
load_k(void)
{
	return _mm_load_si128((const __m128i *)k3k4);
}

static inline TARGET __m128i
load_raw(const struct mwp_crc_lane *l, uint16_t j)
{
	return _mm_loadu_si128((const __m128i *)(l->base + 16 * j));
}

/* Block j of a lane: a load, masked where the lane says so. */
static inline TARGET __m128i
load_block(const struct mwp_crc_lane *l, uint16_t j)
{
	__m128i v = load_raw(l, j);

	if (l->mask != NULL && j < MWP_CRC_MB_MASKED)
		v = _mm_or_si128(_mm_and_si128(v, _mm_load_si128(
					(const __m128i *)l->mask->and_[j])),
				 _mm_load_si128((const __m128i *)l->mask->or_[j]));
	return v;
}

/* One fold step: the state times k (low and high halves of each 128-bit
 * lane, carry-less), plus the next block. */
#define FOLD(OP, x, k, next) OP(xor)(OP(xor)(OP(clmul)(x, k, 0x00), OP(clmul)(x, k, 0x11)), next)

static inline TARGET __m128i
fold16(__m128i x, __m128i k, __m128i next)
{
	return FOLD(OP128, x, k, next);
}

/*
 * 128 bits of folded state in each 128-bit lane of x -> the 32-bit CRC
 * register in bits 32..63 of the lane: 128 -> 64 bits, then Barrett's
 * 64 -> 32.  Written once, for one lane in an SSE register (reduce) and
 * two in an AVX2 one (reduce2, half the instructions of two reduce()s):
 * OP(name) is the width's intrinsic, and k34, k50, p the constants as
 * vectors of the width.
 */
#define REDUCE(x, OP, mask, k34, k50, p) do {			\
	__typeof__(x) t_;					\
								\
	t_ = OP(clmul)(x, k34, 0x10);				\
	x = OP(xor)(OP(srli)(x, 8), t_);			\
	t_ = OP(srli)(x, 4);					\
	x = OP(xor)(OP(clmul)(OP(and)(x, mask), k50, 0x00), t_);	\
	t_ = OP(clmul)(OP(and)(x, mask), p, 0x10);		\
	t_ = OP(clmul)(OP(and)(t_, mask), p, 0x00);		\
	x = OP(xor)(x, t_);					\
} while (0)

static inline TARGET uint32_t
reduce(__m128i x)
{
	const __m128i mask = _mm_setr_epi32(~0, 0, ~0, 0);

	REDUCE(x, OP128, mask, _mm_load_si128((const __m128i *)k3k4),
	       _mm_load_si128((const __m128i *)k5k0), _mm_load_si128((const __m128i *)poly));
	return (uint32_t)_mm_extract_epi32(x, 1);
}

#elif defined(RTE_ARCH_ARM64)
/*
 * The same folds with PMULL (the ARMv8 crypto extension), chosen at run
 * time: Debian's arm64 DPDK baseline is armv8-a+crc, without crypto, and
 * a Cortex-A72 without it exists.  vmull_p64 multiplies the low halves
 * (PCLMULQDQ 0x00), vmull_high_p64 the high ones (0x11).  Four lanes in
 * lock step hide PMULL's latency; NEON's 32 registers hold them and the
 * constants.
 */
#include <arm_neon.h>
#include <sys/auxv.h>

#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1 << 4)
#endif

#define TARGET __attribute__((target("+crypto")))

static const uint64_t k3k4[2] __rte_aligned(16) = { 0x01751997d0, 0x00ccaa009e };
#define K5 UINT64_C(0x0163cd6124)
#define POLY UINT64_C(0x01db710641)	/* P */
#define MU UINT64_C(0x01f7011641)	/* x^64 / P */

/* One lane's 128 bits of state, and the fold constants k3, k4. */
typedef uint64x2_t crc_vec;

static inline TARGET crc_vec
load_k(void)
{
	return vld1q_u64(k3k4);
}

static inline TARGET uint64x2_t
clmul(uint64_t a, uint64_t b)
{
	return vreinterpretq_u64_p128(vmull_p64((poly64_t)a, (poly64_t)b));
}

static inline TARGET uint64x2_t
load_raw(const struct mwp_crc_lane *l, uint16_t j)
{
	return vreinterpretq_u64_u8(vld1q_u8(l->base + 16 * j));
}

/* Block j of a lane: a load, masked where the lane says so. */
static inline TARGET uint64x2_t
load_block(const struct mwp_crc_lane *l, uint16_t j)
{
	uint64x2_t v = load_raw(l, j);

	if (l->mask != NULL && j < MWP_CRC_MB_MASKED)
		v = vorrq_u64(vandq_u64(v, vreinterpretq_u64_u8(vld1q_u8(l->mask->and_[j]))),
			      vreinterpretq_u64_u8(vld1q_u8(l->mask->or_[j])));
	return v;
}

static inline TARGET uint64x2_t
fold16(uint64x2_t x, uint64x2_t k, uint64x2_t next)
{
	uint64x2_t lo = clmul(vgetq_lane_u64(x, 0), vgetq_lane_u64(k, 0));
	uint64x2_t hi = vreinterpretq_u64_p128(vmull_high_p64(vreinterpretq_p64_u64(x),
							      vreinterpretq_p64_u64(k)));

	return veorq_u64(veorq_u64(hi, lo), next);
}

/* 128 bits of folded state -> the 32-bit CRC register: the x86 reduce()
 * step by step, with the multiplications that read only the low 32 bits
 * of a lane given those bits alone. */
static inline TARGET uint32_t
reduce(uint64x2_t x1)
{
	const uint64x2_t zero = vdupq_n_u64(0);
	uint64x2_t x2;
	uint64_t t;

	/* 128 -> 64 bits */
	x2 = clmul(vgetq_lane_u64(x1, 0), k3k4[1]);
	x1 = vreinterpretq_u64_u8(vextq_u8(vreinterpretq_u8_u64(x1),
					   vreinterpretq_u8_u64(zero), 8));
	x1 = veorq_u64(x1, x2);
	x2 = vreinterpretq_u64_u8(vextq_u8(vreinterpretq_u8_u64(x1),
					   vreinterpretq_u8_u64(zero), 4));
	x1 = clmul(vgetq_lane_u64(x1, 0) & UINT32_MAX, K5);
	x1 = veorq_u64(x1, x2);
	/* Barrett: 64 -> 32 bits */
	t = vgetq_lane_u64(clmul(vgetq_lane_u64(x1, 0) & UINT32_MAX, MU), 0);
	x1 = veorq_u64(x1, clmul(t & UINT32_MAX, POLY));
	return vgetq_lane_u32(vreinterpretq_u32_u64(x1), 1);
}

#endif

#if defined(RTE_ARCH_X86) || defined(RTE_ARCH_ARM64)

/*
 * Either ISA, from its load_k, load_raw, load_block, fold16 and reduce:
 * one lane alone, and four in lock step.
 */

/* Fold blocks [from, nblocks) of one lane into x. */
static inline TARGET crc_vec
fold_rest(crc_vec x, crc_vec k, const struct mwp_crc_lane *l, uint16_t from)
{
	for (uint16_t j = from; j < l->nblocks; j++)
		x = fold16(x, k, load_block(l, j));
	return x;
}

static TARGET uint32_t
crc_one(const struct mwp_crc_lane *l)
{
	return reduce(fold_rest(load_block(l, 0), load_k(), l, 1));
}

/* Four lanes; the common length in lock step, the rest one by one.  The
 * loops over the lanes are unrolled, so that x[] stays in registers: each
 * fold depends on the one before in its lane, and a trip through memory
 * would add a store-forwarding delay to every step. */
static TARGET void
crc_four(const struct mwp_crc_lane *l, uint32_t *crc)
{
	const crc_vec k = load_k();
	crc_vec x[4];
	uint16_t common = l[0].nblocks, j;

	for (int i = 1; i < 4; i++)
		common = RTE_MIN(common, l[i].nblocks);
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		x[i] = load_block(&l[i], 0);
	for (j = 1; j < RTE_MIN(common, (uint16_t)MWP_CRC_MB_MASKED); j++)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			x[i] = fold16(x[i], k, load_block(&l[i], j));
	for (; j < common; j++)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			x[i] = fold16(x[i], k, load_raw(&l[i], j));
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		crc[i] = reduce(fold_rest(x[i], k, &l[i], j));
}

#endif

#if defined(RTE_ARCH_X86)

/* x86 with VPCLMULQDQ: eight lanes, two to a 256-bit register. */
#define TARGET256 __attribute__((target("vpclmulqdq,avx2,pclmul,sse4.1")))

#define OP256_clmul	_mm256_clmulepi64_epi128
#define OP256_xor	_mm256_xor_si256
#define OP256_and	_mm256_and_si256
#define OP256_srli	_mm256_srli_si256
#define OP256(name)	OP256_##name

/* 16 aligned bytes in both halves. */
static inline TARGET256 __m256i
load2(const void *c)
{
	return _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)c));
}


/* Block j of lanes a (low half) and b (high half). */
static inline TARGET256 __m256i
load_block2(const struct mwp_crc_lane *a, const struct mwp_crc_lane *b, uint16_t j)
{
	return _mm256_set_m128i(load_block(b, j), load_block(a, j));
}

static inline TARGET256 __m256i
fold16x2(__m256i x, __m256i k, __m256i next)
{
	return FOLD(OP256, x, k, next);
}

/* 2 x 128 bits of folded state -> the CRC registers of both lanes. */
static inline TARGET256 void
reduce2(__m256i x, uint32_t *lo, uint32_t *hi)
{
	const __m256i mask = _mm256_setr_epi32(~0, 0, ~0, 0, ~0, 0, ~0, 0);

	REDUCE(x, OP256, mask, load2(k3k4), load2(k5k0), load2(poly));
	*lo = (uint32_t)_mm256_extract_epi32(x, 1);
	*hi = (uint32_t)_mm256_extract_epi32(x, 5);
}

static inline TARGET256 __m256i
load_raw2(const struct mwp_crc_lane *a, const struct mwp_crc_lane *b, uint16_t j)
{
	return _mm256_loadu2_m128i((const __m128i *)(b->base + 16 * j),
				   (const __m128i *)(a->base + 16 * j));
}

/* Block j of lanes a and b, forced through mask block j. */
static inline TARGET256 __m256i
load_masked2(const struct mwp_crc_lane *a, const struct mwp_crc_lane *b, uint16_t j,
	     const struct mwp_crc_mask *mk)
{
	return _mm256_or_si256(_mm256_and_si256(load_raw2(a, b, j), load2(mk->and_[j])),
			       load2(mk->or_[j]));
}

/* Eight lanes of the same length and mask (the usual burst: frames of one
 * shape): only the blocks that have something to mask are masked, with
 * one load of each mask block for all lanes (none without a mask). */
static TARGET256 void
crc_eight_alike(const struct mwp_crc_lane *l, uint32_t *crc)
{
	const __m256i k = load2(k3k4);
	const struct mwp_crc_mask *mk = l[0].mask;
	const uint16_t nb = l[0].nblocks;
	const uint16_t nm = mk != NULL ? RTE_MIN(nb, (uint16_t)mk->nblocks) : 0;
	__m256i y[4];
	uint16_t j;

#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		y[i] = nm != 0 ? load_masked2(&l[2 * i], &l[2 * i + 1], 0, mk) :
				 load_raw2(&l[2 * i], &l[2 * i + 1], 0);
	for (j = 1; j < nm; j++)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			y[i] = fold16x2(y[i], k, load_masked2(&l[2 * i], &l[2 * i + 1], j, mk));
	for (; j < nb; j++)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			y[i] = fold16x2(y[i], k, load_raw2(&l[2 * i], &l[2 * i + 1], j));
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		reduce2(y[i], &crc[2 * i], &crc[2 * i + 1]);
}

/* Eight lanes, two to a 256-bit register (VPCLMULQDQ): the common
 * length in lock step, the rest of each lane alone.  The loops over the
 * four registers are unrolled, so that y[] stays in registers: each fold
 * depends on the one before in its lane, and a trip through memory would
 * add a store-forwarding delay to every step. */
static TARGET256 void
crc_eight(const struct mwp_crc_lane *l, uint32_t *crc)
{
	const __m256i k = load2(k3k4);
	const crc_vec k1 = load_k();
	__m256i y[4];
	uint16_t common = l[0].nblocks, j;
	bool alike = true;

	for (int i = 1; i < 8; i++) {
		alike &= l[i].nblocks == common && l[i].mask == l[0].mask;
		common = RTE_MIN(common, l[i].nblocks);
	}
	if (likely(alike)) {
		/* the usual burst: frames of one shape, one mask for all */
		crc_eight_alike(l, crc);
		return;
	}
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		y[i] = load_block2(&l[2 * i], &l[2 * i + 1], 0);
	for (j = 1; j < RTE_MIN(common, (uint16_t)MWP_CRC_MB_MASKED); j++)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			y[i] = fold16x2(y[i], k, load_block2(&l[2 * i], &l[2 * i + 1], j));
	for (; j < common; j++)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			y[i] = fold16x2(y[i], k, load_raw2(&l[2 * i], &l[2 * i + 1], j));
	/* the longer lanes finish alone */
	for (int i = 0; i < 8; i++) {
		__m128i x = i & 1 ? _mm256_extracti128_si256(y[i / 2], 1) :
				    _mm256_castsi256_si128(y[i / 2]);

		crc[i] = reduce(fold_rest(x, k1, &l[i], j));
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

/* Lanes taken eight at a time, where the CPU has VPCLMULQDQ: how many. */
static unsigned int
crc_wide(const struct mwp_crc_lane *lanes, uint32_t *crc, unsigned int n)
{
	unsigned int i = 0;

	if (has_vpclmul)
		for (; i + 8 <= n; i += 8)
			crc_eight(&lanes[i], &crc[i]);
	return i;
}

#elif defined(RTE_ARCH_ARM64)

bool
mwp_crc32_mb_available(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_PMULL) != 0;
}

/* PMULL has no wider form: four lanes at a time at most. */
static inline unsigned int
crc_wide(const struct mwp_crc_lane *lanes, uint32_t *crc, unsigned int n)
{
	RTE_SET_USED(lanes);
	RTE_SET_USED(crc);
	RTE_SET_USED(n);
	return 0;
}

#endif

#if defined(RTE_ARCH_X86) || defined(RTE_ARCH_ARM64)

void
mwp_crc32_mb(const struct mwp_crc_lane *lanes, uint32_t *crc, unsigned int n)
{
	unsigned int i = crc_wide(lanes, crc, n);

	for (; i + 4 <= n; i += 4)
		crc_four(&lanes[i], &crc[i]);
	for (; i < n; i++)
		crc[i] = crc_one(&lanes[i]);
}

#else /* neither x86 nor arm64: callers use ISA-L */

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
