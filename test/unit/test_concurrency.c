/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Criterion front end of concurrency_body.h (normal and ASan builds);
 * test/unit/tsan_concurrency.c runs the same body under ThreadSanitizer.
 */
#include "concurrency_body.h"

TestSuite(concurrency, .init = verbs_setup, .fini = verbs_teardown, .timeout = 300);

Test(concurrency, after_an_invalidate_completion_no_reader_resolves_the_old_key)
{
	run_concurrency();
	cr_expect_eq(violations, 0, "a dead key resolved %lu times", (unsigned long)violations);
	cr_expect_eq(held_violations, 0, "a completion came while a reader held the key");
	cr_expect_eq(live_hits, WINDOWS * 256 / 8, "held across %lu invalidations",
		     (unsigned long)live_hits);
	cr_expect_gt(passes, 100, "the reader barely ran (%lu passes)", (unsigned long)passes);
	cr_expect_gt(lookups, 10000);
	cr_log_info("%lu reader passes, %lu dead-key lookups, %lu held, %u dead keys",
		    (unsigned long)passes, (unsigned long)lookups,
		    (unsigned long)live_hits, dead_n);
}
