/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_lcores: how the responder scales with polling threads, without an
 * ethdev.  One port with N queues, each polled by its own lcore with its
 * own engine; the port's QPs are spread over the queues (QPN % N), so
 * each lcore answers the RC QP it owns and nothing is handed over -- the
 * arrangement rte_flow steering or a peer's RSS gives.  Each lcore pushes
 * bursts of 32 pre-built 64-byte RDMA WRITE ONLY requests (valid ICRCs,
 * random keys among 1024 live ones, one shared key table) through
 * mwp_queue_rx and frees the answers, as bench_resp does on one lcore,
 * and reports a quiescent state after every burst.
 *
 * The figure is the aggregate rate: frames answered by all lcores over
 * the wall time from a common start until the last one is done; medians
 * of RUNS runs, one lcore, then two, ... up to N in the same run, and
 * each one's ratio to one lcore.
 * Usage: bench_lcores [--quick] [--lcores N] [--json FILE]
 * (N: 2 by default, up to
 * the EAL's lcores; give the EAL at least N with -l via MWP_BENCH_EAL_L,
 * default "0-1")
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "mwp_priv.h"
#include "mwpath.h"
#include "bench_util.h"

#define RUNS 5
#define BURST 32
#define NTMPL 4
#define NKEYS 1024
#define MAX_LC 8
#define BUF_LEN (1 << 20)

static bool quick;

/* What one polling lcore has: its engine, its queue, the QP it owns. */
struct worker {
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;
	struct ibv_qp *qp;
	struct rte_mempool *mp;
	struct rte_mbuf *tmpl[NTMPL][BURST];
	unsigned int reader;
	uint32_t bursts;
	uint64_t t_start, t_end, answered;
} __rte_cache_aligned;

static struct {
	struct ibv_context *ctx;
	struct mwp_port *port;
	uint8_t *buf;
	uint32_t keys[NKEYS];
	struct worker w[MAX_LC];
	unsigned int n;
	volatile uint32_t go;		/* the common start */
} B;

static void
make_templates(struct worker *w)
{
	for (int t = 0; t < NTMPL; t++)
		bench_write_templates(w->mp, w->qp->qp_num, B.keys, NKEYS, BUF_LEN, w->tmpl[t],
				      BURST, "bench_lcores");
}

/* n queues, one per lcore, and a QP per queue that the queue's engine
 * owns (QPN % n picks the queue). */
static void
setup(unsigned int n)
{
	struct mwp_device_attr da = { .max_keys = NKEYS + 16, .socket = SOCKET_ID_ANY };
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true, .nb_queues = (uint16_t)n };
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *made[2 * MAX_LC];
	unsigned int nmade = 0, placed = 0;

	memset(&B.w, 0, sizeof(B.w));
	B.n = n;
	B.ctx = mwp_open_device(&da);
	pd = mwp_alloc_pd(B.ctx);
	cq = mwp_create_cq(B.ctx, 64);
	for (uint32_t i = 0; i < NKEYS; i++) {
		struct ibv_mr *mr = mwp_reg_mr_iova(pd, B.buf, BUF_LEN, 0x100000000ull,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

		if (mr == NULL) {
			fprintf(stderr, "bench_lcores: registering key %u failed\n", i);
			exit(1);
		}
		B.keys[i] = mr->rkey;
	}
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	B.port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	/* QPNs are the device's: make QPs until each queue has one */
	while (placed != (1u << n) - 1 && nmade < RTE_DIM(made)) {
		struct ibv_qp *qp = bench_rts_qp(pd, cq, IBV_QPT_RC);
		unsigned int k = qp->qp_num % n;

		made[nmade++] = qp;
		if (placed & (1u << k))
			continue;
		placed |= 1u << k;
		B.w[k].qp = qp;
	}
	for (unsigned int k = 0; k < n; k++) {
		char name[32];
		struct worker *w = &B.w[k];

		snprintf(name, sizeof(name), "bench_lc%u", k);
		w->mp = rte_pktmbuf_pool_create(name, 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
						SOCKET_ID_ANY);
		if (k == 0)
			mwp_port_set_mempool(B.port, w->mp);
		w->eng = mwp_engine_create(k, SOCKET_ID_ANY);
		w->q = w->mp != NULL && w->eng != NULL ?
		       mwp_queue_create(w->eng, B.port, (uint16_t)k, &w->st) : NULL;
		if (w->q == NULL || w->qp == NULL) {
			fprintf(stderr, "bench_lcores: cannot set up queue %u\n", k);
			exit(1);
		}
		w->reader = k + 1;
		make_templates(w);
	}
	for (unsigned int i = 0; i < nmade; i++)
		mwp_port_attach_qp(B.port, made[i]);
}

static void
teardown(void)
{
	mwp_close_device(B.ctx);
	for (unsigned int k = 0; k < B.n; k++) {
		struct worker *w = &B.w[k];

		for (int t = 0; t < NTMPL; t++)
			rte_pktmbuf_free_bulk(w->tmpl[t], BURST);
		mwp_queue_free(w->q);
		mwp_engine_free(w->eng);
	}
	mwp_port_free(B.port);
	for (unsigned int k = 0; k < B.n; k++)
		rte_mempool_free(B.w[k].mp);
}

/* One lcore's run: bursts of fresh copies of its templates. */
static int
poll_worker(void *arg)
{
	struct worker *w = arg;
	struct mwp_qp *qp = to_mqp(w->qp);
	struct rte_mbuf *pk[BURST], *tx[64];

	mwp_reader_register(B.ctx, w->reader);
	mwp_engine_start(w->eng);
	while (!__atomic_load_n(&B.go, __ATOMIC_ACQUIRE))
		rte_pause();
	w->t_start = rte_rdtsc();
	for (uint32_t b = 0; b < w->bursts; b++) {
		struct rte_mbuf *const *tmpl = w->tmpl[b % NTMPL];
		uint16_t n;

		bench_refill(w->mp, tmpl, pk, BURST, "bench_lcores");
		qp->resp.epsn = 0;
		n = mwp_queue_rx(w->q, pk, BURST, tx, 64);
		rte_pktmbuf_free_bulk(tx, n);
		w->answered += BURST;
		mwp_reader_quiescent(B.ctx, w->reader);
	}
	w->t_end = rte_rdtsc();
	mwp_engine_stop(w->eng);
	mwp_reader_unregister(B.ctx, w->reader);
	return 0;
}

/* Aggregate Mpps of n lcores, one run. */
static double
run_once(unsigned int n, unsigned int *lcores, uint32_t bursts)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, frames = 0;

	for (unsigned int k = 0; k < n; k++) {
		memset(&B.w[k].st, 0, sizeof(B.w[k].st));
		B.w[k].bursts = bursts;
		B.w[k].answered = 0;
	}
	__atomic_store_n(&B.go, 0, __ATOMIC_RELEASE);
	for (unsigned int k = 1; k < n; k++)
		rte_eal_remote_launch(poll_worker, &B.w[k], lcores[k]);
	__atomic_store_n(&B.go, 1, __ATOMIC_RELEASE);
	poll_worker(&B.w[0]);
	rte_eal_mp_wait_lcore();
	for (unsigned int k = 0; k < n; k++) {
		const struct worker *w = &B.w[k];
		uint64_t hout, hin;

		t0 = RTE_MIN(t0, w->t_start);
		t1 = RTE_MAX(t1, w->t_end);
		frames += w->answered;
		mwp_queue_handoffs(w->q, &hout, &hin);
		/* a figure for frames dropped or handed over would mean nothing */
		if (w->st.accepted != w->answered || hout != 0) {
			fprintf(stderr, "bench_lcores: lcore %u: %" PRIu64 " accepted of %" PRIu64
				", %" PRIu64 " handed over\n", k, w->st.accepted, w->answered,
				hout);
			exit(1);
		}
	}
	return (double)frames / ((double)(t1 - t0) / (double)rte_get_tsc_hz()) / 1e6;
}

static double
measure(unsigned int n, unsigned int *lcores)
{
	const uint32_t bursts = quick ? 2000 : 100000;
	double r[RUNS];

	setup(n);
	for (int k = 0; k < RUNS; k++)
		r[k] = run_once(n, lcores, bursts);
	teardown();
	return median(r, RUNS);
}

int
main(int argc, char **argv)
{
	const char *l = getenv("MWP_BENCH_EAL_L");
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "1024",
			"-l", (char *)(l != NULL ? l : "0-1"), "--log-level=lib.eal:error",
			"--log-level=lib.telemetry:error", NULL };
	unsigned int want = 2, lcores[MAX_LC], nl = 0, id;
	const char *json_path = NULL;
	json_t *doc = bench_json_new("bench_lcores", argc, argv);
	double one = 0;

	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "lcores", required_argument, NULL, 'l' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] =
		"usage: %s [--quick] [--lcores N] [--json FILE]\n"
		"The responder's aggregate rate on 1, 2, ... N polling lcores (64-byte RC\n"
		"WRITEs, no ethdev, one QP per lcore; N: 2 by default); the EAL's lcores\n"
		"from MWP_BENCH_EAL_L (default 0-1).  --quick: short runs (a smoke test,\n"
		"not a figure); --json FILE: the figures, with the build and the machine,\n"
		"as JSON.\n";
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'q') {
			quick = true;
		} else if (c == 'l') {
			want = (unsigned int)atoi(optarg);
		} else if (c == 'J') {
			json_path = optarg;
		} else {
			bench_usage_exit(usage, argv[0], c);
		}
	}
	if (optind != argc)
		bench_usage_exit(usage, argv[0], '?');
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench_lcores: EAL init failed\n");
		return 1;
	}
	lcores[nl++] = rte_lcore_id();
	RTE_LCORE_FOREACH_WORKER(id)
		if (nl < MAX_LC)
			lcores[nl++] = id;
	if (want < 2 || want > nl) {
		fprintf(stderr, "bench_lcores: --lcores %u: the EAL has %u lcores (2 to %u)\n",
			want, nl, nl);
		return 2;
	}
	B.buf = aligned_alloc(4096, BUF_LEN);
	memset(B.buf, 0, BUF_LEN);
	printf("# bench_lcores: 64 B RC WRITE ONLY, bursts of %d, no ethdev, one QP per "
	       "lcore, %d live keys; medians of %d runs\n", BURST, NKEYS, RUNS);
	printf("%-10s %10s %12s\n", "lcores", "Mpps", "x one lcore");
	for (unsigned int n = 1; n <= want; n++) {
		double mpps = measure(n, lcores);
		char name[32];
		json_t *res;

		if (n == 1)
			one = mpps;
		printf("%-10u %10.2f %12.2f\n", n, mpps, mpps / one);
		snprintf(name, sizeof(name), "write_64B_%ulcores", n);
		res = bench_json_result(doc, name);
		bench_json_str(res, "series", "write");
		bench_json_int(res, "payload", 64);
		bench_json_int(res, "keys", NKEYS);
		bench_json_int(res, "lcores", n);
		bench_json_num(res, "mpps", mpps);
		bench_json_num(res, "ratio", mpps / one);
	}
	free(B.buf);
	rte_eal_cleanup();
	return bench_json_write(doc, json_path) == 0 ? 0 : 1;
}
