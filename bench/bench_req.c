/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_req: the requester's rates on one lcore, without an ethdev -- the
 * other half of bench_resp.
 *
 * One RC QP in RTS, its peer a table of pre-computed answers.  A pass
 * posts 32 signaled work requests with ibv_post_send (timed alone: the
 * post), then runs the QP's engine and queue as an lcore does
 * (mwp_engine_run: the doorbell, the send queue; mwp_queue_tx: the
 * requests built into mbufs, headers, payload and ICRC) until every
 * packet of the 32 is out, and frees them as a tx burst would (timed:
 * the send).  The peer's answers are then built, untimed, from the PSNs
 * of what was sent: one coalesced ACK for the pass's WRITEs and SENDs (as
 * mwpath's responder answers a burst), a READ response per MTU of each
 * READ, an ATOMIC ACKNOWLEDGE per atomic.  Handing those to mwp_queue_rx
 * and polling the CQ until it holds the pass's 32 completions is the
 * third figure (timed: the completion): the ACK's PSN checks, READ data
 * and atomic results placed, completions made and read.
 *
 * Workloads: RDMA WRITE, SEND, RDMA READ at each --sizes (default 64,
 * 256, 1024, 4096 bytes; the path MTU is 1024, so 4 KiB is four packets
 * each way), FETCH_ADD and CMP_SWAP (8 bytes).  Figures: medians of RUNS
 * runs, in million work requests a second for each stage alone, packets a
 * second for the send, and the three stages together (one lcore doing
 * the requester's whole work, not counting the wire and the peer).
 *
 * Usage: bench_req [--quick] [--workload N] [--sizes S,...] [--json FILE]
 * (N: 0 WRITE, 1 SEND, 2 READ, 3 FETCH_ADD, 4 CMP_SWAP.  --quick: runs of
 * 2000 passes at 64 bytes unless --sizes says otherwise.)
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "mwp_priv.h"
#include "mwpath.h"
#include "bench_cc.h"
#include "bench_util.h"

#define RUNS 5
#define BURST 32
#define MTU 1024
#define MAX_SIZE 4096
#define MAX_PKTS (BURST * (MAX_SIZE / MTU))
#define BUF_LEN (BURST * MAX_SIZE)
#define REMOTE_VA UINT64_C(0x100000000)
#define RKEY 0x4242
#define PEER_QPN 0x99
#define MAX_SWEEP 8

enum workload { W_WRITE, W_SEND, W_READ, W_FETCH_ADD, W_CMP_SWAP, W__MAX };

static const char *const wl_name[W__MAX] = {
	[W_WRITE] = "WRITE", [W_SEND] = "SEND", [W_READ] = "READ",
	[W_FETCH_ADD] = "FETCH_ADD", [W_CMP_SWAP] = "CMP_SWAP",
};
static const char *const wl_key[W__MAX] = {
	[W_WRITE] = "write", [W_SEND] = "send", [W_READ] = "read",
	[W_FETCH_ADD] = "fetch_add", [W_CMP_SWAP] = "cmp_swap",
};

static bool quick;

struct setup {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct mwp_port *port;
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;
	struct rte_mempool *mp;
	struct mwp_flow peer;		/* the answers' addresses */
	uint8_t *buf;
	uint32_t msn;
};

static void
die(const char *what)
{
	fprintf(stderr, "bench_req: %s\n", what);
	exit(1);
}

/* The RC QP, in RTS towards PEER_QPN at 192.0.2.2, its MAC known. */
static struct ibv_qp *
rts_qp(struct setup *s)
{
	struct ibv_qp_init_attr ia = { .send_cq = s->cq, .recv_cq = s->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4 * BURST, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp *qp = mwp_create_qp(s->pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	struct rte_ether_addr mac;

	if (qp == NULL)
		die("cannot create the QP");
	if (mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS) != 0)
		die("INIT refused");
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	inet_pton(AF_INET6, "::ffff:192.0.2.2", a.ah_attr.grh.dgid.raw);
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = PEER_QPN;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	if (mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0)
		die("RTR refused");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RTS refused");
	rte_ether_unformat_addr("02:00:00:00:00:02", &mac);
	if (mwp_qp_set_peer_mac(qp, &mac) != 0)
		die("cannot set the peer's MAC");
	return qp;
}

static void
make_setup(struct setup *s)
{
	struct mwp_device_attr da = { .max_keys = 64, .socket = SOCKET_ID_ANY };
	struct mwp_port_conf pc = { .mtu = MTU, .has_ipv4 = true };

	bench_cc_conf(&pc.cc);
	memset(s, 0, sizeof(*s));
	s->ctx = mwp_open_device(&da);
	if (s->ctx == NULL)
		die("cannot open the device");
	s->pd = mwp_alloc_pd(s->ctx);
	s->cq = mwp_create_cq(s->ctx, 4 * BURST);
	s->buf = aligned_alloc(4096, BUF_LEN);
	if (s->pd == NULL || s->cq == NULL || s->buf == NULL)
		die("cannot make the PD, CQ and buffer");
	memset(s->buf, 0x5a, BUF_LEN);
	s->mr = mwp_reg_mr(s->pd, s->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (s->mr == NULL)
		die("cannot register the buffer");
	s->qp = rts_qp(s);
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	s->port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	s->mp = rte_pktmbuf_pool_create("bench_req", 4095, 256, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE + MAX_SIZE, SOCKET_ID_ANY);
	if (s->port == NULL || s->mp == NULL)
		die("cannot make the port and its mempool");
	mwp_port_set_mempool(s->port, s->mp);
	s->eng = mwp_engine_create(0, SOCKET_ID_ANY);
	s->q = s->eng != NULL ? mwp_queue_create(s->eng, s->port, 0, &s->st) : NULL;
	if (s->q == NULL)
		die("cannot create the engine and queue");
	if (mwp_port_attach_qp(s->port, s->qp) != 0)
		die("cannot attach the QP");
	mwp_engine_start(s->eng);
	/* the peer, as it answers */
	rte_ether_unformat_addr("02:00:00:00:00:02", &s->peer.smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &s->peer.dmac);
	inet_pton(AF_INET, "192.0.2.2", &s->peer.sip4);
	inet_pton(AF_INET, "192.0.2.1", &s->peer.dip4);
	s->peer.sport = 0xd000;
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
	free(s->buf);
}

/* The pass's 32 work requests. */
static void
post_burst(struct setup *s, enum workload w, uint32_t size, uint64_t pass)
{
	struct ibv_sge sge[BURST];
	struct ibv_send_wr wr[BURST], *bad;

	for (int i = 0; i < BURST; i++) {
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)s->buf + (uint64_t)i * MAX_SIZE,
					   .length = size, .lkey = s->mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = pass * BURST + (uint64_t)i,
			.sg_list = &sge[i], .num_sge = 1, .send_flags = IBV_SEND_SIGNALED };
		switch (w) {
		case W_WRITE:
		case W_READ:
			wr[i].opcode = w == W_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
			wr[i].wr.rdma.remote_addr = REMOTE_VA + (uint64_t)i * MAX_SIZE;
			wr[i].wr.rdma.rkey = RKEY;
			break;
		case W_SEND:
			wr[i].opcode = IBV_WR_SEND;
			break;
		default:
			wr[i].opcode = w == W_FETCH_ADD ? IBV_WR_ATOMIC_FETCH_AND_ADD :
				       IBV_WR_ATOMIC_CMP_AND_SWP;
			wr[i].wr.atomic.remote_addr = REMOTE_VA + (uint64_t)i * 8;
			wr[i].wr.atomic.rkey = RKEY;
			wr[i].wr.atomic.compare_add = 1;
			wr[i].wr.atomic.swap = 2;
			break;
		}
		/* one call a work request, as perftest posts */
		if (ibv_post_send(s->qp, &wr[i], &bad) != 0)
			die("ibv_post_send failed");
	}
}

/* The peer's answers to the n packets sent (PSNs and opcodes in psn[],
 * op[]) into ans; their count. */
static unsigned int
answers(struct setup *s, enum workload w, uint32_t size, const uint32_t *psn,
	const uint8_t *op, unsigned int n, struct rte_mbuf **ans)
{
	static const uint8_t data[MAX_SIZE];
	const uint32_t qpn = s->qp->qp_num;
	unsigned int k = 0;

	if (w == W_WRITE || w == W_SEND) {
		/* one ACK for them all, as a responder coalesces a burst */
		ans[k] = rte_pktmbuf_alloc(s->mp);
		if (ans[k] == NULL || mwp_build_ack(ans[k], &s->peer, qpn, psn[n - 1],
						    ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
						    s->msn++) != 0)
			die("building an ACK failed");
		return 1;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (!(roce_opcode[op[i]].mask & ROCE_M_REQ))
			continue;
		if (w == W_READ) {
			uint32_t left = size, p = psn[i];
			bool first = true;

			do {
				uint32_t len = RTE_MIN(left, (uint32_t)MTU);
				bool last = left <= MTU;
				uint8_t o = first ? (last ? ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
						     ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST) :
					    (last ? ROCE_OP_RC_RDMA_READ_RESPONSE_LAST :
					     ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);

				ans[k] = rte_pktmbuf_alloc(s->mp);
				if (ans[k] == NULL ||
				    mwp_build_read_resp(ans[k], &s->peer, o, qpn, p,
							ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
							s->msn, data, len) != 0)
					die("building a READ response failed");
				k++;
				left -= len;
				p = (p + 1) & 0xffffff;
				first = false;
			} while (left != 0);
			s->msn++;
		} else {
			ans[k] = rte_pktmbuf_alloc(s->mp);
			if (ans[k] == NULL || mwp_build_atomic_ack(ans[k], &s->peer, qpn, psn[i],
								   s->msn++, 7) != 0)
				die("building an ATOMIC ACKNOWLEDGE failed");
			k++;
		}
	}
	return k;
}

struct figures {
	double post, send, comp, all;	/* ns per work request */
	double pkts;			/* packets sent per work request */
};

/* One round of a pass: the lcore's tx side until nothing more goes out
 * (c[1]), the peer's answers built (untimed), taken and the completions
 * polled (c[2]); *got counts the pass's completions.  Packets sent. */
static unsigned int
send_round(struct setup *s, enum workload w, uint32_t size, uint64_t *c, unsigned int *got)
{
	struct rte_mbuf *tx[MAX_PKTS + 64], *ans[MAX_PKTS], *back[64];
	uint32_t psn[MAX_PKTS + 64];
	uint8_t op[MAX_PKTS + 64];
	struct ibv_wc wc[BURST];
	unsigned int n = 0, na, want, have = 0, spins = 0;
	uint64_t t0, t1, t2;

	t0 = rte_rdtsc_precise();
	for (;;) {
		uint16_t m;

		mwp_engine_run(s->eng, rte_rdtsc());
		m = mwp_queue_tx(s->q, tx + n, 64);
		if (m == 0)
			break;
		n += m;
		if (n > MAX_PKTS)
			die("more packets than the work requests make");
	}
	t1 = rte_rdtsc_precise();
	for (unsigned int i = 0; i < n; i++) {
		struct mwp_pkt p;

		if (mwp_parse(tx[i], &p) != MWP_DROP_NONE)
			die("the requester sent a frame that does not parse");
		psn[i] = p.psn;
		op[i] = p.opcode;
	}
	t2 = rte_rdtsc_precise();
	rte_pktmbuf_free_bulk(tx, n);
	c[1] += t1 - t0 + rte_rdtsc_precise() - t2;
	if (n == 0)
		return 0;
	na = answers(s, w, size, psn, op, n, ans);
	/* a completion for each message whose last packet went out */
	want = 0;
	for (unsigned int i = 0; i < n; i++)
		want += (roce_opcode[op[i]].mask & ROCE_M_REQ) &&
			(roce_opcode[op[i]].mask & ROCE_M_END);
	t0 = rte_rdtsc_precise();
	for (unsigned int i = 0; i < na; i += 32) {
		uint16_t m = mwp_queue_rx(s->q, ans + i, (uint16_t)RTE_MIN(32u, na - i),
					  back, 64);

		rte_pktmbuf_free_bulk(back, m);
	}
	while (have < want) {
		int m = ibv_poll_cq(s->cq, (int)(want - have), wc);

		if (m < 0)
			die("ibv_poll_cq failed");
		for (int i = 0; i < m; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "bench_req: %s: completion %s\n", wl_name[w],
					ibv_wc_status_str(wc[i].status));
				exit(1);
			}
		have += (unsigned int)m;
		if (m == 0) {
			mwp_engine_run(s->eng, rte_rdtsc());
			if (++spins > 1000)
				die("the completions did not come");
		}
	}
	c[2] += rte_rdtsc_precise() - t0;
	*got += have;
	return n;
}

/* One workload at one size: RUNS runs of passes, the medians. */
static void
run(struct setup *s, enum workload w, uint32_t size, struct figures *f)
{
	const uint32_t passes = quick ? 2000 : 100000;
	const double hz = (double)rte_get_tsc_hz();
	double r[4][RUNS];
	uint64_t pkts = 0, pass = 0;

	for (int k = 0; k < RUNS; k++) {
		uint64_t c[3] = { 0 };

		for (uint32_t b = 0; b < passes; b++, pass++) {
			uint64_t t0;
			unsigned int got = 0;

			t0 = rte_rdtsc_precise();
			post_burst(s, w, size, pass);
			c[0] += rte_rdtsc_precise() - t0;
			/* rounds of send, answer, complete: READs and atomics go
			 * max_rd_atomic at a time */
			while (got < BURST) {
				unsigned int n = send_round(s, w, size, c, &got);

				if (n == 0)
					die("nothing was sent");
				pkts += n;
			}
		}
		for (int i = 0; i < 3; i++)
			r[i][k] = (double)c[i] * 1e9 / hz / ((double)passes * BURST);
		r[3][k] = r[0][k] + r[1][k] + r[2][k];
	}
	f->post = median(r[0], RUNS);
	f->send = median(r[1], RUNS);
	f->comp = median(r[2], RUNS);
	f->all = median(r[3], RUNS);
	f->pkts = (double)pkts / ((double)passes * RUNS * BURST);
}

static void
report(json_t *doc, enum workload w, uint32_t size, const struct figures *f)
{
	char name[48], label[32];
	json_t *res;

	if (w == W_FETCH_ADD || w == W_CMP_SWAP) {
		snprintf(label, sizeof(label), "%s", wl_name[w]);
		snprintf(name, sizeof(name), "req_%s", wl_key[w]);
	} else {
		snprintf(label, sizeof(label), "%u B %s", size, wl_name[w]);
		snprintf(name, sizeof(name), "req_%s_%uB", wl_key[w], size);
	}
	printf("%-16s %9.2f %9.2f %9.2f %9.2f %9.2f %9.1f %9.1f %9.1f\n", label,
	       1e3 / f->post, 1e3 / f->send, f->pkts * 1e3 / f->send, 1e3 / f->comp,
	       1e3 / f->all, f->post, f->send, f->comp);
	res = bench_json_result(doc, name);
	bench_json_str(res, "series", wl_key[w]);
	bench_json_str(res, "what", label);
	bench_json_int(res, "payload", w == W_FETCH_ADD || w == W_CMP_SWAP ? 8 : size);
	bench_json_int(res, "lcores", 1);
	bench_json_num(res, "mpps", 1e3 / f->all);	/* work requests, all stages */
	bench_json_num(res, "post_mwr_per_s", 1e3 / f->post);
	bench_json_num(res, "send_mwr_per_s", 1e3 / f->send);
	bench_json_num(res, "send_mpps", f->pkts * 1e3 / f->send);
	bench_json_num(res, "completion_mwr_per_s", 1e3 / f->comp);
	bench_json_num(res, "post_ns", f->post);
	bench_json_num(res, "send_ns", f->send);
	bench_json_num(res, "completion_ns", f->comp);
	bench_json_num(res, "packets_per_wr", f->pkts);
	bench_json_num(res, "ticks_per_wr", f->all * (double)rte_get_tsc_hz() / 1e9);
}

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			"-l", "0", "--log-level=lib.eal:error",
			"--log-level=lib.telemetry:error", NULL };
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "workload", required_argument, NULL, 'w' },
		{ "sizes", required_argument, NULL, 's' },
		{ "cc", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] =
		"usage: %s [--quick] [--workload N] [--sizes S,...] [--cc on|off]\n"
		"          [--json FILE]\n"
		"The requester on one lcore without an ethdev: million work requests a\n"
		"second posted, sent (built into frames and handed to tx) and completed\n"
		"(the peer's ACKs and responses taken, completions polled), for RDMA\n"
		"WRITE, SEND and READ at each size and the two atomics.  --workload N:\n"
		"only N (0 WRITE, 1 SEND, 2 READ, 3 FETCH_ADD, 4 CMP_SWAP); --sizes\n"
		"S,...: payloads, 1 to 4096 bytes (default 64,256,1024,4096); --quick:\n"
		"short runs at 64 bytes unless told (a smoke test, not a figure);\n"
		"--cc on|off: the port's congestion control as configured by default\n"
		"(ECT(0), CNPs, DCQCN), or none (default on); --json FILE: the figures,\n"
		"with the build and the machine, as JSON.\n";
	uint32_t sizes[MAX_SWEEP] = { 64, 256, 1024, 4096 };
	unsigned int nsizes = 0;
	const char *json_path = NULL;
	json_t *doc = bench_json_new("bench_req", argc, argv);
	struct setup s;
	int only = -1, c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'q') {
			quick = true;
		} else if (c == 'w') {
			char *end;

			only = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || only < 0 || only >= W__MAX) {
				fprintf(stderr, "bench_req: --workload 0 to %d\n", W__MAX - 1);
				return 2;
			}
		} else if (c == 's') {
			nsizes = bench_parse_list(optarg, sizes, MAX_SWEEP, 1, MAX_SIZE);
			if (nsizes == 0) {
				fprintf(stderr, "bench_req: --sizes: up to %d numbers, 1 to %d\n",
					MAX_SWEEP, MAX_SIZE);
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
		nsizes = quick ? 1 : 4;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0)
		die("EAL init failed");
	make_setup(&s);
	printf("# bench_req: one RC QP, one lcore, no ethdev, passes of %d signaled work "
	       "requests, path MTU %d, medians of %d runs\n", BURST, MTU, RUNS);
	printf("# M work requests/s of each stage alone (send: also Mpps), and of the "
	       "three; then ns per work request\n");
	printf("%-16s %9s %9s %9s %9s %9s %9s %9s %9s\n", "workload", "post", "send",
	       "send Mpps", "complete", "all", "post ns", "send ns", "comp ns");
	for (int w = 0; w < W__MAX; w++) {
		const bool atomic = w == W_FETCH_ADD || w == W_CMP_SWAP;

		if (only >= 0 && w != only)
			continue;
		for (unsigned int z = 0; z < (atomic ? 1 : nsizes); z++) {
			struct figures f;
			uint32_t size = atomic ? 8 : sizes[z];

			run(&s, (enum workload)w, size, &f);
			report(doc, (enum workload)w, size, &f);
		}
	}
	free_setup(&s);
	rte_eal_cleanup();
	return bench_json_write(doc, json_path) == 0 ? 0 : 1;
}
