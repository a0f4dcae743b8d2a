/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * owners_body.h as a plain program, for long runs (test_owners.c runs
 * 10^5 rounds in the suite).  Usage: owners_long [ROUNDS] (default
 * 10^6).  Exit 0 if no request made with a dead key was executed and the
 * scenario ran.
 */
#include <stdlib.h>

#define MWP_NO_CRITERION
#include "owners_body.h"

int
main(int argc, char **argv)
{
	const uint32_t rounds = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1000000;
	uint64_t violations, executed;
	bool ok;

	ow_setup(rounds);
	violations = ow_run(rounds);
	executed = ow_executed();
	ok = violations == 0 && ow.dead_n == rounds && executed > 0 &&
	     ow.sent_dead[0] + ow.sent_dead[1] > 0 && ow.handed[0] + ow.handed[1] > 0;
	printf("owners_long: %u rounds, %lu + %lu requests (%lu + %lu with dead keys), "
	       "%lu executed, %lu + %lu handed over, %lu violations\n", rounds,
	       (unsigned long)ow.sent[0], (unsigned long)ow.sent[1],
	       (unsigned long)ow.sent_dead[0], (unsigned long)ow.sent_dead[1],
	       (unsigned long)executed, (unsigned long)ow.handed[0],
	       (unsigned long)ow.handed[1], (unsigned long)violations);
	ow_teardown();
	printf("%d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
	return ok ? 0 : 1;
}
