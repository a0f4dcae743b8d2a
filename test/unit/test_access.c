/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-windows.md section 3: the access decision, for every row that
 * concerns keys and bounds, on descriptors made by real binds and on
 * hand-made ones for edges binds cannot produce.
 */
#include <inttypes.h>

#include "verbs_fixture.h"

TestSuite(access, .init = verbs_setup, .fini = verbs_teardown);

#define R IBV_ACCESS_REMOTE_READ
#define W IBV_ACCESS_REMOTE_WRITE
#define A IBV_ACCESS_REMOTE_ATOMIC

static enum mwp_deny
check(uint32_t rkey, uint32_t acc, uint64_t va, uint64_t len, struct ibv_qp *q,
      uint8_t **addr)
{
	struct mwp_access_req r = {
		.rkey = rkey, .access = acc, .va = va, .len = len,
		.pd = q->pd->handle, .qpn = q->qp_num,
	};
	uint8_t *dummy;

	return mwp_access_check(resolve(rkey), &r, addr ? addr : &dummy);
}

/* A Type 2 window on [buf + 100, buf + 300). */
static uint32_t
window2(unsigned int access, bool zb)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf + 100, 200,
				access | (zb ? IBV_ACCESS_ZERO_BASED : 0), 0x5c, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	return w->rkey;
}

Test(access, each_access_flag_alone_and_combined)
{
	static const unsigned int grants[] = { 0, R, W, A, R | W, R | A, W | A, R | W | A };
	static const unsigned int asks[] = { R, W, A };

	for (size_t g = 0; g < RTE_DIM(grants); g++) {
		uint32_t k = window2(grants[g], false);

		for (size_t a = 0; a < RTE_DIM(asks); a++) {
			enum mwp_deny d = check(k, asks[a], (uintptr_t)buf + 104, 8, qp, NULL);
			bool want = (grants[g] & asks[a]) != 0;

			cr_expect_eq(d == MWP_DENY_NONE, want, "grant %#x ask %#x: %s",
				     grants[g], asks[a], mwp_deny_name(d));
			if (!want)
				cr_expect_eq(d, MWP_DENY_ACCESS);
		}
	}
}

Test(access, the_window_rights_govern_not_the_region)
{
	/* the region allows everything, the window only reading */
	uint32_t k = window2(R, false);

	cr_expect_eq(check(k, W, (uintptr_t)buf + 100, 8, qp, NULL), MWP_DENY_ACCESS);
	cr_expect_eq(mwp_deny_syndrome(MWP_DENY_ACCESS), 0x62);
}

Test(access, window_bounds_one_byte_inside_and_outside_each_edge)
{
	uint32_t k = window2(R | W, false);
	uint64_t s = (uintptr_t)buf + 100, e = s + 200;
	uint8_t *addr;

	cr_expect_eq(check(k, R, s, 200, qp, &addr), MWP_DENY_NONE);
	cr_expect_eq(addr, buf + 100);
	cr_expect_eq(check(k, R, s, 1, qp, NULL), MWP_DENY_NONE);
	cr_expect_eq(check(k, R, e - 1, 1, qp, &addr), MWP_DENY_NONE);
	cr_expect_eq(addr, buf + 299);
	cr_expect_eq(check(k, R, s - 1, 1, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, R, s - 1, 201, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, R, e, 1, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, R, s, 201, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, W, s + 1, 200, qp, NULL), MWP_DENY_BOUNDS);
	/* inside the region but outside the window: rxe checks only the MR */
	cr_expect_eq(check(k, R, (uintptr_t)buf, 8, qp, NULL), MWP_DENY_BOUNDS);
}

Test(access, region_bounds_one_byte_inside_and_outside_each_edge)
{
	uint64_t s = (uintptr_t)buf, e = s + BUF_LEN;

	cr_expect_eq(check(mr->rkey, R, s, BUF_LEN, qp, NULL), MWP_DENY_NONE);
	cr_expect_eq(check(mr->rkey, R, e - 1, 1, qp, NULL), MWP_DENY_NONE);
	cr_expect_eq(check(mr->rkey, R, s - 1, 1, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(mr->rkey, R, e, 1, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(mr->rkey, R, s, BUF_LEN + 1, qp, NULL), MWP_DENY_BOUNDS);
}

Test(access, a_window_reaching_past_its_region_is_refused_by_the_region_check)
{
	/* binds never make one; the decision checks the region anyway */
	struct mwp_binding b = {
		.rkey = 0x80000101, .kind = MWP_KEY_MW1, .access = R, .pd = 7,
		.va = 0x1000, .length = 512, .host = buf + 100, .mr_host = buf,
		.mr_length = 256,
	};
	struct mwp_access_req r = { .rkey = b.rkey, .access = R, .va = 0x1000,
				    .len = 156, .pd = 7 };
	uint8_t *addr;

	cr_expect_eq(mwp_access_check(&b, &r, &addr), MWP_DENY_NONE);
	r.len = 157;
	cr_expect_eq(mwp_access_check(&b, &r, &addr), MWP_DENY_MR_BOUNDS);
}

Test(access, va_plus_length_wrapping_past_2_64_is_refused)
{
	struct ibv_mr *m = mwp_reg_mr_iova(pd, buf, 4096, UINT64_MAX - 4095, ALL_ACCESS);
	uint32_t k = window2(R, false);

	cr_assert_not_null(m);
	cr_expect_eq(check(m->rkey, R, UINT64_MAX - 15, 16, qp, NULL), MWP_DENY_NONE);
	cr_expect_eq(check(m->rkey, R, UINT64_MAX - 15, 17, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(m->rkey, R, UINT64_MAX, 2, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, R, UINT64_MAX - 3, 8, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, R, (uintptr_t)buf + 150, UINT64_C(1) << 31, qp, NULL),
		     MWP_DENY_BOUNDS);
}

Test(access, zero_based_offsets)
{
	uint32_t k = window2(R | W | A, true);
	uint8_t *addr;

	cr_expect_eq(check(k, R, 0, 200, qp, &addr), MWP_DENY_NONE);
	cr_expect_eq(addr, buf + 100, "effective address = window start + va");
	cr_expect_eq(check(k, W, 199, 1, qp, &addr), MWP_DENY_NONE);
	cr_expect_eq(addr, buf + 299);
	cr_expect_eq(check(k, R, 200, 1, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, R, 1, 200, qp, NULL), MWP_DENY_BOUNDS);
	cr_expect_eq(check(k, R, UINT64_MAX, 2, qp, NULL), MWP_DENY_BOUNDS);
	/* a VA-style address is just a huge offset */
	cr_expect_eq(check(k, R, (uintptr_t)buf + 100, 8, qp, NULL), MWP_DENY_BOUNDS);
	/* alignment is of the effective address: the window starts at
	 * buf + 100 (buf is 64-aligned), so offset 4 is aligned, 0 is not */
	cr_expect_eq(check(k, A, 0, 8, qp, NULL), MWP_DENY_UNALIGNED);
	cr_expect_eq(check(k, A, 4, 8, qp, &addr), MWP_DENY_NONE);
	cr_expect_eq(addr, buf + 104);
}

Test(access, type_2b_window_is_usable_only_by_its_qp_o10_37_2_43)
{
	uint32_t k = window2(R, false);

	cr_expect_eq(check(k, R, (uintptr_t)buf + 100, 8, qp, NULL), MWP_DENY_NONE);
	cr_expect_eq(check(k, R, (uintptr_t)buf + 100, 8, qp_b, NULL), MWP_DENY_WRONG_QP);
	cr_expect_eq(mwp_deny_syndrome(MWP_DENY_WRONG_QP), 0x62);
}

Test(access, type1_window_is_usable_by_every_qp_of_its_pd)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, R, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(check(w->rkey, R, (uintptr_t)buf, 8, qp, NULL), MWP_DENY_NONE);
	cr_expect_eq(check(w->rkey, R, (uintptr_t)buf, 8, qp_b, NULL), MWP_DENY_NONE);
}

Test(access, pd_mismatch)
{
	struct ibv_qp *q2 = make_qp(pd2, IBV_QPT_RC, 8, true);

	cr_expect_eq(check(mr->rkey, R, (uintptr_t)buf, 8, q2, NULL), MWP_DENY_PD_MISMATCH);
	cr_expect_eq(check(mr2->rkey, R, (uintptr_t)buf2, 8, q2, NULL), MWP_DENY_NONE);
}

Test(access, wrong_key_byte_and_unknown_key)
{
	uint32_t k = window2(R, false);

	cr_expect_eq(check(k ^ 0x01, R, (uintptr_t)buf + 100, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
	cr_expect_eq(check(k ^ 0x80, R, (uintptr_t)buf + 100, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
	cr_expect_eq(check(0x123456ab, R, (uintptr_t)buf, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
	cr_expect_eq(check(mr->rkey ^ 1, R, (uintptr_t)buf, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
	cr_expect_eq(mwp_deny_syndrome(MWP_DENY_UNKNOWN_KEY), 0x62);
}

Test(access, free_and_unbound_windows_grant_nothing)
{
	struct ibv_mw *w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t k = window2(R, false);

	cr_expect_eq(check(w2->rkey, R, (uintptr_t)buf, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
	cr_expect_eq(check(w1->rkey, R, (uintptr_t)buf, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
	cr_assert_eq(post_local_inv(qp, k, 2, true), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	cr_expect_eq(check(k, R, (uintptr_t)buf + 100, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
}

Test(access, a_zero_length_window_descriptor_is_invalid)
{
	struct mwp_binding b = { .rkey = 5, .kind = MWP_KEY_MW1, .access = R, .pd = 1,
				 .length = 0, .host = buf, .mr_host = buf, .mr_length = 64 };
	struct mwp_access_req r = { .rkey = 5, .access = R, .va = 0, .len = 1, .pd = 1 };
	uint8_t *addr;

	cr_expect_eq(mwp_access_check(&b, &r, &addr), MWP_DENY_INVALID);
}

Test(access, zero_length_read_or_write_with_a_bogus_key_succeeds_c9_88)
{
	uint8_t *addr = (uint8_t *)1;

	cr_expect_eq(check(0xdeadbeef, R, 0, 0, qp, &addr), MWP_DENY_NONE);
	cr_expect_null(addr, "touches nothing");
	cr_expect_eq(check(0xdeadbeef, W, UINT64_MAX, 0, qp, NULL), MWP_DENY_NONE);
	/* an atomic always has a length: its key is checked */
	cr_expect_eq(check(0xdeadbeef, A, 0, 8, qp, NULL), MWP_DENY_UNKNOWN_KEY);
}

Test(access, dma_length_above_2_31_is_invalid_request_c9_94)
{
	cr_expect_eq(check(mr->rkey, R, (uintptr_t)buf, (UINT64_C(1) << 31) + 1, qp, NULL),
		     MWP_DENY_DMA_TOO_LONG);
	cr_expect_eq(mwp_deny_syndrome(MWP_DENY_DMA_TOO_LONG), 0x61);
	/* 2^31 itself is legal: refused only by bounds here */
	cr_expect_eq(check(mr->rkey, R, (uintptr_t)buf, UINT64_C(1) << 31, qp, NULL),
		     MWP_DENY_BOUNDS);
	/* and checked before the key */
	cr_expect_eq(check(0xdeadbeef, R, 0, UINT64_C(1) << 32, qp, NULL),
		     MWP_DENY_DMA_TOO_LONG);
}

Test(access, atomics_must_be_8_byte_aligned_checked_after_the_key)
{
	uint8_t *addr;

	cr_expect_eq(check(mr->rkey, A, (uintptr_t)buf + 8, 8, qp, &addr), MWP_DENY_NONE);
	cr_expect_eq(addr, buf + 8);
	cr_expect_eq(check(mr->rkey, A, (uintptr_t)buf + 4, 8, qp, NULL), MWP_DENY_UNALIGNED);
	cr_expect_eq(mwp_deny_syndrome(MWP_DENY_UNALIGNED), 0x61);
	cr_expect_eq(check(mr->rkey ^ 2, A, (uintptr_t)buf + 4, 8, qp, NULL),
		     MWP_DENY_UNKNOWN_KEY);
	/* the last 8 bytes of the region; one more is out */
	cr_expect_eq(check(mr->rkey, A, (uintptr_t)buf + BUF_LEN - 8, 8, qp, NULL), MWP_DENY_NONE);
	cr_expect_eq(check(mr->rkey, A, (uintptr_t)buf + BUF_LEN, 8, qp, NULL), MWP_DENY_BOUNDS);
}

Test(access, qp_access_flags_come_first)
{
	cr_expect_eq(mwp_qp_access_check(R | W, A), MWP_DENY_QP_ACCESS);
	cr_expect_eq(mwp_qp_access_check(R | W, W), MWP_DENY_NONE);
	cr_expect_eq(mwp_qp_access_check(0, R), MWP_DENY_QP_ACCESS);
	cr_expect_eq(mwp_deny_syndrome(MWP_DENY_QP_ACCESS), 0x61);
}

Test(access, write_payload_must_agree_with_the_dma_length)
{
	/* ONLY */
	cr_expect_eq(mwp_write_len_check(true, true, 100, 100, 1024), MWP_DENY_NONE);
	cr_expect_eq(mwp_write_len_check(true, true, 99, 100, 1024), MWP_DENY_WRITE_LENGTH);
	cr_expect_eq(mwp_write_len_check(true, true, 2048, 2048, 1024), MWP_DENY_WRITE_LENGTH);
	/* FIRST and MIDDLE carry exactly the MTU and leave more */
	cr_expect_eq(mwp_write_len_check(true, false, 1024, 3000, 1024), MWP_DENY_NONE);
	cr_expect_eq(mwp_write_len_check(true, false, 1000, 3000, 1024), MWP_DENY_WRITE_LENGTH);
	cr_expect_eq(mwp_write_len_check(false, false, 1024, 1024, 1024), MWP_DENY_WRITE_LENGTH);
	/* LAST carries what is left */
	cr_expect_eq(mwp_write_len_check(false, true, 952, 952, 1024), MWP_DENY_NONE);
	cr_expect_eq(mwp_write_len_check(false, true, 952, 953, 1024), MWP_DENY_WRITE_LENGTH);
	cr_expect_eq(mwp_deny_syndrome(MWP_DENY_WRITE_LENGTH), 0x61);
}

Test(access, burst_lookup_resolves_known_and_unknown_keys)
{
	uint32_t keys[100];
	const struct mwp_binding *out[100];
	uint32_t k = window2(R, false);

	for (int i = 0; i < 100; i++)
		keys[i] = i % 3 == 0 ? mr->rkey : i % 3 == 1 ? k : 0x00ffff00u + (uint32_t)i;
	cr_expect_eq(mwp_keys_lookup_burst(mwp_device_keys(ctx), keys, 100, out), 67);
	for (int i = 0; i < 100; i++) {
		if (i % 3 == 2)
			cr_expect_null(out[i], "%d", i);
		else
			cr_expect_eq(out[i], resolve(keys[i]), "%d", i);
	}
}

/*
 * The responder's one-pass decision (mwp_access_decide) against the
 * ordered checks (mwp_access_check) over sealed descriptors of every
 * shape -- the region's own, windows inside it or reaching past it,
 * zero-based, Type 2B, at the top of the address space, zero-length --
 * and requests at and one past every edge: the same answer, the same
 * address, every time.  Descriptors are not dereferenced beyond their
 * fields, so their host addresses may be anywhere.
 */
Test(access, the_one_pass_decision_agrees_with_the_ordered_checks)
{
	static const struct {
		uint8_t kind, zb;
		uint64_t va, length, host_off, mr_length;
	} shapes[] = {
		{ MWP_KEY_MR, 0, 0x10000, 4096, 0, 4096 },
		{ MWP_KEY_MW1, 0, 0x10100, 200, 0x100, 4096 },
		{ MWP_KEY_MW2, 0, 0x10100, 200, 0x100, 4096 },
		{ MWP_KEY_MW2, 1, 0, 200, 0x100, 4096 },
		{ MWP_KEY_MW1, 1, 0, 4096, 0, 4096 },
		{ MWP_KEY_MW1, 0, 0x1000, 512, 100, 256 },	/* past its region */
		{ MWP_KEY_MW1, 0, 0x1000, 512, 300, 256 },	/* starts past it */
		{ MWP_KEY_MR, 0, UINT64_MAX - 4095, 4096, 0, 4096 },
		{ MWP_KEY_MR, 0, UINT64_MAX - 99, 4096, 0, 4096 },	/* wraps */
		{ MWP_KEY_MW1, 1, 8, 64, 0, 4096 },	/* zero-based, va not 0 */
		{ MWP_KEY_MW1, 0, 0x2000, 0, 0, 4096 },	/* zero length */
		{ MWP_KEY_MR, 0, 0, UINT64_C(1) << 40, 0, UINT64_C(1) << 40 },
	};
	static const uint32_t accs[] = { R, W, A };
	static const uint16_t grants[] = { R | W | A, R, W | A };
	unsigned int cases = 0, allowed = 0, wrong = 0;
	char first[160] = "";

	/* counted, then asserted once: --full-stats records every
	 * assertion, and there are 168k cases */
	for (size_t s = 0; s < RTE_DIM(shapes); s++) {
		for (size_t g = 0; g < RTE_DIM(grants); g++) {
			uint8_t *mr_host = (uint8_t *)(uintptr_t)0x7f0000000000;
			struct mwp_binding b = {
				.rkey = 0x1234567, .pd = 9, .qpn = 0x11, .access = grants[g],
				.kind = shapes[s].kind, .zero_based = shapes[s].zb,
				.va = shapes[s].va, .length = shapes[s].length,
				.host = mr_host + shapes[s].host_off, .mr_host = mr_host,
				.mr_length = shapes[s].mr_length,
			};
			const uint64_t lo = b.va, end = b.va + b.length;
			const uint64_t vas[] = {
				lo, lo + 1, lo + 8, lo - 1, lo - 8, end, end - 1, end - 8,
				end + 1, 0, 8, 100, UINT64_MAX, UINT64_MAX - 7,
				lo + shapes[s].mr_length - 8,
			};
			const uint64_t lens[] = {
				0, 1, 7, 8, 9, 64, b.length, b.length + 1, b.length - 1,
				shapes[s].mr_length, UINT64_C(1) << 31,
				(UINT64_C(1) << 31) + 1, UINT64_MAX,
			};

			mwp_binding_seal(&b);
			for (size_t v = 0; v < RTE_DIM(vas); v++)
				for (size_t l = 0; l < RTE_DIM(lens); l++)
					for (size_t a = 0; a < RTE_DIM(accs); a++)
						for (unsigned int who = 0; who < 8; who++) {
							/* who: bit 0 a stale key byte, bit 1
							 * another PD, bit 2 another QP; no
							 * descriptor at all once per shape */
							const struct mwp_binding *bp =
								who == 0 && v == 0 && l == 1 ? NULL : &b;
							struct mwp_access_req r = {
								.rkey = b.rkey ^ (who & 1 ? 0x100 : 0),
								.access = accs[a], .va = vas[v],
								.len = lens[l],
								.pd = b.pd + (who & 2 ? 1 : 0),
								.qpn = b.qpn + (who & 4 ? 1 : 0),
							};
							uint8_t *x = (uint8_t *)1, *y = (uint8_t *)2;
							enum mwp_deny fast = mwp_access_decide(bp, &r, &x);
							enum mwp_deny ordered = mwp_access_check(bp, &r, &y);

							cases++;
							allowed += fast == MWP_DENY_NONE;
							if (fast == ordered && x == y)
								continue;
							if (wrong++ == 0)
								snprintf(first, sizeof(first),
									 "shape %zu grant %zu va %#" PRIx64
									 " len %#" PRIx64 " acc %#x who %u: "
									 "%s %p against %s %p", s, g, r.va,
									 r.len, r.access, who,
									 mwp_deny_name(fast), (void *)x,
									 mwp_deny_name(ordered), (void *)y);
						}
		}
	}
	cr_assert_eq(wrong, 0, "%u of %u cases differ; the first: %s", wrong, cases, first);
	/* the sweep reaches both answers, often */
	cr_expect_gt(allowed, 1000, "%u allowed of %u", allowed, cases);
	cr_expect_lt(allowed, cases / 2, "%u allowed of %u", allowed, cases);
}

Test(access, sealing_folds_the_region_into_the_fast_length)
{
	uint8_t *h = (uint8_t *)(uintptr_t)0x7f0000000000;
	struct mwp_binding b = { .kind = MWP_KEY_MW1, .va = 0x1000, .length = 512,
				 .host = h + 100, .mr_host = h, .mr_length = 256 };

	mwp_binding_seal(&b);
	cr_expect_eq(b.fast_len, 156);
	cr_expect_eq(b.qpn_mask, 0);
	b.kind = MWP_KEY_MW2;
	b.host = h + 300;	/* starts past its region */
	mwp_binding_seal(&b);
	cr_expect_eq(b.fast_len, 0);
	cr_expect_eq(b.qpn_mask, UINT32_MAX);
	b.host = h;
	b.va = UINT64_MAX - 99;	/* would wrap past 2^64 */
	mwp_binding_seal(&b);
	cr_expect_eq(b.fast_len, 100);
	b.zero_based = 1;	/* zero-based with va not 0: never in one pass */
	mwp_binding_seal(&b);
	cr_expect_eq(b.fast_len, 0);
}

Test(access, the_key_hash_is_rte_hash_crc_of_the_word)
{
	uint32_t x = 0x9e3779b9;

	uint32_t wrong = 0, first = 0;

	/* however it is computed, the value rte_hash_crc_4byte gives
	 * (counted, then asserted once: see above) */
	for (int i = 0; i < 100000; i++) {
		if (mwp_keys_sig(x) != rte_hash_crc_4byte(x, 0) && wrong++ == 0)
			first = x;
		x = x * 1664525u + 1013904223u;
	}
	cr_assert_eq(wrong, 0, "%u words differ, the first %#x", wrong, first);
	cr_expect_eq(mwp_keys_sig(0), rte_hash_crc_4byte(0, 0));
	cr_expect_eq(mwp_keys_sig(UINT32_MAX), rte_hash_crc_4byte(UINT32_MAX, 0));
}
