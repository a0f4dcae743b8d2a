/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU-specific fast paths against the portable ones, on whichever CPU
 * runs the test (x86-64 natively; arm64 under qemu-aarch64 in
 * test/run-all.sh's aarch64 stage):
 *
 * - the multi-buffer CRC (x86 PCLMULQDQ/VPCLMULQDQ, arm64 PMULL) against
 *   zlib, on lanes of any count, length and mask;
 * - the burst ICRC with the multi-buffer CRC and with the one-at-a-time
 *   path the library falls back to on a CPU without it (ISA-L), frame by
 *   frame the same;
 * - that fallback is chosen from what the CPU reports (CPUID, AT_HWCAP);
 * - the R_Key hash (the CRC32-C instruction where the build has it)
 *   against DPDK's table-driven CRC32-C and a bitwise one.
 *
 * MWP_EXPECT_FAST=1 in the environment makes a CPU without the fast paths
 * a failure rather than a skip, so that a run meant to test them (qemu
 * -cpu max) cannot pass without them.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <rte_cpuflags.h>
#include <rte_hash_crc.h>
#if defined(RTE_ARCH_ARM64)
#include <sys/auxv.h>
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1 << 4)
#endif
#endif

#include "rkey_tbl.h"
#include "roce_crc_mb.h"
#include "roce_icrc_burst.h"
#include "test_frames.h"

static bool
expect_fast(void)
{
	const char *e = getenv("MWP_EXPECT_FAST");

	return e != NULL && strcmp(e, "1") == 0;
}

/* What the CPU says it has, asked here independently of the library. */
static bool
cpu_has_clmul(void)
{
#if defined(RTE_ARCH_X86)
	return rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
	       rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
#elif defined(RTE_ARCH_ARM64)
	return (getauxval(AT_HWCAP) & HWCAP_PMULL) != 0;
#else
	return false;
#endif
}

static void
need_mb(void)
{
	if (mwp_crc32_mb_available())
		return;
	if (expect_fast())
		cr_assert_fail("MWP_EXPECT_FAST=1 but no multi-buffer CRC on this CPU");
	cr_skip_test("no carry-less multiply on this CPU");
}

Test(fastpath, multi_buffer_crc_is_chosen_from_the_cpu)
{
	cr_log_info("multi-buffer CRC: %s",
		    mwp_crc32_mb_available() ? "yes" : "no, ISA-L one at a time");
	cr_assert_eq(mwp_crc32_mb_available(), cpu_has_clmul());
	/* the burst paths follow the same answer, taken at load */
	cr_assert_eq(mwp_icrc_mb_ok, cpu_has_clmul());
	if (expect_fast())
		cr_assert(mwp_icrc_mb_ok, "MWP_EXPECT_FAST=1: the CPU should have it");
}

/* Random lanes, masked and not, every count from 1 to 40 (the groups of
 * eight and four and the single tail of each ISA), against zlib over the
 * masked bytes. */
Test(fastpath, multi_buffer_crc_matches_zlib_with_masks)
{
	static uint8_t data[40][16 * 24];
	static struct mwp_crc_mask mk[3];
	struct mwp_crc_lane lane[40];
	uint32_t crc[40];

	need_mb();
	srand(11);
	for (int m = 0; m < 3; m++) {
		for (int b = 0; b < MWP_CRC_MB_MASKED; b++)
			for (int k = 0; k < 16; k++) {
				mk[m].and_[b][k] = rand() % 3 ? 0xff : (uint8_t)rand();
				mk[m].or_[b][k] = rand() % 3 ? 0 : (uint8_t)rand();
			}
		mk[m].nblocks = (uint8_t)(1 + m * 2);
		/* blocks past nblocks load as they are */
		for (int b = mk[m].nblocks; b < MWP_CRC_MB_MASKED; b++) {
			memset(mk[m].and_[b], 0xff, 16);
			memset(mk[m].or_[b], 0, 16);
		}
	}
	for (unsigned int n = 1; n <= 40; n++) {
		/* odd rounds: all lanes of one shape (x86's eight-alike path) */
		for (int alike = 0; alike < 2; alike++) {
			const uint16_t nb0 = (uint16_t)(1 + rand() % 24);
			const int m0 = rand() % 4;

			for (unsigned int i = 0; i < n; i++) {
				const int m = alike ? m0 : rand() % 4;

				lane[i].nblocks = alike ? nb0 : (uint16_t)(1 + rand() % 24);
				lane[i].mask = m < 3 ? &mk[m] : NULL;
				lane[i].base = data[i];
				for (int k = 0; k < 16 * lane[i].nblocks; k++)
					data[i][k] = (uint8_t)rand();
			}
			mwp_crc32_mb(lane, crc, n);
			for (unsigned int i = 0; i < n; i++) {
				uint8_t tmp[16 * 24];
				const uint32_t len = 16u * lane[i].nblocks;

				memcpy(tmp, data[i], len);
				if (lane[i].mask != NULL)
					for (uint32_t k = 0; k < len && k < 16 * MWP_CRC_MB_MASKED; k++)
						tmp[k] = (tmp[k] & lane[i].mask->and_[k / 16][k % 16]) |
							 lane[i].mask->or_[k / 16][k % 16];
				/* zlib starts from ~0 and inverts */
				for (int k = 0; k < 4; k++)
					tmp[k] ^= 0xff;
				cr_assert_eq(~crc[i], (uint32_t)crc32(0, tmp, len),
					     "%u lanes%s, lane %u: %u blocks, mask %s", n,
					     alike ? " alike" : "", i, lane[i].nblocks,
					     lane[i].mask ? "yes" : "no");
			}
		}
	}
}

/* A burst of frames (rx-like, with headroom; IPv4 and IPv6; lengths the
 * multi-buffer path takes and a chained one it does not; a few damaged),
 * filled and verified once with the multi-buffer CRC and once on the
 * one-at-a-time path a CPU without it takes: the same trailers, the same
 * verdicts, and those of mwp_icrc_compute. */
Test(fastpath, burst_icrc_fallback_agrees_with_the_fast_path)
{
	enum { N = 48 };
	static struct tframe f[N];
	struct rte_mbuf *pk[N];
	struct mwp_pkt p[N];
	enum mwp_drop why[2][N];
	uint32_t trailer[2][N];
	const bool had = mwp_icrc_mb_ok;

	need_mb();
	for (int round = 0; round < 6; round++) {
		for (int i = 0; i < N; i++) {
			pk[i] = build_frame(&f[i], ROCE_OP_RC_RDMA_WRITE_ONLY,
					    (uint32_t)(round * 211 + i * 29) % 1500,
					    (i + round) & 1, i % 7 == 0, &p[i]);
			memmove(f[i].data + 64, f[i].data, pk[i]->data_len);
			pk[i]->data_off = 64;
		}
		for (int path = 0; path < 2; path++) {
			mwp_icrc_mb_ok = path == 0;	/* 1: as on a CPU without it */
			for (int i = 0; i < N; i++)
				memset(rte_pktmbuf_mtod_offset(pk[i], uint8_t *, p[i].icrc_off),
				       0, 4);
			mwp_icrc_fill_burst(pk, p, N);
			for (int i = 0; i < N; i++) {
				trailer[path][i] = mwp_icrc_read(pk[i], &p[i]);
				cr_assert_eq(trailer[path][i], mwp_icrc_compute(pk[i], &p[i]),
					     "round %d frame %d path %d", round, i, path);
				/* damage some: payload, trailer, a header byte */
				if ((i + round) % 5 == 1)
					rte_pktmbuf_mtod(pk[i], uint8_t *)[p[i].icrc_off -
						1 - (uint32_t)i % 3] ^= 0x20;
				why[path][i] = i % 11 == 4 ? MWP_DROP_NOT_IP : MWP_DROP_NONE;
			}
			mwp_icrc_verify_burst(pk, p, why[path], N);
			/* undo the damage for the other path */
			for (int i = 0; i < N; i++)
				if ((i + round) % 5 == 1)
					rte_pktmbuf_mtod(pk[i], uint8_t *)[p[i].icrc_off -
						1 - (uint32_t)i % 3] ^= 0x20;
		}
		mwp_icrc_mb_ok = had;
		for (int i = 0; i < N; i++) {
			const bool bad = (i + round) % 5 == 1 && i % 11 != 4;

			cr_assert_eq(trailer[0][i], trailer[1][i], "round %d frame %d", round, i);
			cr_assert_eq(why[0][i], why[1][i], "round %d frame %d", round, i);
			cr_assert_eq(why[0][i] == MWP_DROP_BAD_ICRC, bad, "round %d frame %d",
				     round, i);
		}
	}
}

/* CRC32-C of one little-endian word, bit by bit (Castagnoli, reflected
 * 0x82f63b78), starting from 0 and not inverted: rte_hash_crc_4byte's
 * definition. */
static uint32_t
crc32c_bitwise(uint32_t data, uint32_t crc)
{
	crc ^= data;
	for (int b = 0; b < 32; b++)
		crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	return crc;
}

Test(fastpath, rkey_hash_matches_portable_crc32c)
{
	const uint32_t edge[] = { 0, 1, 0x80000000u, UINT32_MAX, 0x00abcd01, 0x12345678 };
	uint64_t x = 0x9e3779b97f4a7c15ull;

#if defined(__SSE4_2__)
	cr_log_info("mwp_keys_sig: SSE4.2 crc32 instruction");
#elif defined(RTE_ARCH_ARM64) && defined(__ARM_FEATURE_CRC32)
	cr_log_info("mwp_keys_sig: ARMv8 crc32cw instruction");
#else
	cr_log_info("mwp_keys_sig: rte_hash_crc_4byte (dispatched)");
	if (expect_fast())
		cr_assert_fail("MWP_EXPECT_FAST=1 but this build has no CRC32-C instruction");
#endif
	for (size_t i = 0; i < RTE_DIM(edge); i++) {
		cr_assert_eq(mwp_keys_sig(edge[i]), crc32c_1word(edge[i], 0), "%#x", edge[i]);
		cr_assert_eq(mwp_keys_sig(edge[i]), crc32c_bitwise(edge[i], 0), "%#x", edge[i]);
	}
	for (int i = 0; i < 200000; i++) {
		const uint32_t k = (uint32_t)(x >> 32);

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (mwp_keys_sig(k) != crc32c_1word(k, 0))
			cr_assert_fail("key %#x: %#x, table-driven CRC32-C %#x", k, mwp_keys_sig(k),
				 crc32c_1word(k, 0));
		if (i % 64 == 0)
			cr_assert_eq(mwp_keys_sig(k), crc32c_bitwise(k, 0), "key %#x", k);
	}
}
