/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Criterion front end of owners_body.h (normal and ASan builds): two
 * polling lcores, one QP whose frames arrive on both, binds and
 * invalidations on the other thread; test/unit/owners_long.c runs the
 * same body for 10^6 rounds.
 */
#include "owners_body.h"

#define ROUNDS 100000

static void
setup(void)
{
	ow_setup(ROUNDS);
}

TestSuite(owners, .init = setup, .fini = ow_teardown, .timeout = 600);

Test(owners, no_request_made_with_a_dead_key_is_executed_on_either_lcore)
{
	const uint64_t violations = ow_run(ROUNDS);
	const uint64_t executed = ow_executed();
	struct mwp_engine_stats es[2];
	unsigned int owner = ow.uc->qp_num % 2;

	mwp_engine_stats_get(ow.eng[0], &es[0]);
	mwp_engine_stats_get(ow.eng[1], &es[1]);
	cr_expect_eq(violations, 0, "%lu requests with a dead key executed",
		     (unsigned long)violations);
	cr_expect_eq(ow.dead_n, ROUNDS);
	/* the scenario ran: both lcores sent, some with dead keys, the
	 * owner executed live ones, the other handed its share over */
	cr_expect_gt(ow.sent[0], 1000);
	cr_expect_gt(ow.sent[1], 1000);
	cr_expect_gt(ow.sent_dead[0] + ow.sent_dead[1], 1000);
	cr_expect_gt(executed, 1000);
	cr_expect_gt(ow.handed[1 - owner], 0, "the other lcore handed frames to the owner");
	cr_expect_eq(ow.handed[owner], 0);
	cr_expect_eq(es[owner].qps, 1, "the owner runs the QP");
	cr_expect_eq(es[1 - owner].qps, 0);
	cr_log_info("%lu + %lu requests (%lu + %lu with dead keys), %lu executed, "
		    "%lu handed over, %lu binds deferred",
		    (unsigned long)ow.sent[0], (unsigned long)ow.sent[1],
		    (unsigned long)ow.sent_dead[0], (unsigned long)ow.sent_dead[1],
		    (unsigned long)executed, (unsigned long)ow.handed[1 - owner],
		    (unsigned long)es[owner].sq_deferred);
}
