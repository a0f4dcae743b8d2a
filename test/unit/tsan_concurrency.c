/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * concurrency_body.h as a plain program, for the ThreadSanitizer build
 * (Criterion's runner does not survive TSan).  Exit 0 if no violation.
 */
#define MWP_NO_CRITERION
#include "concurrency_body.h"

int
main(void)
{
	bool ok;

	verbs_setup();
	run_concurrency();
	ok = violations == 0 && held_violations == 0 &&
	     live_hits == WINDOWS * 256 / 8 && passes > 100;
	printf("tsan_concurrency: %lu reader passes, %lu dead-key lookups, %lu held, "
	       "%lu violations, %lu held violations\n",
	       (unsigned long)passes, (unsigned long)lookups, (unsigned long)live_hits,
	       (unsigned long)violations, (unsigned long)held_violations);
	verbs_teardown();
	printf("%d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
	return ok ? 0 : 1;
}
