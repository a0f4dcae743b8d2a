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
#include <sys/wait.h>
#include <unistd.h>

#include "verbs_fixture.h"
#include "mwp_keygen.h"
#include "mwp_port.h"

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

/*
 * Issue 37: a Type 1 rebind draws none of the window's last MWP_KEY_HIST
 * (64) key bytes, alloc's first one included: over 10^4 rebinds through
 * ibv_bind_mw every 65 consecutive key bytes differ, a byte does come
 * back after exactly 65 (no more is kept out than the last 64), and
 * every byte value turns up.
 */
#define N_REBINDS	10000u

Test(keygen, type1_rebinds_keep_off_the_window_s_last_64_key_bytes)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint8_t kb[N_REBINDS + 1];
	uint32_t seen[BUCKETS] = { 0 };
	uint32_t bad = 0, moved = 0, soon = 0, values = 0, min_gap = UINT32_MAX;
	int32_t last_at[BUCKETS];
	struct ibv_wc wc;

	cr_assert_not_null(w);
	for (uint32_t b = 0; b < BUCKETS; b++)
		last_at[b] = -1;
	kb[0] = (uint8_t)w->rkey;
	last_at[kb[0]] = 0;
	seen[kb[0]]++;
	for (uint32_t i = 1; i <= N_REBINDS; i++) {
		const uint32_t before = w->rkey;

		if (bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, i) != 0) {
			bad++;
			break;
		}
		do
			fixture_progress();
		while (ibv_poll_cq(cq, 1, &wc) == 0);
		bad += wc.status != IBV_WC_SUCCESS || wc.wr_id != i;
		moved += w->rkey >> 8 != before >> 8;
		kb[i] = (uint8_t)w->rkey;
		if (last_at[kb[i]] >= 0) {
			const uint32_t gap = i - (uint32_t)last_at[kb[i]];

			soon += gap <= MWP_KEY_HIST;
			min_gap = RTE_MIN(min_gap, gap);
		}
		last_at[kb[i]] = (int32_t)i;
		seen[kb[i]]++;
	}
	cr_assert_eq(bad, 0, "%u binds failed", bad);
	cr_expect_eq(moved, 0, "a rebind moved the window to another index");
	/* the same check the long way: each byte against the 64 before it */
	for (uint32_t i = 1; i <= N_REBINDS; i++)
		for (uint32_t j = i > MWP_KEY_HIST ? i - MWP_KEY_HIST : 0; j < i; j++)
			soon += kb[i] == kb[j];
	for (uint32_t b = 0; b < BUCKETS; b++)
		values += seen[b] != 0;
	cr_log_info("Type 1 rebinds: %u through ibv_bind_mw, %u byte values seen, the "
		    "closest repeat %u keys apart", N_REBINDS, values, min_gap);
	cr_expect_eq(soon, 0, "a key byte came back within %u rebinds (%u times)",
		     MWP_KEY_HIST, soon);
	cr_expect_eq(values, BUCKETS, "only %u of 256 key byte values in %u rebinds",
		     values, N_REBINDS);
	/* a byte leaves the history after 64 more: back at 65 some time
	 * (odds of never, over 10^4 draws from 192: e^-51) */
	cr_expect_eq(min_gap, MWP_KEY_HIST + 1, "closest repeat %u apart, want %u",
		     min_gap, MWP_KEY_HIST + 1);
	cr_expect_not_null(resolve(w->rkey), "the last key is live");
}

/*
 * The draw itself: once the history is full, each new byte is one of
 * the 192 not in it, each of them as likely (chi-square of its rank among
 * them, 191 degrees of freedom: mean 191, sd 19.5; over 320 is 6.6 sd),
 * and the bytes themselves are flat.
 */
Test(keygen, a_rebind_draws_uniformly_from_the_192_bytes_not_in_the_history)
{
	const uint32_t free_n = 256 - MWP_KEY_HIST;
	uint32_t rank[256] = { 0 }, bytes[BUCKETS] = { 0 }, in = 0;
	struct mwp_key_hist h;
	uint8_t cur = (uint8_t)mwp_rand64();
	double c_rank = 0, c_bytes;

	mwp_key_hist_init(&h, cur);
	for (uint32_t i = 0; i < N_DRAWS + MWP_KEY_HIST; i++) {
		const uint8_t b = mwp_key_hist_next(&h, cur, false);

		if (i >= MWP_KEY_HIST) {
			uint32_t r = 0;

			/* no assertion per draw: --full-stats */
			in += mwp_key_hist_has(&h, b) || h.count != MWP_KEY_HIST;
			for (uint32_t x = 0; x < b; x++)
				r += !mwp_key_hist_has(&h, (uint8_t)x);
			rank[r]++;
			bytes[b]++;
		}
		mwp_key_hist_add(&h, b);
		cur = b;
	}
	cr_expect_eq(in, 0, "%u draws in the history (or it was not full)", in);
	for (uint32_t r = 0; r < free_n; r++) {
		const double e = (double)N_DRAWS / free_n;

		c_rank += ((double)rank[r] - e) * ((double)rank[r] - e) / e;
	}
	for (uint32_t r = free_n; r < 256; r++)
		cr_expect_eq(rank[r], 0, "rank %u: past the %u free bytes", r, free_n);
	c_bytes = chi2(bytes, N_DRAWS);
	cr_log_info("key history: %u draws, chi2 of the rank among the %u free bytes %.1f "
		    "(191 degrees of freedom), of the bytes %.1f", N_DRAWS, free_n, c_rank,
		    c_bytes);
	cr_expect_lt(c_rank, 320.0, "the draw is not uniform over the free bytes");
	cr_expect_lt(c_bytes, CHI2_MAX, "the bytes drawn are not flat");
}

Test(keygen, the_history_holds_the_last_64_and_takes_in_a_foreign_current_byte)
{
	struct mwp_key_hist h;
	uint32_t bad = 0;
	uint8_t b;

	mwp_key_hist_init(&h, 7);
	cr_expect_eq(h.count, 1);
	cr_expect(mwp_key_hist_has(&h, 7), "alloc's byte is history");
	for (uint32_t x = 100; x < 100 + MWP_KEY_HIST; x++)
		mwp_key_hist_add(&h, (uint8_t)x);
	cr_expect_eq(h.count, MWP_KEY_HIST);
	cr_expect_not(mwp_key_hist_has(&h, 7), "the oldest left");
	cr_expect(mwp_key_hist_has(&h, 100) && mwp_key_hist_has(&h, 163));
	/* one already in moves to the newest end: 100 is then the oldest */
	mwp_key_hist_add(&h, 130);
	cr_expect_eq(h.count, MWP_KEY_HIST);
	mwp_key_hist_add(&h, 200);
	cr_expect_not(mwp_key_hist_has(&h, 100));
	cr_expect(mwp_key_hist_has(&h, 130) && mwp_key_hist_has(&h, 101) &&
		  mwp_key_hist_has(&h, 200));
	/* the consumer holds a byte the history does not have (it put the
	 * key back after a failed bind, or set it): it joins the history,
	 * the oldest (101) leaves, and the draw is neither */
	for (int i = 0; i < 1000; i++) {
		struct mwp_key_hist t = h;

		b = mwp_key_hist_next(&t, 7, false);
		bad += b == 7 || mwp_key_hist_has(&t, b) || !mwp_key_hist_has(&t, 7) ||
		       mwp_key_hist_has(&t, 101) || t.count != MWP_KEY_HIST;
	}
	cr_expect_eq(bad, 0, "%u of 1000 draws wrong", bad);
	cr_expect_eq(mwp_key_hist_next(&h, 0xff, true), 0, "sequential: counts up");
	cr_expect_eq(mwp_key_hist_next(&h, 130, true), 131, "sequential: even into history");
}

/* A freed window's slot, when it is reused, avoids the key byte the
 * window held last (a bind's), not only alloc's. */
Test(keygen, a_freed_window_s_slot_remembers_its_last_key_byte)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	const uint32_t slot = w->handle;
	uint8_t held;

	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	held = (uint8_t)w->rkey;
	cr_assert_eq(ibv_dealloc_mw(w), 0);
	cr_expect_eq(to_mdev(ctx)->mw_keys.last[slot], held);
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

/* A port finds a QP by its number modulo MWP_PORT_QP_SLOTS: the random
 * numbers of the QPs that exist at once never share a slot, so attaching
 * any of them to a port cannot fail; when every slot is taken, creating
 * one more says ENOSPC, and a destroyed QP's slot is free again.  (Made
 * with memzones, a device stopped at about 1270 QPs, CQs and SRQs.) */
Test(keygen, random_qpns_of_live_qps_never_share_a_port_slot)
{
	struct ibv_context *c = mwp_open_device(NULL);
	struct ibv_pd *p = mwp_alloc_pd(c);
	struct ibv_cq *q = mwp_create_cq(c, 16);
	struct ibv_qp_init_attr ia = {
		.send_cq = q, .recv_cq = q, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1 },
	};
	struct ibv_qp **qps = calloc(MWP_PORT_QP_SLOTS, sizeof(*qps));
	uint8_t *slot = calloc(MWP_PORT_QP_SLOTS, 1);
	uint32_t n, shared = 0;

	cr_assert(qps != NULL && slot != NULL);
	for (n = 0; n < MWP_PORT_QP_SLOTS; n++) {
		qps[n] = mwp_create_qp(p, &ia);
		if (qps[n] == NULL)
			break;
		shared += slot[qps[n]->qp_num & (MWP_PORT_QP_SLOTS - 1)]++ != 0;
	}
	cr_assert_eq(n, MWP_PORT_QP_SLOTS, "only %u QPs (errno %d)", n, errno);
	cr_expect_eq(shared, 0, "%u of %u QPs share a port slot", shared, n);
	cr_expect_null(mwp_create_qp(p, &ia));
	cr_expect_eq(errno, ENOSPC);
	/* the slot of one destroyed is the only one free: it is given again */
	const uint32_t freed = qps[n / 2]->qp_num & (MWP_PORT_QP_SLOTS - 1);

	cr_assert_eq(mwp_destroy_qp(qps[n / 2]), 0);
	qps[n / 2] = mwp_create_qp(p, &ia);
	cr_assert_not_null(qps[n / 2]);
	cr_expect_eq(qps[n / 2]->qp_num & (MWP_PORT_QP_SLOTS - 1), freed);
	for (uint32_t i = 0; i < n; i++)
		cr_expect_eq(mwp_destroy_qp(qps[i]), 0);
	free(qps);
	free(slot);
	mwp_destroy_cq(q);
	mwp_dealloc_pd(p);
	mwp_close_device(c);
}

/* A device one of several processes drive (a shared device): its QPs
 * take numbers of its range only, random or in order, and the range
 * takes what the 24 bits allow and nothing else. */
Test(keygen, qpns_stay_in_the_range_a_shared_device_gives_them)
{
	struct ibv_context *c = mwp_open_device(NULL);
	struct ibv_context *s = mwp_open_device(&(struct mwp_device_attr){
		.flags = MWP_DEVICE_F_SEQUENTIAL, .socket = SOCKET_ID_ANY });
	struct ibv_pd *p = mwp_alloc_pd(c), *ps = mwp_alloc_pd(s);
	struct ibv_cq *q = mwp_create_cq(c, 8), *qs = mwp_create_cq(s, 8);
	struct ibv_qp_init_attr ia = { .send_cq = q, .recv_cq = q, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1 } };
	struct ibv_qp *x;
	uint32_t out = 0;

	cr_expect_eq(mwp_device_set_qpn_range(c, 0x10, 0xfffff), EINVAL, "QP 0x10 is kept");
	cr_expect_eq(mwp_device_set_qpn_range(c, 0x100000, 0x1000000), EINVAL, "25 bits");
	cr_expect_eq(mwp_device_set_qpn_range(c, 0x200000, 0x1fffff), EINVAL, "empty");
	cr_assert_eq(mwp_device_set_qpn_range(c, 0x300000, 0x3fffff), 0);
	for (int i = 0; i < 2000; i++) {
		x = mwp_create_qp(p, &ia);
		cr_assert_not_null(x);
		out += x->qp_num < 0x300000 || x->qp_num > 0x3fffff;
		cr_assert_eq(mwp_destroy_qp(x), 0);
	}
	cr_expect_eq(out, 0, "%u random QPNs outside the range", out);
	/* in order: from the first, and after the last the first again */
	cr_assert_eq(mwp_device_set_qpn_range(s, 0xfffffe, 0xffffff), 0);
	ia.send_cq = ia.recv_cq = qs;
	x = mwp_create_qp(ps, &ia);
	cr_expect_eq(x->qp_num, 0xfffffe);
	cr_assert_eq(mwp_destroy_qp(x), 0);
	x = mwp_create_qp(ps, &ia);
	cr_expect_eq(x->qp_num, 0xffffff);
	cr_assert_eq(mwp_destroy_qp(x), 0);
	x = mwp_create_qp(ps, &ia);
	cr_expect_eq(x->qp_num, 0xfffffe);
	cr_assert_eq(mwp_destroy_qp(x), 0);
	mwp_destroy_cq(q);
	mwp_destroy_cq(qs);
	mwp_dealloc_pd(p);
	mwp_dealloc_pd(ps);
	mwp_close_device(c);
	mwp_close_device(s);
}

/* Two children of one parent, and the parent, draw numbers of their own
 * (the buffer a thread draws from is not carried into a fork): else
 * every child would make the same QP numbers and keys. */
Test(keygen, forked_children_draw_numbers_of_their_own)
{
	uint64_t mine[4], theirs[2][4];

	(void)mwp_rand64();	/* the buffer filled, most of it left */
	for (int c = 0; c < 2; c++) {
		int fd[2];
		pid_t pid;

		cr_assert_eq(pipe(fd), 0);
		pid = fork();
		if (pid == 0) {
			/* nothing of Criterion's here: the child is not one
			 * of its runner's workers */
			uint64_t v[4];

			for (int i = 0; i < 4; i++)
				v[i] = mwp_rand64();
			_exit(write(fd[1], v, sizeof(v)) == sizeof(v) ? 0 : 1);
		}
		cr_assert_geq(pid, 0);
		close(fd[1]);
		cr_assert_eq(read(fd[0], theirs[c], sizeof(theirs[c])), (ssize_t)sizeof(theirs[c]));
		close(fd[0]);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 4; i++)
		mine[i] = mwp_rand64();
	cr_expect_neq(memcmp(theirs[0], theirs[1], sizeof(theirs[0])), 0, "two children drew alike");
	cr_expect_neq(memcmp(theirs[0], mine, sizeof(mine)), 0, "a child drew the parent's");
}
