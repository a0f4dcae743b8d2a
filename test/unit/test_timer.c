/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer wheel (lib/base/mwp_timer.c) on a clock the tests move: a timer
 * fires once, never before its deadline and at most one slot after it,
 * whatever turn of the wheel its deadline falls in; arming moves, cancel
 * stops; callbacks may arm and cancel.
 */
#include <stdlib.h>

#include <criterion/criterion.h>
#include <rte_common.h>

#include "mwp_timer.h"

#define HZ UINT64_C(2500000000)	/* a 2.5 GHz TSC */

static struct mwp_timer_wheel w;
static uint64_t slot;		/* a slot's width, cycles */

struct probe {
	struct mwp_timer t;
	unsigned int fired;
	uint64_t at;		/* now of the last firing */
	uint64_t rearm;		/* if not 0: arm again for now + rearm */
	struct probe *cancel;	/* if not NULL: cancel it when firing */
};

static void
fire(struct mwp_timer *t, uint64_t now)
{
	struct probe *p = container_of(t, struct probe, t);

	p->fired++;
	p->at = now;
	if (p->cancel != NULL)
		mwp_timer_cancel(&w, &p->cancel->t);
	if (p->rearm != 0)
		mwp_timer_arm(&w, &p->t, now + p->rearm);
}

static void
setup(void)
{
	mwp_timer_wheel_init(&w, HZ, 1000000);
	slot = UINT64_C(1) << w.shift;
}

TestSuite(timer, .init = setup);

static void
probe_init(struct probe *p)
{
	memset(p, 0, sizeof(*p));
	mwp_timer_init(&p->t, fire);
}

Test(timer, a_slot_is_about_4_us)
{
	cr_expect_geq(slot, HZ * 2 / 1000000, "slot %lu cycles", (unsigned long)slot);
	cr_expect_leq(slot, HZ * 4 / 1000000, "slot %lu cycles", (unsigned long)slot);
}

Test(timer, fires_once_at_its_deadline_never_before_at_most_a_slot_late)
{
	struct probe p;
	const uint64_t t0 = 1000000, dl = t0 + 1234567;

	probe_init(&p);
	mwp_timer_arm(&w, &p.t, dl);
	cr_expect(mwp_timer_armed(&p.t));
	for (uint64_t now = t0; now < dl; now += slot / 3)
		cr_assert_eq(mwp_timer_run(&w, now), 0, "fired %lu early",
			     (unsigned long)(dl - now));
	for (uint64_t now = dl; now <= dl + 2 * slot; now += slot / 3)
		mwp_timer_run(&w, now);
	cr_expect_eq(p.fired, 1);
	cr_expect_geq(p.at, dl);
	cr_expect_leq(p.at, dl + slot + slot / 3);
	cr_expect(!mwp_timer_armed(&p.t));
	cr_expect_eq(w.nb_armed, 0);
}

Test(timer, a_deadline_turns_of_the_wheel_away_waits_for_its_turn)
{
	struct probe p;
	/* 3.5 turns away: its slot comes round three times before */
	const uint64_t dl = 1000000 + (MWP_TIMER_SLOTS * 7 / 2) * slot;

	probe_init(&p);
	mwp_timer_arm(&w, &p.t, dl);
	for (uint64_t now = 1000000; now < dl; now += slot)
		cr_assert_eq(mwp_timer_run(&w, now), 0);
	mwp_timer_run(&w, dl + slot);
	cr_expect_eq(p.fired, 1);
}

Test(timer, a_run_after_a_long_pause_fires_everything_due_once)
{
	struct probe p[50];

	for (int i = 0; i < 50; i++) {
		probe_init(&p[i]);
		mwp_timer_arm(&w, &p[i].t, 1000000 + (uint64_t)i * 977 * slot);
	}
	/* many turns later, in one run */
	cr_expect_eq(mwp_timer_run(&w, 1000000 + UINT64_C(50) * 977 * slot), 50);
	for (int i = 0; i < 50; i++)
		cr_expect_eq(p[i].fired, 1, "timer %d", i);
	cr_expect_eq(mwp_timer_run(&w, 1000000 + UINT64_C(100) * 977 * slot), 0);
}

Test(timer, cancel_stops_it_and_arming_again_moves_it)
{
	struct probe a, b;

	probe_init(&a);
	probe_init(&b);
	mwp_timer_arm(&w, &a.t, 1000000 + 10 * slot);
	mwp_timer_cancel(&w, &a.t);
	mwp_timer_cancel(&w, &a.t);	/* twice: nothing */
	mwp_timer_arm(&w, &b.t, 1000000 + 10 * slot);
	mwp_timer_arm(&w, &b.t, 1000000 + 500 * slot);	/* moved later */
	mwp_timer_run(&w, 1000000 + 20 * slot);
	cr_expect_eq(a.fired, 0);
	cr_expect_eq(b.fired, 0);
	mwp_timer_run(&w, 1000000 + 502 * slot);
	cr_expect_eq(b.fired, 1);
	cr_expect_eq(w.nb_armed, 0);
}

Test(timer, a_past_deadline_fires_on_the_next_run)
{
	struct probe p;

	probe_init(&p);
	mwp_timer_run(&w, 1000000 + 100 * slot);
	mwp_timer_arm(&w, &p.t, 5);
	mwp_timer_run(&w, 1000000 + 102 * slot);
	cr_expect_eq(p.fired, 1);
}

Test(timer, a_callback_that_arms_itself_for_now_does_not_loop)
{
	struct probe p;

	probe_init(&p);
	p.rearm = 1;	/* one cycle after now: due at once */
	mwp_timer_arm(&w, &p.t, 1000000 + slot);
	mwp_timer_run(&w, 1000000 + 3 * slot);
	cr_expect_leq(p.fired, 3, "fired %u times in one run", p.fired);
	cr_expect(mwp_timer_armed(&p.t));
}

Test(timer, a_callback_may_cancel_the_next_timer_of_its_slot)
{
	struct probe a, b;
	const uint64_t dl = 1000000 + 7 * slot;

	probe_init(&a);
	probe_init(&b);
	/* both in one slot; whichever fires first cancels the other */
	a.cancel = &b;
	b.cancel = &a;
	mwp_timer_arm(&w, &a.t, dl);
	mwp_timer_arm(&w, &b.t, dl);
	cr_expect_eq(mwp_timer_run(&w, dl + 2 * slot), 1);
	cr_expect_eq(a.fired + b.fired, 1);
	cr_expect_eq(w.nb_armed, 0);
}

Test(timer, ten_thousand_random_deadlines_each_fire_once_in_their_window)
{
	enum { N = 10000 };
	struct probe *p = calloc(N, sizeof(*p));
	uint64_t dl[N], now = 1000000, end = 0;
	unsigned int bad = 0, fired = 0;

	cr_assert_not_null(p);
	srand(7);
	for (int i = 0; i < N; i++) {
		probe_init(&p[i]);
		/* up to five turns away */
		dl[i] = now + (uint64_t)rand() % (5 * MWP_TIMER_SLOTS * slot);
		mwp_timer_arm(&w, &p[i].t, dl[i]);
		end = RTE_MAX(end, dl[i]);
	}
	/* runs at uneven steps, some of them long */
	while (now <= end + 2 * slot) {
		now += (uint64_t)(rand() % 3 == 0 ? rand() % (40 * slot) : rand() % slot) + 1;
		fired += mwp_timer_run(&w, now);
	}
	for (int i = 0; i < N; i++)
		bad += p[i].fired != 1 || p[i].at < dl[i];
	cr_expect_eq(fired, N);
	cr_expect_eq(bad, 0, "%u timers fired early, late twice or never", bad);
	free(p);
}
