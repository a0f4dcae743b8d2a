/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_resp: the responder's packet rate on one lcore, without an ethdev.
 *
 * Pre-built RoCEv2 requests (valid ICRCs) go through mwp_queue_rx in
 * bursts of 32: parse, ICRC verify, QP lookup, PSN and opcode checks, one
 * bulk R_Key lookup per burst, the access decision, execution on local
 * memory, and the answers (one coalesced ACK per burst for WRITEs; a READ
 * response or ATOMIC ACK per request), which are then freed as a tx burst
 * would.  Each request names a random key among the live ones.  The five
 * template bursts below hold 160 such draws, reused burst after burst: at
 * 1M keys the table's size shows as buckets, key slots and descriptors
 * spread over many more pages, not as a working set larger than the
 * caches.
 *
 * Workloads: RDMA WRITE ONLY (64 bytes, or each of --payloads), 8-byte
 * RDMA READ, FETCH_ADD (RC),
 * and 64-byte WRITEs of which exactly one in ten names an unknown key, on
 * a UC QP (on RC a denial NAKs 0x62 and stops the responder, so the rest
 * of the burst would be dropped cheaply; on UC the denied packet is
 * dropped and the others are executed); and 5 KB RDMA WRITEs in 1 KB
 * packets (FIRST, three MIDDLEs, LAST; each continuation re-checks its
 * message's key).
 * Before each burst, 32 fresh mbufs from the mempool get a copy of one of
 * five template bursts (what a NIC's rx does; not timed), and the QP's expected
 * PSN is reset, so every pass does the full work and none is taken for a
 * duplicate.  Timed with the TSC around mwp_queue_rx and the freeing of
 * its answers: the pipeline function alone, request mbufs returned to the
 * mempool as in a real run.
 *
 * Figures: medians of RUNS runs, the fastest run, and the rate of the
 * burst at the 10th percentile of all bursts' times (p10: near what the
 * core does when nothing else runs on it; on a shared machine a steadier
 * guide for comparing builds than a run's average, not a rate it
 * sustains).  After the 1K-key workloads, where a WRITE's time goes:
 * the library's burst stages timed alone, medians, and then their means
 * in the bursts near the fastest and in the slower rest (on a shared
 * machine, which stages the other tenant slows).
 * Usage: bench_resp [--quick] [--workload N] [--keys K,...] [--payloads P,...]
 *                   [--json FILE]
 * (N: 0 WRITE, 1 READ, 2 FETCH_ADD, 3 the denied mix, 4 the 5 KB WRITEs;
 * for profiling or comparing builds on one of them.  K: the table sizes,
 * live keys (default 1024,1048576); P: the WRITE ONLY's payload sizes, 1
 * to 1024 bytes (default 64,256,1024).  --quick: runs of 2000 bursts, at
 * 1K keys and 64 bytes unless --keys or --payloads say otherwise.)
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "mwp_priv.h"
#include "mwpath.h"
#include "bench_cc.h"
#include "bench_util.h"

#define RUNS 5
#define BURST 32
#define BUF_LEN (1 << 20)

#define MAX_SWEEP 16

static bool quick;
static int only = -1;		/* --workload N: one workload (for profiling) */
static uint32_t wr_payload = 64;	/* the WRITE ONLY's payload, this run */

enum workload { WRITE64, READ8, FETCH_ADD, MIX_DENIED, WRITE5K, W__MAX };

static const char *const wl_name[W__MAX] = {
	[WRITE64] = "B WRITE ONLY",	/* after its payload size */
	[READ8] = "8 B READ",
	[FETCH_ADD] = "FETCH_ADD",
	[MIX_DENIED] = "WRITE, 10% denied keys",
	[WRITE5K] = "5 KB WRITE, 1 KB packets",
};

/* WRITE5K: FIRST, three MIDDLEs and a LAST at the 1 KB path MTU; the 160
 * frames of the templates hold 32 whole messages, and some cross from one
 * burst to the next. */
#define W5_PKTS 5
#define W5_SEG 1024

struct setup {
	struct ibv_context *ctx;
	struct ibv_qp *qp, *uc;
	struct mwp_port *port;
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;		/* the queue's counters */
	struct rte_mempool *mp;
	uint32_t *keys;
	uint32_t nkeys;
	uint8_t *buf;
};

static void
make_setup(struct setup *s, uint32_t nkeys)
{
	struct mwp_device_attr da = { .max_keys = nkeys + 16, .socket = SOCKET_ID_ANY };
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true };
	struct ibv_pd *pd;

	bench_cc_conf(&pc.cc);
	struct ibv_cq *cq;

	memset(s, 0, sizeof(*s));
	s->ctx = mwp_open_device(&da);
	pd = mwp_alloc_pd(s->ctx);
	cq = mwp_create_cq(s->ctx, 64);
	s->buf = aligned_alloc(4096, BUF_LEN);
	memset(s->buf, 0, BUF_LEN);
	s->keys = malloc(sizeof(*s->keys) * nkeys);
	/* nkeys live keys, all naming the same buffer */
	for (uint32_t i = 0; i < nkeys; i++) {
		struct ibv_mr *mr = mwp_reg_mr_iova(pd, s->buf, BUF_LEN, 0x100000000ull,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);

		if (mr == NULL) {
			fprintf(stderr, "bench_resp: registering key %u failed\n", i);
			exit(1);
		}
		s->keys[i] = mr->rkey;
	}
	s->nkeys = nkeys;
	s->qp = bench_rts_qp(pd, cq, IBV_QPT_RC);
	s->uc = bench_rts_qp(pd, cq, IBV_QPT_UC);
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	s->port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	s->mp = rte_pktmbuf_pool_create("bench_resp", 4095, 256, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	mwp_port_set_mempool(s->port, s->mp);
	/* this thread is the engine of the port's queue 0, which owns both
	 * QPs: no frame is handed over */
	s->eng = mwp_engine_create(0, SOCKET_ID_ANY);
	s->q = s->eng != NULL ? mwp_queue_create(s->eng, s->port, 0, &s->st) : NULL;
	if (s->q == NULL) {
		fprintf(stderr, "bench_resp: cannot create the engine and queue\n");
		exit(1);
	}
	mwp_port_attach_qp(s->port, s->qp);
	mwp_port_attach_qp(s->port, s->uc);
	mwp_engine_start(s->eng);
}

static void
free_setup(struct setup *s)
{
	mwp_engine_stop(s->eng);
	mwp_close_device(s->ctx);
	mwp_queue_free(s->q);
	mwp_engine_free(s->eng);
	mwp_port_free(s->port);
	rte_mempool_free(s->mp);
	free(s->keys);
	free(s->buf);
}

/* Bursts of templates a run cycles through: 160 frames, so that the
 * denied mix is exactly one frame in ten. */
#define NTMPL 5

/* Burst t of the templates of workload w. */
static void
make_burst(struct setup *s, enum workload w, unsigned int t, struct rte_mbuf **pk)
{
	struct mwp_flow f = { .sport = 49152 };
	static uint8_t payload[W5_SEG];

	rte_ether_unformat_addr("02:00:00:00:00:02", &f.smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &f.dmac);
	inet_pton(AF_INET, "192.0.2.2", &f.sip4);
	inet_pton(AF_INET, "192.0.2.1", &f.dip4);
	for (int i = 0; i < BURST; i++) {
		uint32_t key = s->keys[(uint32_t)rand() % s->nkeys];
		uint64_t va = 0x100000000ull + (uint64_t)(rand() % (BUF_LEN / 64)) * 64;
		/* the same slot for 64 bytes; one that holds the payload else */
		uint64_t wva = 0x100000000ull +
			       (((va - 0x100000000ull) % (BUF_LEN - wr_payload + 1)) & ~63ull);
		struct mwp_hdrs h = { .dqpn = s->qp->qp_num, .psn = (uint32_t)i };
		uint32_t len = 0;

		switch (w) {
		case WRITE64:
			h.opcode = ROCE_OP_RC_RDMA_WRITE_ONLY;
			h.reth.va = wva;
			h.reth.rkey = key;
			h.reth.dmalen = len = wr_payload;
			h.ackreq = i == BURST - 1;
			break;
		case MIX_DENIED:
			h.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY;
			h.dqpn = s->uc->qp_num;
			h.reth.va = va;
			/* every tenth frame of the templates names an unknown key */
			h.reth.rkey = (t * BURST + (unsigned int)i) % 10 == 9 ? 0x7f000001 : key;
			h.reth.dmalen = len = 64;
			break;
		case READ8:
			h.opcode = ROCE_OP_RC_RDMA_READ_REQUEST;
			h.reth.va = va;
			h.reth.rkey = key;
			h.reth.dmalen = 8;
			break;
		case WRITE5K: {
			const unsigned int part = (t * BURST + (unsigned int)i) % W5_PKTS;

			va = 0x100000000ull +
			     (uint64_t)(rand() % (BUF_LEN / (W5_PKTS * W5_SEG))) * W5_PKTS * W5_SEG;
			h.opcode = part == 0 ? ROCE_OP_RC_RDMA_WRITE_FIRST :
				   part == W5_PKTS - 1 ? ROCE_OP_RC_RDMA_WRITE_LAST :
				   ROCE_OP_RC_RDMA_WRITE_MIDDLE;
			if (part == 0) {
				h.reth.va = va;
				h.reth.rkey = key;
				h.reth.dmalen = W5_PKTS * W5_SEG;
			}
			len = W5_SEG;
			h.ackreq = i == BURST - 1;
			break;
		}
		default:
			h.opcode = ROCE_OP_RC_FETCH_ADD;
			h.atmeth.va = va;
			h.atmeth.rkey = key;
			h.atmeth.swap_add = 1;
			break;
		}
		pk[i] = rte_pktmbuf_alloc(s->mp);
		if (pk[i] == NULL || mwp_build(pk[i], &f, &h, payload, len, NULL) != 0) {
			fprintf(stderr, "bench_resp: building requests failed\n");
			exit(1);
		}
	}
}

/* A fresh copy of each template frame, as a NIC's rx would hand over. */
static void
refill(struct setup *s, struct rte_mbuf *const *tmpl, struct rte_mbuf **pk)
{
	bench_refill(s->mp, tmpl, pk, BURST, "bench_resp");
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Median ns/packet of RUNS runs; *best: the fastest run (on a shared
 * machine the least disturbed one); *p10: ns/packet of the burst at the
 * 10th percentile of all the runs' burst times, which moves less with
 * this machine's noise than a run's average does (near what the core does
 * undisturbed, if at least a tenth of the bursts were: a guide for
 * comparing builds, not a rate it sustains). */
static double
run(struct setup *s, enum workload w, uint64_t *answers, uint64_t *denied,
    double *best, double *p10)
{
	struct mwp_qp *uc = to_mqp(s->uc);
	const uint32_t bursts = quick ? 2000 : 200000;
	struct rte_mbuf *tmpl[NTMPL][BURST], *pk[BURST], *tx[64];
	struct mwp_stats *st = &s->st;
	struct mwp_qp *qp = to_mqp(s->qp);
	uint32_t *per_burst = malloc(sizeof(*per_burst) * bursts * RUNS);
	double r[RUNS];

	if (per_burst == NULL) {
		fprintf(stderr, "bench_resp: out of memory\n");
		exit(1);
	}
	for (unsigned int t = 0; t < NTMPL; t++)
		make_burst(s, w, t, tmpl[t]);
	memset(st, 0, sizeof(*st));
	for (int k = 0; k < RUNS; k++) {
		uint64_t cycles = 0;

		for (uint32_t b = 0; b < bursts; b++) {
			uint64_t t0;
			uint16_t n;

			refill(s, tmpl[b % NTMPL], pk);
			qp->resp.epsn = 0;
			uc->resp.epsn = 0;
			/* timed: the pipeline function, and freeing its answers
			 * as a tx burst would */
			t0 = rte_rdtsc_precise();
			n = mwp_queue_rx(s->q, pk, BURST, tx, 64);
			rte_pktmbuf_free_bulk(tx, n);
			t0 = rte_rdtsc_precise() - t0;
			cycles += t0;
			per_burst[k * bursts + b] = (uint32_t)RTE_MIN(t0, (uint64_t)UINT32_MAX);
			*answers += n;
		}
		r[k] = (double)cycles * 1e9 / rte_get_tsc_hz() / ((double)bursts * BURST);
	}
	*denied = 0;
	for (unsigned int d = 1; d < MWP_DENY__MAX; d++)
		*denied += st->denied[d];
	/* a figure for frames the responder dropped would mean nothing */
	if (st->accepted + *denied != (uint64_t)bursts * BURST * RUNS) {
		fprintf(stderr, "bench_resp: %s: %" PRIu64 " frames accepted and %" PRIu64
			" denied of %" PRIu64 "\n", wl_name[w], st->accepted, *denied,
			(uint64_t)bursts * BURST * RUNS);
		exit(1);
	}
	for (unsigned int t = 0; t < NTMPL; t++)
		rte_pktmbuf_free_bulk(tmpl[t], BURST);
	*best = r[0];
	for (int k = 1; k < RUNS; k++)
		*best = RTE_MIN(*best, r[k]);
	qsort(per_burst, (size_t)bursts * RUNS, sizeof(*per_burst), cmp_u32);
	*p10 = (double)per_burst[(size_t)bursts * RUNS / 10] * 1e9 / rte_get_tsc_hz() / BURST;
	free(per_burst);
	return median(r, RUNS);
}

/* The stage times of stages() split by how long each burst's whole
 * mwp_queue_rx took: bursts within 1.3 times the 10th percentile of
 * those times (the core to itself, when a tenth of the bursts had it)
 * and the rest.  On this shared machine the second group is the host
 * giving part of the core to another tenant; the ratio of the two rows
 * shows which stages that slows.  TSC ticks per packet, means. */
static void
stages_by_state(uint32_t (*cyc)[4], size_t nb)
{
	uint32_t *whole = malloc(sizeof(*whole) * nb);
	double sum[2][4] = { { 0 } };
	size_t cnt[2] = { 0 };
	uint32_t cut;

	if (whole == NULL) {
		fprintf(stderr, "bench_resp: out of memory\n");
		exit(1);
	}
	for (size_t j = 0; j < nb; j++)
		whole[j] = cyc[j][3];
	qsort(whole, nb, sizeof(*whole), cmp_u32);
	cut = whole[nb / 10] + whole[nb / 10] * 3 / 10;
	free(whole);
	for (size_t j = 0; j < nb; j++) {
		const int g = cyc[j][3] > cut;

		cnt[g]++;
		for (int i = 0; i < 4; i++)
			sum[g][i] += cyc[j][i];
	}
	printf("# the same, TSC ticks per packet (means), bursts near the fastest and the rest\n");
	printf("%-26s %9s %9s %9s %9s %7s\n", "bursts", "parse", "ICRC", "keys", "all",
	       "share");
	for (int g = 0; g < 2; g++) {
		if (cnt[g] == 0)
			continue;
		printf("%-26s", g ? "slower (> 1.3 x p10)" : "within 1.3 x p10");
		for (int i = 0; i < 4; i++)
			printf(" %9.1f", sum[g][i] / cnt[g] / BURST);
		printf(" %6.0f%%\n", 100.0 * cnt[g] / nb);
	}
}

/*
 * Where a 64-byte WRITE's time goes: the burst stages the library exports,
 * timed alone on the same fresh frames (parse; ICRC verify; the keys'
 * bulk lookup), against the whole mwp_queue_rx.  ns per packet, medians;
 * then the same per state (stages_by_state).
 */
static void
stages(struct setup *s, json_t *doc)
{
	char name[48];
	json_t *res;
	const uint32_t bursts = quick ? 2000 : 100000;
	struct rte_mbuf *tmpl[BURST], *pk[BURST], *tx[64];
	struct mwp_pkt p[BURST];
	enum mwp_drop why[BURST];
	const struct mwp_binding *b[BURST];
	uint32_t rkeys[BURST];
	uint32_t (*each)[4] = malloc(sizeof(*each) * bursts * RUNS);
	double r[4][RUNS];

	if (each == NULL) {
		fprintf(stderr, "bench_resp: out of memory\n");
		exit(1);
	}
	make_burst(s, WRITE64, 0, tmpl);
	for (int i = 0; i < BURST; i++) {
		mwp_parse(tmpl[i], &p[i]);
		rkeys[i] = reth_rkey(mwp_pkt_eh(tmpl[i], &p[i], ROCE_EH_RETH));
	}
	for (int k = 0; k < RUNS; k++) {
		uint64_t cyc[4] = { 0 };

		for (uint32_t n = 0; n < bursts; n++) {
			uint64_t t0, t1, t2, t3, t4;
			uint32_t *e;

			refill(s, tmpl, pk);
			to_mqp(s->qp)->resp.epsn = 0;
			t0 = rte_rdtsc_precise();
			mwp_parse_burst(pk, BURST, p, why);
			t1 = rte_rdtsc_precise();
			mwp_icrc_verify_burst(pk, p, why, BURST);
			t2 = rte_rdtsc_precise();
			mwp_keys_lookup_burst(s->port->keys, rkeys, BURST, b);
			t3 = rte_rdtsc_precise();
			rte_pktmbuf_free_bulk(tx, mwp_queue_rx(s->q, pk, BURST, tx, 64));
			t4 = rte_rdtsc_precise();
			cyc[0] += t1 - t0;
			cyc[1] += t2 - t1;
			cyc[2] += t3 - t2;
			cyc[3] += t4 - t3;
			e = each[(size_t)k * bursts + n];
			e[0] = (uint32_t)RTE_MIN(t1 - t0, UINT32_MAX);
			e[1] = (uint32_t)RTE_MIN(t2 - t1, UINT32_MAX);
			e[2] = (uint32_t)RTE_MIN(t3 - t2, UINT32_MAX);
			e[3] = (uint32_t)RTE_MIN(t4 - t3, UINT32_MAX);
		}
		for (int i = 0; i < 4; i++)
			r[i][k] = (double)cyc[i] * 1e9 / rte_get_tsc_hz() / ((double)bursts * BURST);
	}
	printf("# 64 B WRITE, %u live keys: ns/pkt of each stage alone, and of the whole burst\n",
	       s->nkeys);
	printf("%-26s %9.1f\n", "parse", median(r[0], RUNS));
	printf("%-26s %9.1f\n", "ICRC verify", median(r[1], RUNS));
	printf("%-26s %9.1f\n", "key lookup (bulk)", median(r[2], RUNS));
	printf("%-26s %9.1f   (the rest: %.1f)\n", "mwp_queue_rx, all", median(r[3], RUNS),
	       median(r[3], RUNS) - median(r[0], RUNS) - median(r[1], RUNS) -
	       median(r[2], RUNS));
	printf("%-26s %9.0f\n", "TSC ticks per packet", median(r[3], RUNS) * rte_get_tsc_hz() / 1e9);
	snprintf(name, sizeof(name), "stages_write_64B_%ukeys", s->nkeys);
	res = bench_json_result(doc, name);
	bench_json_int(res, "payload", 64);
	bench_json_int(res, "keys", s->nkeys);
	bench_json_num(res, "parse_ns_per_pkt", median(r[0], RUNS));
	bench_json_num(res, "icrc_ns_per_pkt", median(r[1], RUNS));
	bench_json_num(res, "key_lookup_ns_per_pkt", median(r[2], RUNS));
	bench_json_num(res, "resp_burst_ns_per_pkt", median(r[3], RUNS));
	bench_json_num(res, "ticks_per_pkt", median(r[3], RUNS) * rte_get_tsc_hz() / 1e9);
	stages_by_state(each, (size_t)bursts * RUNS);
	free(each);
	rte_pktmbuf_free_bulk(tmpl, BURST);
}

static const char *const wl_key[W__MAX] = {
	[WRITE64] = "write", [READ8] = "read_8B", [FETCH_ADD] = "fetch_add",
	[MIX_DENIED] = "write_denied10_64B", [WRITE5K] = "write_5KB",
};

/* One workload's row, printed and put into the JSON document. */
static void
report(json_t *doc, enum workload w, uint32_t nkeys, double ns, double best, double p10,
       double answers, double denied)
{
	char name[64], label[32];
	json_t *res;

	if (w == WRITE64) {
		snprintf(label, sizeof(label), "%u B WRITE ONLY", wr_payload);
		snprintf(name, sizeof(name), "write_%uB_%ukeys", wr_payload, nkeys);
	} else {
		snprintf(label, sizeof(label), "%s", wl_name[w]);
		snprintf(name, sizeof(name), "%s_%ukeys", wl_key[w], nkeys);
	}
	printf("%-26s %9u %9.2f %9.1f %12.3f %8.1f%% %10.2f %10.2f\n", label, nkeys, 1e3 / ns,
	       ns, answers, 100.0 * denied, 1e3 / best, 1e3 / p10);
	res = bench_json_result(doc, name);
	bench_json_str(res, "series", w == WRITE64 ? "write" : wl_key[w]);
	bench_json_str(res, "what", label);
	bench_json_int(res, "payload", w == WRITE64 ? wr_payload :
		       w == WRITE5K ? W5_SEG : w == MIX_DENIED ? 64 : 8);
	bench_json_int(res, "keys", nkeys);
	bench_json_int(res, "lcores", 1);
	bench_json_num(res, "mpps", 1e3 / ns);
	bench_json_num(res, "ns_per_pkt", ns);
	bench_json_num(res, "ticks_per_pkt", ns * (double)rte_get_tsc_hz() / 1e9);
	bench_json_num(res, "best_mpps", 1e3 / best);
	bench_json_num(res, "p10_mpps", 1e3 / p10);
	bench_json_num(res, "answers_per_pkt", answers);
	bench_json_num(res, "denied_share", denied);
}

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "2048",
			"-l", "0", "--log-level=lib.eal:error",
			"--log-level=lib.telemetry:error", NULL };
	uint32_t sizes[MAX_SWEEP] = { 1024, 1u << 20 }, payloads[MAX_SWEEP] = { 64, 256, 1024 };
	unsigned int nsizes = 0, npayloads = 0;
	const char *json_path = NULL;
	json_t *doc = bench_json_new("bench_resp", argc, argv);

	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "workload", required_argument, NULL, 'w' },
		{ "keys", required_argument, NULL, 'k' },
		{ "payloads", required_argument, NULL, 'p' },
		{ "cc", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] =
		"usage: %s [--quick] [--workload N] [--keys K,...] [--payloads P,...]\n"
		"          [--cc on|off] [--json FILE]\n"
		"The responder on one lcore without an ethdev: Mpps and ns per packet of\n"
		"each workload (WRITE ONLY, 8 B READ, FETCH_ADD, WRITE with denied keys,\n"
		"5 KB WRITEs) at each table size.  --workload N: only workload N (0 is the\n"
		"first printed); --keys K,...: the table sizes, live keys (default\n"
		"1024,1048576); --payloads P,...: the WRITE ONLY's payloads, 1 to 1024\n"
		"bytes (default 64,256,1024); --quick: short runs at 1024 keys and 64\n"
		"bytes unless told (a smoke test, not a figure); --cc on|off: the port's\n"
		"congestion control as configured by default (ECT(0), CNPs, DCQCN), or\n"
		"none (default on); --json FILE: the figures, with the build and the\n"
		"machine, as JSON.\n";
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'q') {
			quick = true;
		} else if (c == 'w') {
			only = atoi(optarg);
			if (only < 0 || only >= W__MAX) {
				fprintf(stderr, "bench_resp: --workload 0 to %d\n", W__MAX - 1);
				return 2;
			}
		} else if (c == 'k') {
			nsizes = bench_parse_list(optarg, sizes, MAX_SWEEP, 1, 1u << 22);
			if (nsizes == 0) {
				fprintf(stderr, "bench_resp: --keys: up to %d numbers, 1 to %u\n",
					MAX_SWEEP, 1u << 22);
				return 2;
			}
		} else if (c == 'p') {
			npayloads = bench_parse_list(optarg, payloads, MAX_SWEEP, 1, W5_SEG);
			if (npayloads == 0) {
				fprintf(stderr, "bench_resp: --payloads: up to %d numbers, 1 to %d\n",
					MAX_SWEEP, W5_SEG);
				return 2;
			}
		} else if (c == 'c') {
			if (bench_cc_option(optarg) != 0)
				return 2;
		} else if (c == 'J') {
			json_path = optarg;
		} else {
			bench_usage_exit(usage, argv[0], c);
		}
	}
	if (optind != argc)
		bench_usage_exit(usage, argv[0], '?');
	if (nsizes == 0)
		nsizes = quick ? 1 : 2;
	if (npayloads == 0)
		npayloads = quick ? 1 : 3;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench_resp: EAL init failed\n");
		return 1;
	}
	printf("# bench_resp: one lcore, no ethdev, bursts of %d, medians of %d runs\n",
	       BURST, RUNS);
	printf("%-26s %9s %9s %9s %12s %9s %10s %10s\n", "workload", "live keys", "Mpps",
	       "ns/pkt", "answers/pkt", "denied", "best Mpps", "p10 Mpps");
	for (unsigned int z = 0; z < nsizes; z++) {
		struct setup s;
		uint32_t n = sizes[z];

		srand(11);
		make_setup(&s, n);
		for (int w = 0; w < W__MAX; w++) {
			if (only >= 0 && w != only)
				continue;
			for (unsigned int pl = 0; pl < (w == WRITE64 ? npayloads : 1); pl++) {
				uint64_t answers = 0, denied = 0;
				double pkts = (double)(quick ? 2000 : 200000) * BURST * RUNS;
				double best, p10, ns;

				wr_payload = payloads[pl];
				ns = run(&s, (enum workload)w, &answers, &denied, &best, &p10);
				report(doc, (enum workload)w, n, ns, best, p10, answers / pkts,
				       denied / pkts);
			}
		}
		wr_payload = 64;
		if (only < 0 && z == 0)
			stages(&s, doc);
		free_setup(&s);
	}
	rte_eal_cleanup();
	return bench_json_write(doc, json_path) == 0 ? 0 : 1;
}
