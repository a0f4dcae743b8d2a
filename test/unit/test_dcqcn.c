/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point and the pacer (lib/rate/mwp_dcqcn.c) on a clock
 * the tests move: every result is checked against the equations of Zhu et
 * al. (SIGCOMM 2015, as mwp_dcqcn.h writes them) worked out here in
 * doubles.  What is checked: a QP starts unpaced at the maximum rate; a
 * CNP cuts R_C by alpha (rpg_gd 10 or 11), bounded by rpg_min_dec_fac and
 * rpg_min_rate, and raises alpha; one cut per rate_reduce_monitor_period;
 * alpha decays once every dce_tcp_rtt; the timer and the byte counter
 * raise the rate by fast recovery, additive and hyper increase as T and BC
 * pass rpg_threshold, until the QP is back at the line rate and unpaced;
 * rate_to_set_on_first_cnp; the pacer holds frames to R_C and lets a QP
 * that paused catch up by burst bytes; reads change nothing; the
 * parameters' ranges.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "mwp_dcqcn.h"

#define HZ UINT64_C(1000000000)	/* 1 tick = 1 ns */
#define LINE 100000u		/* Mb/s */
#define T0 UINT64_C(1000000000)	/* the first CNP, 1 s into the clock */

static struct mwp_dcqcn_params p;
static struct mwp_dcqcn_cfg c;
static struct mwp_dcqcn s;
static uint64_t hz;

/* Equal to a relative 1e-9 of the expected value. */
#define EXPECT_NEAR(a, b)						\
	cr_expect_float_eq((a), (b), 1e-9 * fabs(b) + 1e-12,		\
			   "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))
#define ASSERT_NEAR(a, b)						\
	cr_assert_float_eq((a), (b), 1e-9 * fabs(b) + 1e-12,		\
			   "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

static void
setup(void)
{
	mwp_dcqcn_defaults(&p);
	hz = HZ;
}

TestSuite(dcqcn, .init = setup);

/* The parameters in p made ready for the clock, a QP started. */
static void
ready(void)
{
	cr_assert_eq(mwp_dcqcn_params_check(&p, (char[128]){0}, 128), 0);
	mwp_dcqcn_cfg_init(&c, &p, hz, LINE);
	mwp_dcqcn_init(&s, &c);
}

/* Ticks in us microseconds. */
static uint64_t
us(double x)
{
	return (uint64_t)llround(x * (double)hz / 1e6);
}

/* The paper's quantities from the parameters, worked out here. */
static double
max_rate(void)
{
	return p.rpg_max_rate != 0 ? p.rpg_max_rate : LINE;
}

static double
gain(void)
{
	return (1024.0 - p.dce_tcp_g) / 1024.0;
}

static double
alpha0(void)
{
	return p.initial_alpha_value / 1024.0;
}

/* R_C after a cut at alpha a. */
static double
cut(double rc, double a)
{
	const double by = p.rpg_gd == 10 ? a : a / 2;
	double r = rc * (1 - by);

	if (r < rc * p.rpg_min_dec_fac / 100.0)
		r = rc * p.rpg_min_dec_fac / 100.0;
	if (r < p.rpg_min_rate)
		r = p.rpg_min_rate;
	return r;
}

/* alpha after a CNP at alpha a. */
static double
bump(double a)
{
	return (1 - gain()) * a + gain();
}

static void
read3(uint64_t now, double *rc, double *rt, double *alpha)
{
	mwp_dcqcn_read(&s, &c, now, rc, rt, alpha);
}

/*
 * Two cuts: the first CNP at T0, the second at T0 + 5 us (after the
 * default 4 us monitor period, before any timer increase), so that R_T is
 * below the maximum and increases show.  Returns the second cut's time.
 */
static uint64_t
two_cuts(void)
{
	const uint64_t t2 = T0 + us(5);
	const double rc1 = cut(max_rate(), alpha0());
	const double a1 = bump(alpha0());
	/* 5 whole dce_tcp_rtt periods between the cuts */
	const uint64_t k = (t2 - T0) / us(p.dce_tcp_rtt);
	const double a = a1 * pow(1 - gain(), (double)k);

	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	cr_assert(mwp_dcqcn_cnp(&s, &c, t2));
	cr_assert_eq(s.st.cuts, 2);
	ASSERT_NEAR(s.rt, rc1);
	ASSERT_NEAR(s.rc, cut(rc1, a));
	ASSERT_NEAR(s.alpha, bump(a));
	cr_assert_lt(s.rt, max_rate());
	return t2;
}

/* ---- the start ---- */

Test(dcqcn, a_qp_starts_unlimited_at_the_line_rate_and_may_always_send)
{
	double rc, rt, a;

	ready();
	cr_expect(!s.limited);
	cr_expect_eq(s.rc, (double)LINE);
	cr_expect_eq(s.rt, (double)LINE);
	for (uint64_t now = 0; now < UINT64_C(1) << 50; now = now * 7 + 13) {
		cr_expect(mwp_dcqcn_may_send(&s, &c, now));
		mwp_dcqcn_sent(&s, &c, 4096, now);
		cr_expect(mwp_dcqcn_may_send(&s, &c, now), "held at %lu", (unsigned long)now);
	}
	cr_expect(!s.limited);
	cr_expect_eq(s.st.paced, 0);
	cr_expect_eq(s.st.increases, 0);
	cr_expect_eq(s.bc_stage, 0);
	read3(T0, &rc, &rt, &a);
	cr_expect_eq(rc, (double)LINE);
	cr_expect_eq(rt, (double)LINE);
	cr_expect_eq(a, 0.0);
}

Test(dcqcn, rpg_max_rate_is_the_maximum_in_place_of_the_line_rate)
{
	p.rpg_max_rate = 40000;
	ready();
	cr_expect(!s.limited);
	cr_expect_eq(s.rc, 40000.0);
	cr_expect_eq(s.rt, 40000.0);
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rt, 40000.0);
	EXPECT_NEAR(s.rc, 40000.0 * (1 - alpha0() / 2));
}

/* ---- cuts ---- */

Test(dcqcn, the_first_cnp_cuts_rc_by_half_alpha_and_raises_alpha)
{
	const double a0 = 1023.0 / 1024, g = 5.0 / 1024;	/* the defaults */
	double rc, rt, a;

	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	cr_expect(s.limited);
	cr_expect_eq(s.st.cnps, 1);
	cr_expect_eq(s.st.cuts, 1);
	cr_expect_eq(s.st.increases, 0);
	read3(T0, &rc, &rt, &a);
	EXPECT_NEAR(rt, 100000.0);
	EXPECT_NEAR(rc, 100000.0 * (1 - a0 / 2));
	EXPECT_NEAR(a, (1 - g) * a0 + g);
	EXPECT_NEAR(s.rc, 100000.0 * (1 - a0 / 2));
	EXPECT_NEAR(s.alpha, (1 - g) * a0 + g);
}

Test(dcqcn, rpg_gd_10_cuts_rc_by_the_whole_alpha)
{
	p.rpg_gd = 10;
	p.rpg_min_dec_fac = 0;
	p.initial_alpha_value = 512;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 100000.0 * (1 - 0.5));
	EXPECT_NEAR(s.rt, 100000.0);
	EXPECT_NEAR(s.alpha, (1 - gain()) * 0.5 + gain());

	p.initial_alpha_value = 1000;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 100000.0 * (1 - 1000.0 / 1024));
	/* rpg_gd 11 with the same alpha: half of it */
	p.rpg_gd = 11;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 100000.0 * (1 - 1000.0 / 2048));
}

Test(dcqcn, rpg_min_dec_fac_keeps_that_share_of_rc_at_least)
{
	/* a cut of alpha = 1023/1024 would leave 1/1024: 75 % stays */
	p.rpg_gd = 10;
	p.rpg_min_dec_fac = 75;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 75000.0);
	/* rpg_gd 11 would leave 50.05 %: 75 % still */
	p.rpg_gd = 11;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 75000.0);
	/* 40 % does not bind: the cut is the paper's */
	p.rpg_min_dec_fac = 40;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 100000.0 * (1 - 1023.0 / 2048));
	/* 100 %: no cut at all, but alpha still rises */
	p.rpg_min_dec_fac = 100;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 100000.0);
	EXPECT_NEAR(s.alpha, bump(alpha0()));
}

Test(dcqcn, rpg_min_rate_is_the_floor_of_every_cut)
{
	uint64_t t = T0;

	p.rpg_gd = 10;
	p.rpg_min_dec_fac = 0;
	p.rpg_min_rate = 500;
	ready();
	/* 100000 / 1024 = 97.7 Mb/s would be the cut */
	cr_assert(mwp_dcqcn_cnp(&s, &c, t));
	EXPECT_NEAR(s.rc, 500.0);
	EXPECT_NEAR(s.rt, 100000.0);
	for (int i = 0; i < 20; i++) {
		t += us(p.rate_reduce_monitor_period);
		cr_assert(mwp_dcqcn_cnp(&s, &c, t));
		EXPECT_NEAR(s.rc, 500.0);
		EXPECT_NEAR(s.rt, 500.0);
	}
	cr_expect_eq(s.st.cuts, 21);

	/* from a higher rate, a small alpha: the paper's cut, not the floor */
	p.initial_alpha_value = 1;
	p.rpg_min_rate = 99000;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 100000.0 * (1 - 1.0 / 1024));
	/* rpg_min_rate 99950 is above that */
	p.rpg_min_rate = 99950;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	EXPECT_NEAR(s.rc, 99950.0);
}

Test(dcqcn, a_second_cnp_within_the_monitor_period_does_not_cut)
{
	const uint64_t t1 = T0 + us(2.5), t2 = T0 + us(5.5);
	double rc1, rt1, a1, a, rc, rt;
	uint64_t k;

	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	rc1 = s.rc;
	rt1 = s.rt;
	a1 = s.alpha;
	EXPECT_NEAR(rc1, cut(100000.0, alpha0()));
	EXPECT_NEAR(a1, bump(alpha0()));

	/* 2.5 us later, the period 4 us: counted, not cut */
	cr_expect(!mwp_dcqcn_cnp(&s, &c, t1));
	cr_expect_eq(s.st.cnps, 2);
	cr_expect_eq(s.st.cuts, 1);
	cr_expect_eq(s.rc, rc1);
	cr_expect_eq(s.rt, rt1);
	/* one tick before the period has passed: still not */
	cr_expect(!mwp_dcqcn_cnp(&s, &c, T0 + us(p.rate_reduce_monitor_period) - 1));
	cr_expect_eq(s.st.cnps, 3);
	cr_expect_eq(s.st.cuts, 1);
	cr_expect_eq(s.rc, rc1);

	/* 5.5 us after the cut: a cut, with alpha decayed by (1 - g) for
	 * each whole dce_tcp_rtt (1 us) since the cut at T0 */
	k = (t2 - T0) / (uint64_t)(p.dce_tcp_rtt * 1000);	/* 1 tick = 1 ns */
	cr_assert_eq(k, 5);
	a = a1 * pow(1 - gain(), (double)k);
	cr_assert(mwp_dcqcn_cnp(&s, &c, t2));
	cr_expect_eq(s.st.cnps, 4);
	cr_expect_eq(s.st.cuts, 2);
	read3(t2, &rc, &rt, &a1);
	EXPECT_NEAR(rt, rc1);
	EXPECT_NEAR(rc, rc1 * (1 - a / 2));
	EXPECT_NEAR(a1, (1 - gain()) * a + gain());

	/* and the next period counts from this cut */
	cr_expect(!mwp_dcqcn_cnp(&s, &c, t2 + us(3.9)));
	cr_expect(mwp_dcqcn_cnp(&s, &c, t2 + us(4)));
	cr_expect_eq(s.st.cuts, 3);
}

Test(dcqcn, rate_reduce_monitor_period_0_lets_every_cnp_cut)
{
	double rc = 100000.0, a = alpha0();

	p.rate_reduce_monitor_period = 0;
	ready();
	for (int i = 0; i < 5; i++) {
		cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
		rc = cut(rc, a);
		a = bump(a);
		EXPECT_NEAR(s.rc, rc);
		EXPECT_NEAR(s.alpha, a);
	}
	cr_expect_eq(s.st.cuts, 5);
}

/* ---- alpha ---- */

Test(dcqcn, alpha_decays_by_1_minus_g_each_dce_tcp_rtt_without_a_cnp)
{
	static const double at_us[] = { 0, 0.5, 2.999, 3, 3.001, 7.5, 30, 299, 1000, 9000 };
	struct mwp_dcqcn before;
	double a1, rc, rt, a;

	p.dce_tcp_rtt = 3;
	p.rpg_time_reset = 100000000;	/* no increases: R_C stays */
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	a1 = bump(alpha0());
	for (size_t i = 0; i < sizeof(at_us) / sizeof(at_us[0]); i++) {
		const uint64_t now = T0 + us(at_us[i]);
		const uint64_t k = (uint64_t)floor(at_us[i] / 3 + 1e-12);

		memcpy(&before, &s, sizeof(s));
		read3(now, &rc, &rt, &a);
		cr_assert(memcmp(&before, &s, sizeof(s)) == 0, "the read at %g us changed the state",
			  at_us[i]);
		EXPECT_NEAR(a, a1 * pow(1 - gain(), (double)k));
		EXPECT_NEAR(rc, cut(100000.0, alpha0()));
		EXPECT_NEAR(rt, 100000.0);
	}
	/* after 9 ms, alpha is (1 - 5/1024)^3000 of itself: about 4e-7 */
	read3(T0 + us(9000), &rc, &rt, &a);
	cr_expect_lt(a, 1e-6);
}

Test(dcqcn, alpha_looked_at_in_odd_steps_decays_as_in_one)
{
	double rc, rt, a;
	uint64_t now;

	p.dce_tcp_rtt = 2;
	p.rpg_time_reset = 100000000;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	/* looks every 1.7 us: the part of a period between looks is kept */
	for (now = T0; now < T0 + us(1000); now += us(1.7))
		mwp_dcqcn_advance(&s, &c, now);
	read3(now, &rc, &rt, &a);
	EXPECT_NEAR(a, bump(alpha0()) * pow(1 - gain(), (double)((now - T0) / us(2))));
	EXPECT_NEAR(s.alpha, bump(alpha0()) * pow(1 - gain(), (double)((now - us(1.7) - T0) / us(2))));
}

Test(dcqcn, reads_change_nothing)
{
	struct mwp_dcqcn before;
	double rc, rt, a;

	ready();
	/* unlimited */
	memcpy(&before, &s, sizeof(s));
	read3(T0, &rc, &rt, &a);
	cr_expect(memcmp(&before, &s, sizeof(s)) == 0);
	/* limited, with increases and a return to the line rate due */
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	mwp_dcqcn_sent(&s, &c, 1024, T0);
	for (uint64_t d = 0; d <= us(1000000); d = d * 3 + us(1)) {
		memcpy(&before, &s, sizeof(s));
		read3(T0 + d, &rc, &rt, &a);
		cr_assert(memcmp(&before, &s, sizeof(s)) == 0, "the read %lu ns on changed it",
			  (unsigned long)d);
	}
	cr_expect(s.limited);
	cr_expect_eq(s.st.increases, 0);
	/* a read of a QP due back at the line rate says so, alpha 0 */
	read3(T0 + us(1000000), &rc, &rt, &a);
	cr_expect_eq(rc, 100000.0);
	cr_expect_eq(rt, 100000.0);
	cr_expect_eq(a, 0.0);
	/* and what a read says is what advancing makes */
	read3(T0 + us(1234), &rc, &rt, &a);
	mwp_dcqcn_advance(&s, &c, T0 + us(1234));
	cr_expect_eq(s.rc, rc);
	cr_expect_eq(s.rt, rt);
	cr_expect_eq(s.alpha, a);
}

/* ---- increases ---- */

Test(dcqcn, the_timer_makes_one_increase_each_rpg_time_reset)
{
	const uint64_t tr = us(p.rpg_time_reset);
	uint64_t t2;
	double rc, rt;

	ready();
	t2 = two_cuts();
	rc = s.rc;
	rt = s.rt;
	mwp_dcqcn_advance(&s, &c, t2 + tr - 1);
	cr_expect_eq(s.st.increases, 0);
	cr_expect_eq(s.t_stage, 0);
	cr_expect_eq(s.rc, rc);
	/* F = 1: T = 1 makes max(T, BC) = F, additive */
	mwp_dcqcn_advance(&s, &c, t2 + tr);
	cr_expect_eq(s.st.increases, 1);
	cr_expect_eq(s.t_stage, 1);
	rt += p.rpg_ai_rate;
	rc = (rt + rc) / 2;
	EXPECT_NEAR(s.rt, rt);
	EXPECT_NEAR(s.rc, rc);
	/* three periods at once: three events (T = 2, 3, 4: min(T, BC) = 0) */
	mwp_dcqcn_advance(&s, &c, t2 + 4 * tr + tr / 2);
	cr_expect_eq(s.st.increases, 4);
	cr_expect_eq(s.t_stage, 4);
	for (int i = 0; i < 3; i++) {
		rt += p.rpg_ai_rate;
		rc = (rt + rc) / 2;
	}
	EXPECT_NEAR(s.rt, rt);
	EXPECT_NEAR(s.rc, rc);
	/* the half period is kept: the next at t2 + 5 tr */
	mwp_dcqcn_advance(&s, &c, t2 + 5 * tr - 1);
	cr_expect_eq(s.st.increases, 4);
	mwp_dcqcn_advance(&s, &c, t2 + 5 * tr);
	cr_expect_eq(s.st.increases, 5);
}

/*
 * With F = 3, the stages one after the other: T = 1, 2 fast recovery;
 * T = 3 additive; BC = 1..4 (T = 3) additive; T = 4 with BC = 4 hyper by
 * 1 * rpg_hai_rate; BC = 5 hyper by 1; T = 5, BC = 5 hyper by 2.
 * upto: how many of those steps to check.
 */
static void
stages(int upto)
{
	uint64_t t2, tr;
	double rc, rt;
	int step = 0;

	p.rpg_threshold = 3;
	p.rpg_byte_reset = 10000;
	ready();
	tr = us(p.rpg_time_reset);
	t2 = two_cuts();
	rc = s.rc;
	rt = s.rt;

	/* fast recovery: max(T, BC) < F */
	for (int T = 1; T <= 2; T++) {
		mwp_dcqcn_advance(&s, &c, t2 + T * tr);
		rc = (rt + rc) / 2;
		cr_assert_eq(s.t_stage, (uint32_t)T);
		cr_assert_eq(s.bc_stage, 0);
		ASSERT_NEAR(s.rt, rt);
		ASSERT_NEAR(s.rc, rc);
		if (++step == upto)
			return;
	}
	/* additive: max(T, BC) >= F, min(T, BC) <= F */
	mwp_dcqcn_advance(&s, &c, t2 + 3 * tr);
	rt += p.rpg_ai_rate;
	rc = (rt + rc) / 2;
	cr_assert_eq(s.t_stage, 3);
	ASSERT_NEAR(s.rt, rt);
	ASSERT_NEAR(s.rc, rc);
	if (++step == upto)
		return;
	for (int BC = 1; BC <= 4; BC++) {
		/* 10 frames of 1000 bytes: one byte-counter event */
		for (int f = 0; f < 10; f++)
			mwp_dcqcn_sent(&s, &c, 1000, t2 + 3 * tr + 1);
		rt += p.rpg_ai_rate;
		rc = (rt + rc) / 2;
		cr_assert_eq(s.t_stage, 3);
		cr_assert_eq(s.bc_stage, (uint32_t)BC);
		ASSERT_NEAR(s.rt, rt);
		ASSERT_NEAR(s.rc, rc);
		if (++step == upto)
			return;
	}
	/* hyper: min(T, BC) > F, R_T += (min(T, BC) - F) * rpg_hai_rate */
	mwp_dcqcn_advance(&s, &c, t2 + 4 * tr);
	rt += (4 - 3) * p.rpg_hai_rate;
	rc = (rt + rc) / 2;
	cr_assert_eq(s.t_stage, 4);
	cr_assert_eq(s.bc_stage, 4);
	ASSERT_NEAR(s.rt, rt);
	ASSERT_NEAR(s.rc, rc);
	mwp_dcqcn_sent(&s, &c, 10000, t2 + 4 * tr + 1);
	rt += (4 - 3) * p.rpg_hai_rate;	/* T = 4, BC = 5 */
	rc = (rt + rc) / 2;
	cr_assert_eq(s.bc_stage, 5);
	ASSERT_NEAR(s.rt, rt);
	ASSERT_NEAR(s.rc, rc);
	mwp_dcqcn_advance(&s, &c, t2 + 5 * tr);
	rt += (5 - 3) * p.rpg_hai_rate;	/* T = 5, BC = 5 */
	rc = (rt + rc) / 2;
	cr_assert_eq(s.t_stage, 5);
	ASSERT_NEAR(s.rt, rt);
	ASSERT_NEAR(s.rc, rc);
	cr_expect_eq(s.st.increases, 10);
	cr_expect(s.limited);
}

Test(dcqcn, fast_recovery_while_max_of_t_and_bc_is_below_rpg_threshold)
{
	stages(2);
	cr_expect_eq(s.st.increases, 2);
}

Test(dcqcn, additive_increase_once_max_of_t_and_bc_reaches_rpg_threshold)
{
	stages(7);
	cr_expect_eq(s.st.increases, 7);
}

Test(dcqcn, hyper_increase_once_min_of_t_and_bc_passes_rpg_threshold)
{
	stages(-1);
}

Test(dcqcn, the_byte_counter_makes_one_increase_each_rpg_byte_reset_bytes)
{
	uint64_t t2, t;
	double rc, rt;

	ready();
	t2 = two_cuts();
	t = t2 + 1;
	rc = s.rc;
	rt = s.rt;
	/* 32766 bytes: none yet */
	for (int i = 0; i < 31; i++)
		mwp_dcqcn_sent(&s, &c, 1024, t);
	mwp_dcqcn_sent(&s, &c, 32766 - 31 * 1024, t);
	cr_expect_eq(s.st.increases, 0);
	cr_expect_eq(s.bc_stage, 0);
	EXPECT_NEAR(s.rc, rc);
	/* the 32767th: BC = 1 = F, additive */
	mwp_dcqcn_sent(&s, &c, 1, t);
	cr_expect_eq(s.st.increases, 1);
	cr_expect_eq(s.bc_stage, 1);
	cr_expect_eq(s.t_stage, 0);
	rt += 5;
	rc = (rt + rc) / 2;
	EXPECT_NEAR(s.rt, rt);
	EXPECT_NEAR(s.rc, rc);
	/* 2.5 times the count at once: two events, half a count left */
	mwp_dcqcn_sent(&s, &c, 32767 * 2 + 16383, t);
	cr_expect_eq(s.st.increases, 3);
	cr_expect_eq(s.bc_stage, 3);
	for (int i = 0; i < 2; i++) {
		rt += 5;
		rc = (rt + rc) / 2;
	}
	EXPECT_NEAR(s.rt, rt);
	EXPECT_NEAR(s.rc, rc);
	mwp_dcqcn_sent(&s, &c, 16383, t);
	cr_expect_eq(s.st.increases, 3);
	mwp_dcqcn_sent(&s, &c, 1, t);
	cr_expect_eq(s.st.increases, 4);
	cr_expect_eq(s.bc_stage, 4);

	/* a cut starts the count again */
	mwp_dcqcn_sent(&s, &c, 32766, t);
	cr_assert(mwp_dcqcn_cnp(&s, &c, t2 + us(p.rate_reduce_monitor_period)));
	cr_expect_eq(s.bc_stage, 0);
	mwp_dcqcn_sent(&s, &c, 1, t2 + us(p.rate_reduce_monitor_period));
	cr_expect_eq(s.st.increases, 4);
	cr_expect_eq(s.bc_stage, 0);
}

Test(dcqcn, a_cut_starts_the_timer_and_both_stages_again)
{
	const uint64_t tr = us(p.rpg_time_reset);
	uint64_t t;

	p.rpg_byte_reset = 1000;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	mwp_dcqcn_advance(&s, &c, T0 + 2 * tr);
	mwp_dcqcn_sent(&s, &c, 3000, T0 + 2 * tr);
	cr_assert_eq(s.t_stage, 2);
	cr_assert_eq(s.bc_stage, 3);
	/* a cut half a period after the second timer event */
	t = T0 + 2 * tr + tr / 2;
	cr_assert(mwp_dcqcn_cnp(&s, &c, t));
	cr_expect_eq(s.t_stage, 0);
	cr_expect_eq(s.bc_stage, 0);
	cr_expect_eq(s.st.increases, 5);
	/* the next timer event a whole rpg_time_reset after the cut */
	mwp_dcqcn_advance(&s, &c, T0 + 3 * tr);
	cr_expect_eq(s.st.increases, 5);
	mwp_dcqcn_advance(&s, &c, t + tr - 1);
	cr_expect_eq(s.st.increases, 5);
	mwp_dcqcn_advance(&s, &c, t + tr);
	cr_expect_eq(s.st.increases, 6);
	cr_expect_eq(s.t_stage, 1);
}

Test(dcqcn, a_qp_comes_back_to_the_line_rate_and_is_unpaced_again)
{
	double rc, rt, a;

	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	/* after one timer event, still limited */
	mwp_dcqcn_advance(&s, &c, T0 + us(p.rpg_time_reset));
	cr_expect(s.limited);
	cr_expect_lt(s.rc, 100000.0);
	/* after 1 s (3333 events, R_C halving its way to R_T = max) */
	mwp_dcqcn_advance(&s, &c, T0 + us(1000000));
	cr_expect(!s.limited);
	cr_expect_eq(s.rc, 100000.0);
	cr_expect_eq(s.rt, 100000.0);
	cr_expect_gt(s.st.increases, 1);
	cr_expect_lt(s.st.increases, 3333);
	read3(T0 + us(1000000), &rc, &rt, &a);
	cr_expect_eq(a, 0.0);
	/* unpaced: any number of frames at once */
	for (int i = 0; i < 1000; i++) {
		cr_assert(mwp_dcqcn_may_send(&s, &c, T0 + us(1000000)));
		mwp_dcqcn_sent(&s, &c, 4096, T0 + us(1000000));
	}
	cr_expect(!s.limited);
	cr_expect_eq(s.st.paced, 0);
	/* the next CNP is a first one again: alpha from initial_alpha_value */
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0 + us(1000001)));
	cr_expect(s.limited);
	EXPECT_NEAR(s.rt, 100000.0);
	EXPECT_NEAR(s.rc, cut(100000.0, alpha0()));
	EXPECT_NEAR(s.alpha, bump(alpha0()));
	cr_expect_eq(s.t_stage, 0);
	cr_expect_eq(s.bc_stage, 0);
}

Test(dcqcn, sending_alone_brings_a_qp_back_to_the_line_rate)
{
	uint64_t t = T0;

	p.rpg_byte_reset = 1000;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	/* T stays 0: additive steps of 5 Mb/s to R_T = max, R_C halving
	 * toward it; all within the first timer period */
	for (int i = 0; i < 2000 && s.limited; i++, t += 10)
		mwp_dcqcn_sent(&s, &c, 65535, t);
	cr_assert_lt(t, T0 + us(p.rpg_time_reset));
	cr_expect(!s.limited);
	cr_expect_eq(s.rc, 100000.0);
	cr_expect_eq(s.rt, 100000.0);
	cr_expect_eq(s.t_stage, 0);
}

Test(dcqcn, steps_and_one_jump_give_the_same_rates)
{
	struct mwp_dcqcn jump;
	uint64_t now;

	p.rpg_threshold = 5;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	memcpy(&jump, &s, sizeof(s));
	for (now = T0; now <= T0 + us(3000); now += us(7.3))
		mwp_dcqcn_advance(&s, &c, now);
	mwp_dcqcn_advance(&s, &c, now);
	mwp_dcqcn_advance(&jump, &c, now);
	cr_expect_eq(s.st.increases, jump.st.increases);
	cr_expect_eq(s.st.increases, 10);
	cr_expect_eq(s.t_stage, jump.t_stage);
	EXPECT_NEAR(s.rc, jump.rc);
	EXPECT_NEAR(s.rt, jump.rt);
	EXPECT_NEAR(s.alpha, jump.alpha);
}

Test(dcqcn, rate_to_set_on_first_cnp_is_the_rate_the_first_cnp_sets)
{
	double rc, rt, a;

	p.rate_to_set_on_first_cnp = 20000;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	cr_expect(s.limited);
	cr_expect_eq(s.st.cuts, 1);
	EXPECT_NEAR(s.rc, 20000.0);
	EXPECT_NEAR(s.rt, 20000.0);
	/* the next cut is from there */
	read3(T0 + us(4), &rc, &rt, &a);
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0 + us(4)));
	EXPECT_NEAR(s.rt, 20000.0);
	EXPECT_NEAR(s.rc, cut(20000.0, a));
	EXPECT_NEAR(s.alpha, bump(a));
	/* above the maximum: the maximum */
	p.rate_to_set_on_first_cnp = 200000;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	cr_expect_leq(s.rc, 100000.0);
	cr_expect_leq(s.rt, 100000.0);
}

/* ---- the pacer ---- */

Test(dcqcn, the_pacer_holds_the_next_frame_l_times_8_over_r_us)
{
	p.rate_to_set_on_first_cnp = 1000;	/* 8 ns a byte */
	p.rpg_time_reset = 100000000;
	p.rpg_byte_reset = UINT32_MAX;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	cr_assert(mwp_dcqcn_may_send(&s, &c, T0));
	mwp_dcqcn_sent(&s, &c, 1500, T0);
	/* 1500 * 8 / 1000 = 12 us */
	cr_expect(!mwp_dcqcn_may_send(&s, &c, T0 + 1));
	cr_expect(!mwp_dcqcn_may_send(&s, &c, T0 + 11999));
	cr_expect_eq(s.st.paced, 2);
	cr_expect(mwp_dcqcn_may_send(&s, &c, T0 + 12000));
	cr_expect_eq(s.st.paced, 2);
	/* sent on time: the next 12 us after that */
	mwp_dcqcn_sent(&s, &c, 1500, T0 + 12000);
	cr_expect(!mwp_dcqcn_may_send(&s, &c, T0 + 23999));
	cr_expect(mwp_dcqcn_may_send(&s, &c, T0 + 24000));
	/* a 64 byte frame: 0.512 us */
	mwp_dcqcn_sent(&s, &c, 64, T0 + 24000);
	cr_expect(!mwp_dcqcn_may_send(&s, &c, T0 + 24511));
	cr_expect(mwp_dcqcn_may_send(&s, &c, T0 + 24512));
	cr_expect_eq(s.st.paced, 4);
}

Test(dcqcn, the_pacer_at_the_cut_rate_on_a_2_5_ghz_clock)
{
	double r, next;
	uint64_t t;

	hz = UINT64_C(2500000000);
	p.rpg_time_reset = 100000000;
	p.rpg_byte_reset = UINT32_MAX;
	ready();
	t = 3 * hz;
	cr_assert(mwp_dcqcn_cnp(&s, &c, t));
	r = 100000.0 * (1 - 1023.0 / 2048);	/* Mb/s */
	ASSERT_NEAR(s.rc, r);
	/* each frame sent at the first tick it may be: the next time moves
	 * by L * 8 / R us from the exact time before, not the rounded one */
	next = (double)t;
	for (uint32_t len = 64; len <= 9000; len = len * 3 + 1) {
		cr_assert(mwp_dcqcn_may_send(&s, &c, t), "len %u: held", len);
		mwp_dcqcn_sent(&s, &c, len, t);
		next += len * 8 / r * (double)hz / 1e6;
		cr_expect(!mwp_dcqcn_may_send(&s, &c, (uint64_t)ceil(next) - 1),
			  "after len %u: sent %.3f ticks early", len, next - (ceil(next) - 1));
		t = (uint64_t)ceil(next);
	}
	cr_expect(mwp_dcqcn_may_send(&s, &c, t));
	cr_expect_gt(s.st.paced, 0);
}

Test(dcqcn, the_pacer_keeps_the_rate_over_a_run_without_rounding_it)
{
	const uint64_t d = 10000;	/* ticks: 10 ms */
	uint64_t frames = 0, now;
	double expect;

	hz = 1000000;			/* 1 tick = 1 us */
	p.rate_to_set_on_first_cnp = 1000;
	p.rpg_time_reset = 100000000;
	p.rpg_byte_reset = UINT32_MAX;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, 5000000));
	/* 1024 bytes at 1000 Mb/s: 8.192 us a frame, on a 1 us clock */
	for (now = 5000000; now < 5000000 + d; now++)
		while (mwp_dcqcn_may_send(&s, &c, now)) {
			mwp_dcqcn_sent(&s, &c, 1024, now);
			frames++;
		}
	expect = (double)d / (1024 * 8 / 1000.0);
	cr_expect_geq((double)frames, expect - 1, "%lu frames, expected %.1f",
		      (unsigned long)frames, expect);
	cr_expect_leq((double)frames, expect + 1, "%lu frames, expected %.1f",
		      (unsigned long)frames, expect);
	cr_expect_gt(s.st.paced, 0);
}

/*
 * After a pause, a QP may send the frame due now and catch up by burst
 * bytes more (mwp_dcqcn.h: the next-send time starts no earlier than now -
 * burst): burst / L + 1 frames back to back, no more however long the
 * pause, and then the rate again.
 */
static void
check_burst(uint32_t burst, uint32_t len, uint64_t pause)
{
	const uint64_t tpb = 8;		/* ticks a byte at 1000 Mb/s, 1 ns ticks */
	uint64_t now, n = 0;

	p.rate_to_set_on_first_cnp = 1000;
	p.rpg_time_reset = 100000000;
	p.rpg_byte_reset = UINT32_MAX;
	p.burst = burst;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	mwp_dcqcn_sent(&s, &c, len, T0);
	now = T0 + pause;
	while (mwp_dcqcn_may_send(&s, &c, now) && n < 1000) {
		mwp_dcqcn_sent(&s, &c, len, now);
		n++;
	}
	cr_expect_eq(n, burst / len + 1, "burst %u, frames of %u after %lu ns: %lu at once",
		     burst, len, (unsigned long)pause, (unsigned long)n);
	cr_expect_leq((n - 1) * len, burst);
	/* then the rate: the next at now - burst + n * len bytes' time */
	cr_expect(!mwp_dcqcn_may_send(&s, &c, now + (n * len - burst) * tpb - 1));
	cr_expect(mwp_dcqcn_may_send(&s, &c, now + (n * len - burst) * tpb));
}

Test(dcqcn, a_qp_that_paused_catches_up_by_burst_bytes_at_most)
{
	check_burst(4096, 1024, us(1000000));
	check_burst(4096, 1024, us(50000000));	/* before a timer increase */
	check_burst(4096, 1000, us(1000000));
	check_burst(4096, 4096, us(1000000));
	check_burst(64, 1024, us(1000000));
	check_burst(65536, 1500, us(1000000));
}

Test(dcqcn, a_short_pause_gives_only_the_time_it_lasted)
{
	uint64_t now, n = 0;

	p.rate_to_set_on_first_cnp = 1000;	/* 8 ns a byte */
	p.rpg_time_reset = 100000000;
	p.rpg_byte_reset = UINT32_MAX;
	ready();
	cr_assert(mwp_dcqcn_cnp(&s, &c, T0));
	mwp_dcqcn_sent(&s, &c, 1000, T0);	/* next at T0 + 8 us */
	/* 2000 bytes' time (16 us) late: that frame and 2 more */
	now = T0 + 8000 + 16000;
	while (mwp_dcqcn_may_send(&s, &c, now) && n < 100) {
		mwp_dcqcn_sent(&s, &c, 1000, now);
		n++;
	}
	cr_expect_eq(n, 3);
}

/* ---- the parameters ---- */

static void
check_fails(const char *name)
{
	char err[128] = "";

	cr_expect_eq(mwp_dcqcn_params_check(&p, err, sizeof(err)), -EINVAL, "%s passes", name);
	cr_expect(strstr(err, name) != NULL, "\"%s\" does not name %s", err, name);
	mwp_dcqcn_defaults(&p);
}

Test(dcqcn, the_defaults_are_connectx_s_and_pass_the_check)
{
	char err[128] = "";

	cr_expect_eq(p.rpg_max_rate, 0);
	cr_expect_eq(p.rpg_min_rate, 1);
	cr_expect_eq(p.rpg_ai_rate, 5);
	cr_expect_eq(p.rpg_hai_rate, 50);
	cr_expect_eq(p.rpg_time_reset, 300);
	cr_expect_eq(p.rpg_byte_reset, 32767);
	cr_expect_eq(p.rpg_threshold, 1);
	cr_expect_eq(p.rpg_gd, 11);
	cr_expect_eq(p.rpg_min_dec_fac, 50);
	cr_expect_eq(p.rate_to_set_on_first_cnp, 0);
	cr_expect_eq(p.rate_reduce_monitor_period, 4);
	cr_expect_eq(p.dce_tcp_g, 1019);
	cr_expect_eq(p.dce_tcp_rtt, 1);
	cr_expect_eq(p.initial_alpha_value, 1023);
	cr_expect_eq(p.burst, 4096);
	cr_expect_eq(mwp_dcqcn_params_check(&p, err, sizeof(err)), 0, "%s", err);
}

Test(dcqcn, parameters_out_of_range_fail_naming_the_parameter)
{
	char err[128];

	p.rpg_gd = 12;
	check_fails("rpg_gd");
	p.rpg_gd = 9;
	check_fails("rpg_gd");
	p.rpg_min_rate = 0;
	check_fails("rpg_min_rate");
	p.dce_tcp_rtt = 0;
	check_fails("dce_tcp_rtt");
	p.rpg_time_reset = 0;
	check_fails("rpg_time_reset");
	p.rpg_byte_reset = 0;
	check_fails("rpg_byte_reset");
	p.rpg_threshold = 0;
	check_fails("rpg_threshold");
	p.rpg_min_dec_fac = 101;
	check_fails("rpg_min_dec_fac");
	p.dce_tcp_g = 1024;
	check_fails("dce_tcp_g");
	p.initial_alpha_value = 0;
	check_fails("initial_alpha_value");
	p.initial_alpha_value = 1024;
	check_fails("initial_alpha_value");
	p.rpg_ai_rate = 0;
	check_fails("rpg_ai_rate");
	p.rpg_hai_rate = 0;
	check_fails("rpg_hai_rate");
	/* rpg_min_rate above rpg_max_rate */
	p.rpg_max_rate = 1000;
	p.rpg_min_rate = 2000;
	check_fails("rpg_min_rate");

	/* the edges pass */
	p.rpg_gd = 10;
	p.rpg_min_dec_fac = 100;
	p.rpg_max_rate = 1000;
	p.rpg_min_rate = 1000;
	p.dce_tcp_g = 1023;
	p.rate_reduce_monitor_period = 0;
	cr_expect_eq(mwp_dcqcn_params_check(&p, err, sizeof(err)), 0, "%s", err);
	p.dce_tcp_g = 0;
	p.rpg_min_dec_fac = 0;
	p.rpg_gd = 11;
	cr_expect_eq(mwp_dcqcn_params_check(&p, err, sizeof(err)), 0, "%s", err);
}
