/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hashed timer wheel (Varghese and Lauck, "Hashed and hierarchical
 * timing wheels", SOSP 1987, scheme 6): a timer hangs in the slot of its
 * deadline modulo the wheel's span and keeps its absolute deadline, so a
 * run visits only the slots that time has passed and fires only the timers
 * that are due; the others wait for a later turn.
 */
#include <string.h>

#include "mwp_timer.h"

#define SLOT_MASK (MWP_TIMER_SLOTS - 1)

/* about 4 us a slot: the shortest RoCE timers (RNR 10 us, a local ACK
 * timeout of 8 us) then fire at most one slot late */
#define SLOT_NS 4000

void
mwp_timer_wheel_init(struct mwp_timer_wheel *w, uint64_t tsc_hz, uint64_t now)
{
	uint64_t cycles = tsc_hz / (1000000000 / SLOT_NS);
	unsigned int shift = 0;

	memset(w, 0, sizeof(*w));
	while (shift < 40 && (UINT64_C(2) << shift) <= cycles)
		shift++;
	w->shift = shift;
	w->next = now >> shift;
	for (unsigned int i = 0; i < MWP_TIMER_SLOTS; i++)
		LIST_INIT(&w->slot[i]);
}

void
mwp_timer_init(struct mwp_timer *t, mwp_timer_fn fn)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
}

void
mwp_timer_cancel(struct mwp_timer_wheel *w, struct mwp_timer *t)
{
	if (!t->armed)
		return;
	LIST_REMOVE(t, link);
	t->armed = false;
	w->nb_armed--;
}

void
mwp_timer_arm(struct mwp_timer_wheel *w, struct mwp_timer *t, uint64_t deadline)
{
	uint64_t s = deadline >> w->shift;

	mwp_timer_cancel(w, t);
	/* a slot the wheel has passed already is run next */
	if (s < w->next)
		s = w->next;
	t->deadline = deadline;
	t->armed = true;
	LIST_INSERT_HEAD(&w->slot[s & SLOT_MASK], t, link);
	w->nb_armed++;
}

unsigned int
mwp_timer_run(struct mwp_timer_wheel *w, uint64_t now)
{
	/* the slot time is in now is run once time has left it: a timer
	 * fires at most one slot late, never early */
	const uint64_t cur = now >> w->shift;
	unsigned int fired = 0, visited = 0;

	if (w->nb_armed == 0 || w->next >= cur) {
		if (w->nb_armed == 0 && cur > w->next)
			w->next = cur;
		return 0;
	}
	/* each passed slot once, and never more than a whole turn */
	for (uint64_t s = w->next; s < cur && visited < MWP_TIMER_SLOTS; s++, visited++) {
		struct mwp_timer_list *l = &w->slot[s & SLOT_MASK];
		struct mwp_timer *t, *nx;

		/* what a callback arms for a time already past goes into the
		 * next slot, so this loop ends */
		w->next = s + 1;
		for (t = LIST_FIRST(l); t != NULL; t = nx) {
			nx = LIST_NEXT(t, link);
			/* a later turn's timer waits */
			if (t->deadline > now)
				continue;
			mwp_timer_cancel(w, t);
			fired++;
			t->fn(t, now);
			/* the callback may have cancelled nx: start the slot
			 * over (what fired has left it) */
			nx = LIST_FIRST(l);
		}
	}
	w->next = cur;
	w->fired += fired;
	return fired;
}
