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

static void *
db_poller(void *arg)
{
	struct mwp_engine *e = arg;

	mwp_engine_start(e);
	while (!__atomic_load_n(&ow.stop, __ATOMIC_ACQUIRE))
		mwp_engine_run(e, rte_rdtsc());
	mwp_engine_stop(e);
	return NULL;
}

/* Both completions of a pair posted back to back, or false after 2 s. */
static bool
db_wait_two(void)
{
	const uint64_t end = rte_rdtsc() + 2 * rte_get_tsc_hz();
	struct ibv_wc wc[2];
	int got = 0;

	while (got < 2) {
		int n = ibv_poll_cq(cq, 2 - got, wc);

		/* no assertion per completion: --full-stats reports each */
		if (n < 0)
			abort();
		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "owners: wr %lu: status %d\n",
					(unsigned long)wc[i].wr_id, (int)wc[i].status);
				abort();
			}
		got += n;
		if (n == 0)
			sched_yield();	/* two CPUs: the poller needs one */
		if (rte_rdtsc() > end)
			return false;
	}
	return true;
}

/*
 * A work request posted while the engine serves the doorbell of the one
 * before: the engine clears the bell and reads the send queue, the poster
 * writes the queue and finds the bell rung.  Without a full fence between
 * the engine's clear and its read, the second request waits for ever
 * (a store buffer holds the clear while the read is done).  Pairs of
 * requests posted back to back, many times: every one completes.  That
 * window is nanoseconds wide: this did not catch the fence's removal in
 * three runs here; it guards the doorbell's hand-over as a whole (a bell
 * never cleared, or cleared after the read, fails it at once).
 */
Test(owners, a_work_request_posted_while_its_doorbell_is_served_is_run)
{
	unsigned int eid;
	uint16_t qid;
	pthread_t th;
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint64_t id = 0;
	uint32_t lost = 0, pairs;
	uint8_t kb = (uint8_t)w->rkey;

	FIX_ASSERT(w != NULL);
	FIX_ASSERT(mwp_qp_owner(ow.uc, &eid, &qid) == 0);
	ow_unpin(pthread_self());
	FIX_ASSERT(pthread_create(&th, NULL, db_poller, ow.eng[eid - 10]) == 0);
	ow_unpin(th);
	for (pairs = 0; pairs < 200000 && lost == 0; pairs++) {
		const uint32_t key = (w->rkey & ~0xffu) | ++kb;

		if (post_bind2(ow.uc, w, ow.mr, OW_VA, ow.region,
			       IBV_ACCESS_REMOTE_WRITE, kb, ++id) != 0 ||
		    post_local_inv(ow.uc, key, ++id, true) != 0)
			abort();
		if (!db_wait_two())
			lost++;
	}
	__atomic_store_n(&ow.stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	cr_expect_eq(lost, 0, "a work request waited for ever after %u pairs", pairs);
	cr_log_info("%u pairs of back-to-back work requests, all completed", pairs);
}
