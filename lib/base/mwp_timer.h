/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TIMER_H
#define MWP_TIMER_H

/**
 * @file
 * A hashed timer wheel for one thread (an engine's lcore): O(1) arming and
 * cancelling of timers embedded in their owners (one per QP, never one per
 * packet), and a run that costs nothing when no slot has come due.
 *
 * Time is the TSC.  A slot is 2^shift cycles wide (about 4 us); the wheel
 * spans MWP_TIMER_SLOTS slots, and a deadline further away waits in its
 * slot for as many turns as it needs (each entry keeps its absolute
 * deadline, so a timer never fires early).  A timer fires at most one slot
 * late.  Not thread-safe: one thread arms, cancels and runs.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

/** Slots of a wheel (a power of two). */
#define MWP_TIMER_SLOTS 1024

struct mwp_timer;

/**
 * What a timer does when it fires.  The timer is disarmed before the call,
 * so the callback may arm it (or any other timer of the wheel) again.
 *
 * @param t
 *   The timer.
 * @param now
 *   The time given to mwp_timer_run.
 */
typedef void (*mwp_timer_fn)(struct mwp_timer *t, uint64_t now);

/** A timer, embedded in its owner. */
struct mwp_timer {
	LIST_ENTRY(mwp_timer) link;	/**< in its slot, while armed */
	uint64_t deadline;		/**< TSC at which it fires */
	mwp_timer_fn fn;		/**< its callback */
	bool armed;			/**< in the wheel */
};

LIST_HEAD(mwp_timer_list, mwp_timer);

/** A wheel. */
struct mwp_timer_wheel {
	unsigned int shift;		/**< a slot is 2^shift TSC cycles */
	uint64_t next;			/**< the first slot number not yet run */
	uint32_t nb_armed;		/**< timers in the wheel */
	uint64_t fired;			/**< timers fired, ever */
	struct mwp_timer_list slot[MWP_TIMER_SLOTS];	/**< by slot number */
};

/**
 * Initialise a wheel.
 *
 * @param w
 *   The wheel.
 * @param tsc_hz
 *   TSC cycles per second (rte_get_tsc_hz()); a slot is the power of two
 *   of cycles nearest below 4 us.
 * @param now
 *   The current TSC.
 */
void mwp_timer_wheel_init(struct mwp_timer_wheel *w, uint64_t tsc_hz, uint64_t now);

/**
 * Initialise a timer (disarmed).
 *
 * @param t
 *   The timer.
 * @param fn
 *   Its callback.
 */
void mwp_timer_init(struct mwp_timer *t, mwp_timer_fn fn);

/**
 * Arm a timer, or move it if it is armed already.
 *
 * @param w
 *   The wheel.
 * @param t
 *   The timer.
 * @param deadline
 *   The TSC at which it fires; a deadline already past fires on the next
 *   run.
 */
void mwp_timer_arm(struct mwp_timer_wheel *w, struct mwp_timer *t, uint64_t deadline);

/**
 * Disarm a timer; nothing happens if it is not armed.
 *
 * @param w
 *   The wheel it is armed in.
 * @param t
 *   The timer.
 */
void mwp_timer_cancel(struct mwp_timer_wheel *w, struct mwp_timer *t);

/**
 * Fire every timer whose deadline is at or before now, each once, in no
 * particular order within a slot.
 *
 * @param w
 *   The wheel.
 * @param now
 *   The current TSC.
 * @return
 *   Timers fired.
 */
unsigned int mwp_timer_run(struct mwp_timer_wheel *w, uint64_t now);

/** Is the timer armed? */
static inline bool
mwp_timer_armed(const struct mwp_timer *t)
{
	return t->armed;
}

#endif /* MWP_TIMER_H */
