/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keys an attacker cannot predict (issue 20, docs/security.md): over 10^6
 * window allocations, and over 10^6 Type 1 rebinds of one window, the
 * next key is not predictable from the ones before -- the deltas between
 * successive keys are flat (chi-square over 256 buckets) and no delta
 * repeats more often than chance allows; a freed slot is not reused
 * within the quarantine; the permutation of indices is one; sequential
 * devices keep their keys in sequence.
 */
#include <math.h>

#include "verbs_fixture.h"
#include "mwp_keygen.h"

#define N_DRAWS		1000000u
#define BUCKETS		256u

static void
setup(void)
{
	fixture_device_flags = 0;	/* the fixture's device: random keys */
	verbs_setup();
}

TestSuite(keygen, .init = setup, .fini = verbs_teardown, .timeout = 300);

/* Chi-square of counts[BUCKETS] against a flat distribution. */
static double
chi2(const uint32_t *counts, uint32_t total)
{
	const double e = (double)total / BUCKETS;
	double x = 0;

	for (uint32_t i = 0; i < BUCKETS; i++)
		x += ((double)counts[i] - e) * ((double)counts[i] - e) / e;
	return x;
}

/*
 * 255 degrees of freedom: mean 255, sd 22.6.  Over 400 (6.4 sd) is not
 * chance (p < 10^-9): a flat source fails this test about never, a
 * counter or a stride fails it at once.
 */
#define CHI2_MAX	400.0

static int
cmp_u32(const void *a, const void *b)
{
	const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* How often the most repeated value of v[n] occurs (v is sorted). */
static uint32_t
max_repeat(uint32_t *v, uint32_t n)
{
	uint32_t best = 1, run = 1;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (uint32_t i = 1; i < n; i++) {
		run = v[i] == v[i - 1] ? run + 1 : 1;
		best = RTE_MAX(best, run);
	}
	return best;
}

/*
 * Keys k[0..n), each an index (its low 23 bits vary) and a key byte: the deltas between successive keys -- of the index mod 2^23, of
 * the key byte mod 2^8 -- are flat, and no whole delta repeats more than
 * chance allows.
 */
static void
expect_unpredictable(const uint32_t *k, uint32_t n, const char *what)
{
	uint32_t *d = malloc((n - 1) * sizeof(*d));
	uint32_t hi[BUCKETS] = { 0 }, lo[BUCKETS] = { 0 }, kb[BUCKETS] = { 0 };
	uint32_t rep;
	double c_hi, c_lo, c_kb;

	cr_assert_not_null(d);
	for (uint32_t i = 1; i < n; i++) {
		const uint32_t di = ((k[i] >> 8) - (k[i - 1] >> 8)) & 0x7fffff;
		const uint32_t db = (k[i] - k[i - 1]) & 0xff;

		hi[di >> 15]++;
		lo[di & 0xff]++;
		kb[db]++;
		d[i - 1] = di << 8 | db;
	}
	c_hi = chi2(hi, n - 1);
	c_lo = chi2(lo, n - 1);
	c_kb = chi2(kb, n - 1);
	rep = max_repeat(d, n - 1);
	cr_log_info("%s: %u keys; chi2 (255 degrees of freedom) of the index deltas' "
		    "top byte %.1f, low byte %.1f, of the key byte deltas %.1f; the most "
		    "repeated delta: %u times", what, n, c_hi, c_lo, c_kb, rep);
	cr_expect_lt(c_hi, CHI2_MAX, "%s: index deltas' top byte not flat", what);
	cr_expect_lt(c_lo, CHI2_MAX, "%s: index deltas' low byte not flat", what);
	cr_expect_lt(c_kb, CHI2_MAX, "%s: key byte deltas not flat", what);
	/* n deltas over 2^31 values: one seen 5 times has odds under 10^-9;
	 * a counter or a stride repeats one delta n times */
	cr_expect_lt(rep, 5, "%s: a delta repeats %u times", what, rep);
	free(d);
}

Test(keygen, window_keys_over_a_million_allocations_are_unpredictable)
{
	struct ibv_context *c = mwp_open_device(NULL);
	struct ibv_pd *p = mwp_alloc_pd(c);
	uint32_t *k = malloc(N_DRAWS * sizeof(*k));
	uint32_t bytes[BUCKETS] = { 0 };
	/* live windows, so the draw is among occupied slots as well */
	struct ibv_mw *live[64];
	uint32_t bad = 0;

	cr_assert_not_null(k);
	for (int i = 0; i < 64; i++)
		live[i] = ibv_alloc_mw(p, IBV_MW_TYPE_2);
	/* no assertion per draw: --full-stats reports each one */
	for (uint32_t i = 0; i < N_DRAWS; i++) {
		struct ibv_mw *w = ibv_alloc_mw(p, IBV_MW_TYPE_2);

		if (w == NULL || w->rkey >> 8 < MWP_MW_INDEX_BASE ||
		    mwp_mw_by_key(to_mdev(c), w->rkey) != to_mmw(w)) {
			bad++;
			continue;
		}
		k[i] = w->rkey;
		bytes[k[i] & 0xff]++;
		bad += ibv_dealloc_mw(w) != 0;
	}
	cr_assert_eq(bad, 0, "%u windows not made, found or freed", bad);
	expect_unpredictable(k, N_DRAWS, "window keys");
	cr_expect_lt(chi2(bytes, N_DRAWS), CHI2_MAX, "the key bytes are not flat");
	for (int i = 0; i < 64; i++)
		ibv_dealloc_mw(live[i]);
	free(k);
	mwp_close_device(c);
}

Test(keygen, type1_rebinds_of_one_window_are_unpredictable)
{
	const uint32_t n = N_DRAWS;
	uint32_t *k = malloc(n * sizeof(*k));
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t kept = 0, moved = 0, bad = 0, flat[BUCKETS] = { 0 };
	struct ibv_wc wc;
	double c;

	cr_assert(k != NULL && w != NULL);
	k[0] = w->rkey;
	/* ibv_bind_mw on the same window, each bound in turn: the device
	 * chooses every new key (no assertion per bind: --full-stats) */
	for (uint32_t i = 1; i < n; i++) {
		if (bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, i) != 0) {
			bad++;
			break;
		}
		do
			fixture_progress();
		while (ibv_poll_cq(cq, 1, &wc) == 0);
		bad += wc.status != IBV_WC_SUCCESS || wc.wr_id != i;
		k[i] = w->rkey;
		kept += k[i] == k[i - 1];
		moved += k[i] >> 8 != k[i - 1] >> 8;
		flat[(uint8_t)(k[i] - k[i - 1])]++;
	}
	cr_assert_eq(bad, 0, "%u binds failed", bad);
	cr_expect_eq(kept, 0, "a rebind kept the key it revokes");
	cr_expect_eq(moved, 0, "a rebind moved the window to another index");
	cr_expect_null(resolve(k[n - 2]), "the key before the last is dead");
	cr_expect_not_null(resolve(k[n - 1]), "the last key is live");
	/* the delta is 1 to 255 (never 0): flat over those 255 */
	flat[0] = (n - 1) / BUCKETS;
	c = chi2(flat, n - 1);
	cr_log_info("Type 1 rebinds: %u binds through ibv_bind_mw, chi2 of the key byte "
		    "deltas %.1f", n - 1, c);
	cr_expect_lt(c, CHI2_MAX, "Type 1 key byte deltas not flat");
	free(k);
}

Test(keygen, region_keys_are_unpredictable_and_qpns_random)
{
	struct ibv_context *c = mwp_open_device(NULL);
	struct ibv_pd *p = mwp_alloc_pd(c);
	struct ibv_cq *q = mwp_create_cq(c, 8);
	struct ibv_qp_init_attr ia = { .send_cq = q, .recv_cq = q, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	const uint32_t n = 100000;
	uint32_t *k = malloc(n * sizeof(*k));
	uint32_t *qpn = malloc(4096 * sizeof(*qpn));

	cr_assert(k != NULL && qpn != NULL);
	uint32_t bad = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct ibv_mr *m = mwp_reg_mr(p, buf, 64, ALL_ACCESS);

		if (m == NULL || m->lkey >> 8 >= MWP_MW_INDEX_BASE || m->lkey >> 8 == 0 ||
		    mwp_mr_by_key(to_mdev(c), m->lkey) != to_mmr(m)) {
			bad++;
			continue;
		}
		k[i] = m->lkey;
		bad += mwp_dereg_mr(m) != 0;
	}
	cr_assert_eq(bad, 0, "%u regions not made, found or freed", bad);
	expect_unpredictable(k, n, "region keys");
	for (uint32_t i = 0; i < 4096; i++) {
		struct ibv_qp *x = mwp_create_qp(p, &ia);

		if (x == NULL || x->qp_num < MWP_FIRST_QPN || x->qp_num > 0xffffff) {
			bad++;
			continue;
		}
		qpn[i] = x->qp_num;
		bad += mwp_destroy_qp(x) != 0;
	}
	cr_assert_eq(bad, 0, "%u QPs not made in range or not destroyed", bad);
	/* 4096 draws of 24 bits: a repeat of the delta has odds 2^-12 */
	cr_expect_lt(max_repeat(qpn, 4096), 3, "QPNs repeat");
	free(k);
	free(qpn);
	mwp_close_device(c);
}

Test(keygen, a_freed_slot_waits_out_its_quarantine)
{
	struct ibv_context *c = mwp_open_device(NULL);
	struct ibv_pd *p = mwp_alloc_pd(c);
	const uint32_t q = to_mdev(c)->mw_keys.qsize;
	struct ibv_mw *w = ibv_alloc_mw(p, IBV_MW_TYPE_2);
	const uint32_t first = w->rkey >> 8;

	cr_assert_eq(q, MWP_KEYGEN_QUARANTINE);
	ibv_dealloc_mw(w);
	uint32_t reused = 0;

	/* the next q allocations (each freed at once) never get it back */
	for (uint32_t i = 0; i < q - 1; i++) {
		w = ibv_alloc_mw(p, IBV_MW_TYPE_2);
		reused += w->rkey >> 8 == first;
		ibv_dealloc_mw(w);
	}
	cr_expect_eq(reused, 0, "index reused within the quarantine");
	mwp_close_device(c);
}

Test(keygen, the_index_permutation_is_one_and_inverts)
{
	struct mwp_keygen g;
	uint8_t *seen = calloc(MWP_INDEX_SPAN, 1);

	cr_assert_not_null(seen);
	cr_assert_eq(mwp_keygen_init(&g, 1u << 20, MWP_INDEX_SPAN, false), 0);
	uint32_t bad = 0;

	for (uint32_t s = 0; s < g.n; s++) {
		const uint32_t x = mwp_keygen_index(&g, s);

		if (x >= MWP_INDEX_SPAN || seen[x] || mwp_keygen_slot(&g, x) != (int64_t)s) {
			bad++;
			continue;
		}
		seen[x] = 1;
	}
	cr_expect_eq(bad, 0, "%u slots out of range, sharing an index or not inverted", bad);
	/* indices no slot has */
	for (uint32_t x = 0, misses = 0; misses < 1000; x++)
		if (!seen[x]) {
			bad += mwp_keygen_slot(&g, x) != -1;
			misses++;
		}
	cr_expect_eq(bad, 0, "an index no slot has found a slot");
	cr_expect_eq(mwp_keygen_slot(&g, MWP_INDEX_SPAN), -1, "past the range");
	mwp_keygen_fini(&g);
	free(seen);
}

Test(keygen, a_full_table_still_gives_its_quarantined_slots)
{
	struct mwp_keygen g;
	void *tbl[8] = { 0 };
	int s;

	cr_assert_eq(mwp_keygen_init(&g, 8, MWP_INDEX_SPAN, false), 0);
	cr_assert_eq(g.qsize, 4);
	for (int i = 0; i < 8; i++) {
		s = mwp_keygen_take(&g, tbl);
		cr_assert(s >= 0 && tbl[s] == NULL);
		tbl[s] = &g;
	}
	cr_expect_eq(mwp_keygen_take(&g, tbl), -1, "every slot used");
	/* free two: both quarantined, yet the only free ones */
	tbl[3] = tbl[5] = NULL;
	mwp_keygen_give(&g, 3);
	mwp_keygen_give(&g, 5);
	s = mwp_keygen_take(&g, tbl);
	cr_expect_eq(s, 3, "the slot held longest");
	tbl[s] = &g;
	cr_expect_eq(mwp_keygen_take(&g, tbl), 5);
	mwp_keygen_fini(&g);
}

Test(keygen, a_sequential_device_counts)
{
	struct mwp_keygen g;
	void *tbl[4] = { 0 };

	cr_assert_eq(mwp_keygen_init(&g, 4, MWP_INDEX_SPAN, true), 0);
	for (int i = 0; i < 3; i++) {
		const int s = mwp_keygen_take(&g, tbl);

		cr_expect_eq(s, i);
		cr_expect_eq(mwp_keygen_index(&g, (uint32_t)s), (uint32_t)i);
		cr_expect_eq(mwp_keygen_key_byte(&g, (uint32_t)s), 0);
		mwp_keygen_commit(&g, (uint32_t)s, 0);
		tbl[s] = &g;
	}
	tbl[1] = NULL;
	mwp_keygen_give(&g, 1);
	cr_expect_eq(mwp_keygen_take(&g, tbl), 1, "the lowest free slot at once");
	cr_expect_eq(mwp_keygen_key_byte(&g, 1), 1, "its next key byte");
	cr_expect_eq(mwp_key_byte_next(0xff, true), 0);
	mwp_keygen_fini(&g);
}
