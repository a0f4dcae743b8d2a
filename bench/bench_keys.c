/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_keys: the R_Key table and the bind/invalidate path.
 *
 *   1. Lookup cost, ns per key, bursts of 32 random live keys
 *      (mwp_keys_lookup_burst), with 1K, 64K and 1M live keys; single
 *      lookups (mwp_keys_lookup) beside it to show what the bulk call buys.
 *   2. Binds plus invalidates per second through the verbs (Type 2
 *      IBV_WR_BIND_MW + IBV_WR_LOCAL_INV, each waited for through
 *      ibv_poll_cq), on a device with 64K live keys; without readers, and
 *      with one reader lcore reporting quiescent states in a loop as the
 *      poll loop does (each invalidation then waits for a grace period).
 *
 * Each figure is the median of RUNS runs.  Usage: bench_keys [--quick] [--json FILE]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "mwpath.h"
#include "rkey_tbl.h"
#include "bench_util.h"

#define RUNS 5
#define BURST 32

static bool quick;
static volatile uint64_t sink;
static json_t *doc;		/* the --json document */

/* ---- 1. lookups ---- */

static void
bench_lookup(uint32_t live)
{
	static struct rte_rcu_qsbr *rcu;
	const uint32_t nq = quick ? 1 << 14 : 1 << 20;	/* queries per run */
	struct mwp_key_table *t;
	uint32_t *keys, *q;
	double burst[RUNS], single[RUNS];
	char name[32];

	if (rcu == NULL) {
		rcu = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
		rte_rcu_qsbr_init(rcu, 1);
	}
	snprintf(name, sizeof(name), "bench_keys_%u", live);
	t = mwp_keys_create(name, live, rcu, SOCKET_ID_ANY);
	keys = malloc(sizeof(*keys) * live);
	q = malloc(sizeof(*q) * nq);
	if (t == NULL || keys == NULL || q == NULL) {
		fprintf(stderr, "bench_keys: no memory for %u keys (%s)\n", live,
			rte_strerror(rte_errno));
		exit(1);
	}
	/* keys as mwpath makes them: index << 8 | key byte */
	for (uint32_t i = 0; i < live; i++) {
		struct mwp_binding *b = mwp_binding_alloc(t);

		keys[i] = ((0x800000u + i) << 8) | (i * 37 & 0xff);
		b->rkey = keys[i];
		b->length = 4096;
		if (mwp_keys_publish(t, b) != 0) {
			fprintf(stderr, "bench_keys: publish %u failed\n", i);
			exit(1);
		}
	}
	srand(7);
	for (uint32_t i = 0; i < nq; i++)
		q[i] = keys[(uint32_t)rand() % live];

	for (int r = 0; r < RUNS; r++) {
		const struct mwp_binding *out[BURST];
		uint64_t found = 0;
		double t0 = now_ns();

		for (uint32_t i = 0; i < nq; i += BURST)
			found += mwp_keys_lookup_burst(t, &q[i], BURST, out);
		burst[r] = (now_ns() - t0) / nq;
		t0 = now_ns();
		for (uint32_t i = 0; i < nq; i++)
			found += mwp_keys_lookup(t, q[i]) != NULL;
		single[r] = (now_ns() - t0) / nq;
		if (found != 2ull * nq)
			fprintf(stderr, "bench_keys: lookups missed\n");
		sink += found;
	}
	printf("%-34s %8u %12.1f %12.1f\n", "lookup, ns/key", live,
	       median(burst, RUNS), median(single, RUNS));
	for (int k = 0; k < 2; k++) {
		double ns = k == 0 ? median(burst, RUNS) : median(single, RUNS);
		json_t *res;

		snprintf(name, sizeof(name), "%s_%ukeys", k == 0 ? "lookup_burst" : "lookup_one",
			 live);
		res = bench_json_result(doc, name);
		bench_json_str(res, "series", k == 0 ? "lookup_burst" : "lookup_one");
		bench_json_int(res, "keys", live);
		bench_json_num(res, "ns_per_key", ns);
		bench_json_num(res, "mops", 1e3 / ns);
	}
	mwp_keys_free(t);
	free(keys);
	free(q);
}

/* ---- 2. binds and invalidates ---- */

static struct ibv_context *ctx;
static bool reader_stop;

/* An lcore that reads nothing but reports quiescent states, as the poll
 * loop does once per iteration. */
static int
reader(void *arg)
{
	(void)arg;
	mwp_reader_register(ctx, 0);
	while (!__atomic_load_n(&reader_stop, __ATOMIC_ACQUIRE))
		mwp_reader_quiescent(ctx, 0);
	mwp_reader_unregister(ctx, 0);
	return 0;
}

static void
wait_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	for (;;) {
		mwp_poll(ctx);
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			break;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "bench_keys: %s\n", ibv_wc_status_str(wc.status));
		exit(1);
	}
}

static void
bench_bind(bool with_reader)
{
	const uint32_t live = 65536, cycles = quick ? 500 : 20000;
	struct mwp_device_attr da = { .max_keys = live + 1024, .socket = SOCKET_ID_ANY };
	static uint8_t buf[4096];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	unsigned int lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
	double rate[RUNS];

	ctx = mwp_open_device(&da);
	pd = mwp_alloc_pd(ctx);
	cq = mwp_create_cq(ctx, 64);
	qp = bench_rts_qp(pd, cq, IBV_QPT_RC);
	mr = mwp_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	for (uint32_t i = 1; i < live; i++)	/* fill the table */
		mwp_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (with_reader) {
		if (lcore >= RTE_MAX_LCORE) {
			printf("%-34s %8u %12s\n", "bind+inval/s, 1 reader", live,
			       "(needs a second lcore)");
			mwp_close_device(ctx);
			return;
		}
		reader_stop = false;
		rte_eal_remote_launch(reader, NULL, lcore);
	}
	/* the window's key is the consumer's to keep (Type 2) */
	uint32_t key = mw->rkey;

	for (int r = 0; r < RUNS; r++) {
		double t0 = now_ns();

		for (uint32_t c = 0; c < cycles; c++) {
			struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW,
				.send_flags = IBV_SEND_SIGNALED }, *bad;

			wr.bind_mw.mw = mw;
			key = ibv_inc_rkey(key);
			wr.bind_mw.rkey = key;
			wr.bind_mw.bind_info.mr = mr;
			wr.bind_mw.bind_info.addr = (uintptr_t)buf;
			wr.bind_mw.bind_info.length = 64;
			wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
			ibv_post_send(qp, &wr, &bad);
			wait_one(cq);
			memset(&wr, 0, sizeof(wr));
			wr.opcode = IBV_WR_LOCAL_INV;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.invalidate_rkey = key;
			ibv_post_send(qp, &wr, &bad);
			wait_one(cq);
		}
		rate[r] = cycles / ((now_ns() - t0) / 1e9);
	}
	if (with_reader) {
		__atomic_store_n(&reader_stop, true, __ATOMIC_RELEASE);
		rte_eal_wait_lcore(lcore);
	}
	printf("%-34s %8u %12.0f\n", with_reader ? "bind+inval/s, 1 reader" :
	       "bind+inval/s, no reader", live, median(rate, RUNS));
	{
		json_t *res = bench_json_result(doc, with_reader ? "bind_inval_1_reader" :
						"bind_inval_no_reader");

		bench_json_int(res, "keys", live);
		bench_json_int(res, "readers", with_reader);
		bench_json_num(res, "cycles_per_s", median(rate, RUNS));
		bench_json_num(res, "mops", median(rate, RUNS) / 1e6);
	}
	mwp_close_device(ctx);
}

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "1024",
			"-l", "0-1", "--log-level=lib.eal:error",
			"--log-level=lib.telemetry:error", NULL };

	const char *json_path;

	doc = bench_json_new("bench_keys", argc, argv);
	if (bench_quick_option(argc, argv,
				"usage: %s [--quick] [--json FILE]\n"
				"The R_Key table: lookups of random live keys (bursts of 32 and one by\n"
				"one) at 1K, 64K and 1M keys; binds plus invalidations per second through\n"
				"the verbs, without and with a reader lcore.  Needs two lcores.  --quick:\n"
				"short runs (a smoke test, not a figure); --json FILE: the figures, with\n"
				"the build and the machine, as JSON.\n", &json_path))
		quick = true;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench_keys: EAL init failed\n");
		return 1;
	}
	printf("# bench_keys: medians of %d runs\n", RUNS);
	printf("%-34s %8s %12s %12s\n", "what", "keys", "burst of 32", "one by one");
	/* --quick: a smaller table in the middle instead of 1M keys */
	bench_lookup(1024);
	if (quick)
		bench_lookup(8192);
	bench_lookup(65536);
	if (!quick)
		bench_lookup(1 << 20);
	bench_bind(false);
	bench_bind(true);
	rte_eal_cleanup();
	return bench_json_write(doc, json_path) == 0 ? 0 : 1;
}
