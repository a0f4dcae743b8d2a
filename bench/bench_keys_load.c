/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_keys_load: keys changing while the datapath runs.
 *
 * A polling lcore answers bursts of 32 pre-built 64-byte RC WRITEs (valid
 * ICRCs, random keys among 1024 live regions) through mwp_queue_rx, as
 * bench_lcores does, reporting a quiescent state after every burst.  The
 * main lcore is the control plane: a QP of its own (not on the port; its
 * send ring runs in mwp_poll) binds NW Type 2 windows and invalidates
 * them again, batch after batch, each batch's last WR signaled, paced at
 * --rate (default 10^6 binds + invalidations per second; 0: as fast as it
 * can).  An invalidation completes only after every polling lcore has
 * passed a quiescent state (the revocation guarantee), so the churn is
 * paced by the datapath's bursts.
 *
 *   1. The datapath alone, then with the churn, in alternation: frames/s
 *      of each, their ratio, and binds + invalidations per second.
 *   2. Invalidate-to-CQE latency: one LOCAL_INV posted, the TSC read at
 *      the post and when ibv_poll_cq returns its completion, with the
 *      datapath lcore polling; percentiles over the samples.
 *
 * Figures are medians of RUNS runs (of each run's ratio, for the ratio).
 * Usage: bench_keys_load [--quick] [--windows N] [--seconds S] [--rate M]
 *                        [--json FILE]
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
#define MAX_NW 512
#define BUF_LEN (1 << 20)

static struct {
	bool quick;
	unsigned int nw;		/* windows per batch */
	double seconds;			/* per phase */
	double rate;			/* binds + invalidations per second; 0: all */
} opt = { .nw = 64, .seconds = 0.5, .rate = 1e6 };

/* The datapath lcore. */
static struct {
	struct ibv_context *ctx;
	struct mwp_port *port;
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;
	struct ibv_qp *qp;
	struct rte_mempool *mp;
	struct rte_mbuf *tmpl[NTMPL][BURST];
	uint8_t *buf;
	uint32_t keys[NKEYS];
	volatile uint32_t run;		/* 1: poll; 0: stop */
	volatile uint32_t running;	/* the lcore is in its loop */
	uint64_t frames;
} D;

/* The control plane. */
static struct {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_mw *mw[MAX_NW];
	uint32_t key[MAX_NW];
} C;

static void
make_templates(void)
{
	for (int t = 0; t < NTMPL; t++)
		bench_write_templates(D.mp, D.qp->qp_num, D.keys, NKEYS, BUF_LEN, D.tmpl[t],
				      BURST, "bench_keys_load");
}

static void
setup(void)
{
	struct mwp_device_attr da = { .max_keys = NKEYS + MAX_NW + 64,
				      .socket = SOCKET_ID_ANY };
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true, .nb_queues = 1 };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * MAX_NW, .max_recv_wr = 1 },
	};

	D.ctx = mwp_open_device(&da);
	C.pd = mwp_alloc_pd(D.ctx);
	C.cq = mwp_create_cq(D.ctx, 4 * MAX_NW);
	D.buf = aligned_alloc(4096, BUF_LEN);
	if (D.ctx == NULL || C.pd == NULL || C.cq == NULL || D.buf == NULL) {
		fprintf(stderr, "bench_keys_load: cannot open the device\n");
		exit(1);
	}
	memset(D.buf, 0, BUF_LEN);
	for (uint32_t i = 0; i < NKEYS; i++) {
		struct ibv_mr *mr = mwp_reg_mr_iova(C.pd, D.buf, BUF_LEN, 0x100000000ull,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

		if (mr == NULL) {
			fprintf(stderr, "bench_keys_load: registering key %u failed\n", i);
			exit(1);
		}
		D.keys[i] = mr->rkey;
	}
	/* the windows' region, and the control QP that binds them */
	C.mr = mwp_reg_mr(C.pd, D.buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	ia.send_cq = ia.recv_cq = C.cq;
	C.qp = mwp_create_qp(C.pd, &ia);
	if (C.mr == NULL || C.qp == NULL) {
		fprintf(stderr, "bench_keys_load: cannot make the control QP\n");
		exit(1);
	}
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };

		mwp_modify_qp(C.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS);
		a.qp_state = IBV_QPS_RTR;
		a.ah_attr.is_global = 1;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 0x98;
		mwp_modify_qp(C.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER);
		a.qp_state = IBV_QPS_RTS;
		mwp_modify_qp(C.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	}
	for (unsigned int w = 0; w < opt.nw; w++) {
		C.mw[w] = ibv_alloc_mw(C.pd, IBV_MW_TYPE_2);
		if (C.mw[w] == NULL) {
			fprintf(stderr, "bench_keys_load: ibv_alloc_mw failed\n");
			exit(1);
		}
		C.key[w] = C.mw[w]->rkey;
	}
	/* the datapath: one queue, its engine on the worker lcore */
	D.qp = bench_rts_qp(C.pd, C.cq, IBV_QPT_RC);
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	D.port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	D.mp = rte_pktmbuf_pool_create("bench_kl", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	D.eng = mwp_engine_create(1, SOCKET_ID_ANY);
	if (D.port == NULL || D.mp == NULL || D.eng == NULL) {
		fprintf(stderr, "bench_keys_load: cannot set up the port\n");
		exit(1);
	}
	mwp_port_set_mempool(D.port, D.mp);
	D.q = mwp_queue_create(D.eng, D.port, 0, &D.st);
	if (D.q == NULL || mwp_port_attach_qp(D.port, D.qp) != 0) {
		fprintf(stderr, "bench_keys_load: cannot set up the queue\n");
		exit(1);
	}
	make_templates();
}

/* The datapath lcore: bursts while D.run, a quiescent state after each. */
static int
poll_worker(void *arg)
{
	struct mwp_qp *qp = to_mqp(D.qp);
	struct rte_mbuf *pk[BURST], *tx[64];
	uint64_t b = 0;

	(void)arg;
	mwp_reader_register(D.ctx, 1);
	mwp_engine_start(D.eng);
	__atomic_store_n(&D.running, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&D.run, __ATOMIC_ACQUIRE)) {
		struct rte_mbuf *const *tmpl = D.tmpl[b++ % NTMPL];
		uint16_t n;

		bench_refill(D.mp, tmpl, pk, BURST, "bench_keys_load");
		qp->resp.epsn = 0;
		n = mwp_queue_rx(D.q, pk, BURST, tx, 64);
		rte_pktmbuf_free_bulk(tx, n);
		__atomic_store_n(&D.frames, D.frames + BURST, __ATOMIC_RELAXED);
		mwp_reader_quiescent(D.ctx, 1);
	}
	mwp_engine_stop(D.eng);
	mwp_reader_unregister(D.ctx, 1);
	__atomic_store_n(&D.running, 0, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t
frames_now(void)
{
	return __atomic_load_n(&D.frames, __ATOMIC_RELAXED);
}

/* Wait for the one signaled completion of a batch (or of one WR). */
static void
wait_wc(void)
{
	struct ibv_wc wc;

	for (;;) {
		mwp_poll(D.ctx);
		if (ibv_poll_cq(C.cq, 1, &wc) == 1)
			break;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "bench_keys_load: wr %" PRIu64 ": %s\n", wc.wr_id,
			ibv_wc_status_str(wc.status));
		exit(1);
	}
}

/* One batch: every window bound, then every window invalidated; the last
 * WR of each half signaled.  Returns the operations done (2 * nw). */
static unsigned int
churn_batch(void)
{
	static struct ibv_send_wr wr[2 * MAX_NW];
	struct ibv_send_wr *bad;
	const unsigned int nw = opt.nw;

	for (unsigned int w = 0; w < nw; w++) {
		struct ibv_send_wr *b = &wr[w], *v = &wr[nw + w];

		C.key[w] = ibv_inc_rkey(C.key[w]);
		memset(b, 0, sizeof(*b));
		b->wr_id = w;
		b->opcode = IBV_WR_BIND_MW;
		b->bind_mw.mw = C.mw[w];
		b->bind_mw.rkey = C.key[w];
		b->bind_mw.bind_info.mr = C.mr;
		b->bind_mw.bind_info.addr = (uintptr_t)D.buf + (uint64_t)w * 4096;
		b->bind_mw.bind_info.length = 4096;
		b->bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		b->next = &wr[w + 1];
		memset(v, 0, sizeof(*v));
		v->wr_id = nw + w;
		v->opcode = IBV_WR_LOCAL_INV;
		v->invalidate_rkey = C.key[w];
		v->next = w + 1 < nw ? &wr[nw + w + 1] : NULL;
	}
	wr[nw - 1].send_flags = IBV_SEND_SIGNALED;
	wr[2 * nw - 1].send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(C.qp, wr, &bad) != 0) {
		fprintf(stderr, "bench_keys_load: ibv_post_send failed\n");
		exit(1);
	}
	wait_wc();
	wait_wc();
	return 2 * nw;
}

/* One phase of opt.seconds: the datapath's frames/s, and the control
 * plane's operations/s if it churns. */
static double
phase(bool churn, double *ops_per_s)
{
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t len = (uint64_t)(opt.seconds * (double)hz);
	uint64_t f0, f1, t0, t1, ops = 0;

	f0 = frames_now();
	t0 = rte_rdtsc();
	while ((t1 = rte_rdtsc()) - t0 < len) {
		if (!churn) {
			rte_delay_us_block(100);
			continue;
		}
		/* paced: no batch before its time at opt.rate */
		if (opt.rate > 0 &&
		    (double)ops > opt.rate * ((double)(t1 - t0) / (double)hz))
			continue;
		ops += churn_batch();
	}
	f1 = frames_now();
	t1 = rte_rdtsc();
	if (ops_per_s != NULL)
		*ops_per_s = (double)ops / ((double)(t1 - t0) / (double)hz);
	return (double)(f1 - f0) / ((double)(t1 - t0) / (double)hz);
}

/* Invalidate-to-CQE: bind window 0 (not timed), then post its LOCAL_INV
 * and time it to its completion; n samples, in microseconds. */
static void
latency(double *us, unsigned int n)
{
	const double tick_us = 1e6 / (double)rte_get_tsc_hz();

	for (unsigned int i = 0; i < n; i++) {
		struct ibv_send_wr wr = { 0 }, *bad;
		uint64_t t0;

		C.key[0] = ibv_inc_rkey(C.key[0]);
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = C.mw[0];
		wr.bind_mw.rkey = C.key[0];
		wr.bind_mw.bind_info.mr = C.mr;
		wr.bind_mw.bind_info.addr = (uintptr_t)D.buf;
		wr.bind_mw.bind_info.length = 4096;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		ibv_post_send(C.qp, &wr, &bad);
		wait_wc();
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.invalidate_rkey = C.key[0];
		t0 = rte_rdtsc();
		ibv_post_send(C.qp, &wr, &bad);
		wait_wc();
		us[i] = (double)(rte_rdtsc() - t0) * tick_us;
	}
}

static void
usage(const char *prog, FILE *f)
{
	fprintf(f,
		"usage: %s [--quick] [--windows N] [--seconds S] [--rate M] [--json FILE]\n"
		"Keys changing under load: a polling lcore answers 64-byte RC WRITEs while\n"
		"the main lcore binds and invalidates N Type 2 windows (default 64) per batch,\n"
		"M million binds + invalidations per second (default 1; 0: as fast as it can);\n"
		"the datapath's rate alone and under the churn (S seconds each, default 0.5),\n"
		"the churn's rate reached, and the invalidate-to-CQE latency with the lcore\n"
		"polling.  Needs two lcores (EAL -l 0-1).  --quick: short phases (a smoke\n"
		"test, not a figure); --json FILE: the figures, with the build and the\n"
		"machine, as JSON.\n",
		prog);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "windows", required_argument, NULL, 'w' },
		{ "seconds", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "1024",
			"-l", "0-1", "--log-level=lib.eal:error",
			"--log-level=lib.telemetry:error", NULL };
	double alone[RUNS], loaded[RUNS], ratio[RUNS], ops[RUNS], *lat;
	unsigned int lcore, nlat;
	const char *json_path = NULL;
	json_t *doc = bench_json_new("bench_keys_load", argc, argv), *res;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			opt.quick = true;
			break;
		case 'w':
			opt.nw = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			opt.seconds = strtod(optarg, NULL);
			break;
		case 'r':
			opt.rate = strtod(optarg, NULL) * 1e6;
			break;
		case 'J':
			json_path = optarg;
			break;
		case 'h':
			usage(argv[0], stdout);
			return 0;
		default:
			usage(argv[0], stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(argv[0], stderr);
		return 2;
	}
	if (opt.nw < 1 || opt.nw > MAX_NW || !(opt.seconds > 0) || !(opt.rate >= 0)) {
		fprintf(stderr, "bench_keys_load: --windows 1..%d, --seconds > 0, --rate >= 0\n",
			MAX_NW);
		return 2;
	}
	if (opt.quick)
		opt.seconds = 0.05;
	nlat = opt.quick ? 200 : 20000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench_keys_load: EAL init failed\n");
		return 1;
	}
	lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
	if (lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, "bench_keys_load: needs a second lcore\n");
		return 1;
	}
	setup();
	D.run = 1;
	rte_eal_remote_launch(poll_worker, NULL, lcore);
	while (!__atomic_load_n(&D.running, __ATOMIC_ACQUIRE))
		rte_pause();
	printf("# bench_keys_load: 64 B RC WRITEs on one polling lcore (%d live keys), "
	       "%u Type 2 windows bound and invalidated per batch on the main lcore, "
	       "paced at %s; medians of %d runs of %.2f s per phase\n", NKEYS, opt.nw,
	       opt.rate > 0 ? "the --rate" : "no rate (as fast as it can)", RUNS, opt.seconds);
	for (int r = 0; r < RUNS; r++) {
		alone[r] = phase(false, NULL);
		loaded[r] = phase(true, &ops[r]);
		ratio[r] = loaded[r] / alone[r];
	}
	lat = malloc(sizeof(*lat) * nlat);
	if (lat == NULL)
		return 1;
	latency(lat, nlat);
	__atomic_store_n(&D.run, 0, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(lcore);
	if (D.st.accepted != D.frames) {
		fprintf(stderr, "bench_keys_load: %" PRIu64 " accepted of %" PRIu64 "\n",
			D.st.accepted, D.frames);
		return 1;
	}
	printf("%-44s %10.2f\n", "datapath alone, Mpps", median(alone, RUNS) / 1e6);
	printf("%-44s %10.2f\n", "datapath under the churn, Mpps", median(loaded, RUNS) / 1e6);
	printf("%-44s %10.3f\n", "ratio (median of the runs' ratios)", median(ratio, RUNS));
	printf("%-44s %10.2f\n", "binds + invalidations, M/s", median(ops, RUNS) / 1e6);
	qsort(lat, nlat, sizeof(*lat), cmp_double);
	printf("%-44s %6.2f %6.2f %6.2f  (%u samples)\n",
	       "invalidate to CQE, us: p50 p99 p99.9", lat[nlat / 2], lat[nlat * 99 / 100],
	       lat[nlat * 999 / 1000], nlat);
	res = bench_json_result(doc, "datapath_alone");
	bench_json_int(res, "payload", 64);
	bench_json_int(res, "keys", NKEYS);
	bench_json_int(res, "lcores", 1);
	bench_json_num(res, "mpps", median(alone, RUNS) / 1e6);
	res = bench_json_result(doc, "datapath_churn");
	bench_json_int(res, "payload", 64);
	bench_json_int(res, "keys", NKEYS);
	bench_json_int(res, "lcores", 1);
	bench_json_int(res, "windows", opt.nw);
	bench_json_num(res, "churn_rate_asked_mops", opt.rate / 1e6);
	bench_json_num(res, "mpps", median(loaded, RUNS) / 1e6);
	bench_json_num(res, "ratio", median(ratio, RUNS));
	res = bench_json_result(doc, "bind_inval_churn");
	bench_json_int(res, "windows", opt.nw);
	bench_json_num(res, "mops", median(ops, RUNS) / 1e6);
	res = bench_json_result(doc, "inval_to_cqe");
	bench_json_num(res, "p50_us", lat[nlat / 2]);
	bench_json_num(res, "p99_us", lat[nlat * 99 / 100]);
	bench_json_num(res, "p999_us", lat[nlat * 999 / 1000]);
	bench_json_int(res, "samples", nlat);
	free(lat);
	mwp_close_device(D.ctx);
	rte_eal_cleanup();
	return bench_json_write(doc, json_path) == 0 ? 0 : 1;
}
