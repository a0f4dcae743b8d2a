/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A memory-window benchmark written against <infiniband/verbs.h> alone,
 * so that the same binary runs on mwpath (through mwpath-run), on rxe or
 * on a ConnectX.  One process, one device, two RC QPs connected to each
 * other through the port's own GID: the owner binds, invalidates and
 * rebinds a Type 2 window on its region; the requester writes and reads
 * through it.
 *
 *   mw_verbs_bench [-d DEV] [-x GID_INDEX] [-n ITERS] [-r REBIND_EVERY]
 *                  [-s SIZE] [--quick] [--json FILE]
 *
 * (perftest's letters where perftest has the option.)  Prints a table:
 *   - bind+invalidate pairs a second (BIND_MW then LOCAL_INV, signaled);
 *   - WRITE and READ operations a second through a window rebound (LOCAL_INV
 *     then BIND_MW with a new key) every REBIND_EVERY operations;
 *   - the LOCAL_INV's latency from post to completion, p50 and p99;
 *   - the time from an invalidation's completion to the completion of the
 *     first access refused with its key (REM_ACCESS_ERR), p50 and p99: each
 *     sample takes both QPs through RESET again, since a refused access
 *     ends the connection;
 *   - the check that decides it all: every access with an invalidated key
 *     was refused, and the region's bytes outside the window never changed;
 *   - what the owner was told: its QP's asynchronous access errors
 *     (IBV_EVENT_QP_ACCESS_ERR), one a refusal where the device raises them.
 * --quick: -n 300 (a smoke test, not a figure).  --json writes the same
 * figures as one JSON document: bench, meta (bench_json.h) and results,
 * and beside them the figures under their own names as before (device,
 * check_ok, write_ops_per_s, ...; test_verbs_device.py reads those).
 * Exits 0 if every
 * operation completed as expected, 1 otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "bench_json.h"
#include "bench_verbs.h"

#define DEPTH		64	/* send queue, and operations in flight */
#define REGION		(1u << 20)
#define WIN_OFF		4096	/* the window: [WIN_OFF, WIN_OFF + size) */
#define GUARD		0x5a

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *owner_mr, *req_mr;
static struct ibv_mw *mw;
static struct side owner, req;
static uint8_t *owner_buf, *req_buf;
static uint32_t size = 64;
static int gid_index;
static uint8_t port = 1;
static union ibv_gid gid;
static enum ibv_mtu mtu;

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
die(const char *what, int err)
{
	fprintf(stderr, "mw_verbs_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Wait for n completions on s; each must have status want (its opcode
 * checked by the caller's count).  Returns the last wr_id. */
static uint64_t
wait_cq(struct side *s, int n, enum ibv_wc_status want)
{
	struct ibv_wc wc[16];
	uint64_t last = 0;
	double limit = now_s() + 10;

	while (n > 0) {
		int got = ibv_poll_cq(s->cq, n < 16 ? n : 16, wc);

		if (got < 0)
			die("ibv_poll_cq", EIO);
		for (int i = 0; i < got; i++) {
			if (wc[i].status != want) {
				fprintf(stderr, "mw_verbs_bench: completion %s, expected %s\n",
					ibv_wc_status_str(wc[i].status), ibv_wc_status_str(want));
				exit(1);
			}
			last = wc[i].wr_id;
		}
		n -= got;
		if (got == 0 && now_s() > limit) {
			fprintf(stderr, "mw_verbs_bench: no completion in 10 s\n");
			exit(1);
		}
	}
	return last;
}

static void
post(struct side *s, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(s->qp, wr, &bad);

	if (ret != 0)
		die("ibv_post_send", ret);
}

static uint32_t
bind(uint32_t key)
{
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = {
			.mw = mw, .rkey = key,
			.bind_info = {
				.mr = owner_mr, .addr = (uintptr_t)owner_buf + WIN_OFF,
				.length = size,
				.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			},
		},
	};

	post(&owner, &wr);
	return key;
}

static void
invalidate(uint32_t key)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = key,
	};

	post(&owner, &wr);
}

static void
rdma(enum ibv_wr_opcode op, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)req_buf, .length = size, .lkey = req_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)owner_buf + WIN_OFF, .rkey = rkey },
	};

	post(&req, &wr);
}

static void
connect_qp(struct ibv_qp *qp, uint32_t peer, const union ibv_gid *gid, enum ibv_mtu mtu)
{
	const char *step;
	const int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_LOCAL_WRITE;
	int ret = bench_connect_rc(qp, port, peer, gid, gid_index, mtu, access, &step);

	if (ret != 0)
		die(step, ret);
}

/* Both QPs back to RESET and connected again (a refused access ends the
 * connection: the requester's QP goes to ERR, and the responder's may). */
static void
reconnect(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;

	if (ibv_modify_qp(owner.qp, &a, IBV_QP_STATE) != 0 ||
	    ibv_modify_qp(req.qp, &a, IBV_QP_STATE) != 0)
		die("modify to RESET", EINVAL);
	while (ibv_poll_cq(owner.cq, 1, &wc) > 0 || ibv_poll_cq(req.cq, 1, &wc) > 0)
		;
	connect_qp(owner.qp, req.qp->qp_num, &gid, mtu);
	connect_qp(req.qp, owner.qp->qp_num, &gid, mtu);
}

static void
make_side(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH + 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	s->cq = ibv_create_cq(ctx, 2 * DEPTH + 8, NULL, NULL, 0);
	if (s->cq == NULL)
		die("ibv_create_cq", errno);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	if (s->qp == NULL)
		die("ibv_create_qp", errno);
}

static int
cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ops RDMA operations of kind op through the window, rebound with a new
 * key every `every`; operations per second. */
static double
rdma_rate(enum ibv_wr_opcode op, unsigned int ops, unsigned int every, uint32_t *key)
{
	const double t0 = now_s();

	for (unsigned int done = 0; done < ops;) {
		unsigned int batch = every - done % every, inflight = 0;

		if (batch > ops - done)
			batch = ops - done;
		for (unsigned int i = 0; i < batch; i++) {
			rdma(op, *key, done + i);
			if (++inflight == DEPTH) {
				wait_cq(&req, DEPTH / 2, IBV_WC_SUCCESS);
				inflight -= DEPTH / 2;
			}
		}
		wait_cq(&req, (int)inflight, IBV_WC_SUCCESS);
		done += batch;
		if (done % every == 0 && done < ops) {
			invalidate(*key);
			*key = bind(ibv_inc_rkey(*key));
			wait_cq(&owner, 2, IBV_WC_SUCCESS);
		}
	}
	return ops / (now_s() - t0);
}

static const char usage[] =
	"usage: %s [options]\n"
	"  -d, --ib-dev=DEV         the device (default: the first)\n"
	"  -x, --gid-index=N        the port's GID to connect through (default 0)\n"
	"  -n, --iters=N            operations of each kind (default 20000)\n"
	"  -r, --rebind-every=N     rebind the window every N WRITEs or READs (default 100)\n"
	"  -s, --size=BYTES         bytes a WRITE or READ moves, the window's length (default 64)\n"
	"      --quick              -n 300: a smoke test, not a figure\n"
	"      --json=FILE          also write the figures, the build and the machine\n"
	"                           to FILE as JSON\n"
	"  -h, --help               this\n";

/* p50 and p99 of n samples, sorted in place. */
static void
percentiles(double *v, int n, double *p50, double *p99)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	*p50 = v[n / 2];
	*p99 = v[n * 99 / 100];
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'x' },
		{ "iters", required_argument, NULL, 'n' },
		{ "rebind-every", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'J' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev_name = NULL, *json = NULL;
	unsigned int ops = 20000, every = 100;
	const char *what;
	struct ibv_port_attr pa;
	double t0, *lat, pairs, wr_rate, rd_rate, inv50, inv99, ref50, ref99;
	uint32_t key;
	int n, c, err, refusals, access_events;
	bool ok = true;

	while ((c = getopt_long(argc, argv, "d:g:x:n:r:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': /* fall through: -g as ibv_rc_pingpong spells it */
		case 'x': gid_index = atoi(optarg); break;
		case 'n': ops = (unsigned int)atoi(optarg); break;
		case 'r': every = (unsigned int)atoi(optarg); break;
		case 's': size = (uint32_t)atoi(optarg); break;
		case 'J': json = optarg; break;
		case 'q': ops = 300; break;
		case 'h':
			printf(usage, argv[0]);
			return 0;
		default:
			fprintf(stderr, usage, argv[0]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, usage, argv[0]);
		return 2;
	}
	if (ops == 0 || every == 0 || size == 0 || size > REGION - WIN_OFF) {
		fprintf(stderr, "mw_verbs_bench: -n, -r and -s must be positive (-s at most %u)\n",
			REGION - WIN_OFF);
		return 2;
	}
	ctx = bench_open_device(dev_name, port, gid_index, &pa, &gid, &what, &err);
	if (ctx == NULL)
		die(what, err);
	pd = ibv_alloc_pd(ctx);
	owner_buf = calloc(1, REGION);
	req_buf = calloc(1, REGION);
	if (pd == NULL || owner_buf == NULL || req_buf == NULL)
		die("alloc", ENOMEM);
	memset(owner_buf, GUARD, REGION);
	owner_mr = ibv_reg_mr(pd, owner_buf, REGION, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	req_mr = ibv_reg_mr(pd, req_buf, REGION, IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (owner_mr == NULL || req_mr == NULL || mw == NULL)
		die("ibv_reg_mr / ibv_alloc_mw", errno);
	make_side(&owner);
	make_side(&req);
	mtu = pa.active_mtu;
	connect_qp(owner.qp, req.qp->qp_num, &gid, mtu);
	connect_qp(req.qp, owner.qp->qp_num, &gid, mtu);
	memset(req_buf, 0xa5, size);

	/* bind + invalidate pairs */
	key = mw->rkey;
	t0 = now_s();
	for (unsigned int i = 0; i < ops; i++) {
		key = bind(ibv_inc_rkey(key));
		invalidate(key);
		wait_cq(&owner, 2, IBV_WC_SUCCESS);
	}
	pairs = ops / (now_s() - t0);
	printf("bind+invalidate pairs/s   %12.0f\n", pairs);

	/* RDMA through a window rebound every `every` operations */
	key = bind(ibv_inc_rkey(key));
	wait_cq(&owner, 1, IBV_WC_SUCCESS);
	wr_rate = rdma_rate(IBV_WR_RDMA_WRITE, ops, every, &key);
	printf("WRITE %u B ops/s           %12.0f  (rebound every %u)\n", size, wr_rate, every);
	rd_rate = rdma_rate(IBV_WR_RDMA_READ, ops, every, &key);
	printf("READ %u B ops/s            %12.0f  (rebound every %u)\n", size, rd_rate, every);

	/* invalidate latency, post to completion */
	n = ops < 2000 ? (int)ops : 2000;
	lat = calloc((size_t)n, sizeof(*lat));
	for (int i = 0; i < n; i++) {
		double t;

		invalidate(key);
		t = now_s();
		wait_cq(&owner, 1, IBV_WC_SUCCESS);
		lat[i] = now_s() - t;
		key = bind(ibv_inc_rkey(key));
		wait_cq(&owner, 1, IBV_WC_SUCCESS);
	}
	percentiles(lat, n, &inv50, &inv99);
	printf("LOCAL_INV to completion   p50 %.1f us  p99 %.1f us  (%d)\n",
	       inv50 * 1e6, inv99 * 1e6, n);

	/* from an invalidation's completion to the first refused access:
	 * each sample ends the connection, so both QPs start again */
	refusals = ops < 200 ? (int)ops : 200;
	for (int i = 0; i < refusals; i++) {
		invalidate(key);
		wait_cq(&owner, 1, IBV_WC_SUCCESS);
		t0 = now_s();
		rdma(IBV_WR_RDMA_WRITE, key, 99);
		wait_cq(&req, 1, IBV_WC_REM_ACCESS_ERR);
		lat[i] = now_s() - t0;
		reconnect();
		key = bind(ibv_inc_rkey(key));
		wait_cq(&owner, 1, IBV_WC_SUCCESS);
	}
	percentiles(lat, refusals, &ref50, &ref99);
	printf("invalidated to refused    p50 %.1f us  p99 %.1f us  (%d)\n",
	       ref50 * 1e6, ref99 * 1e6, refusals);
	free(lat);

	/* the check: the last invalidated key is refused too, memory outside
	 * the window untouched, the window holds the last WRITE */
	invalidate(key);
	wait_cq(&owner, 1, IBV_WC_SUCCESS);
	rdma(IBV_WR_RDMA_WRITE, key, 99);
	wait_cq(&req, 1, IBV_WC_REM_ACCESS_ERR);
	for (uint32_t i = 0; i < REGION; i++) {
		const bool in = i >= WIN_OFF && i < WIN_OFF + size;

		if (in ? owner_buf[i] != 0xa5 : owner_buf[i] != GUARD) {
			fprintf(stderr, "mw_verbs_bench: byte %u of the region is 0x%02x\n", i,
				owner_buf[i]);
			ok = false;
			break;
		}
	}
	printf("invalidated key refused   %s\n", ok ? "yes (REM_ACCESS_ERR), memory intact" :
							   "MEMORY CHANGED");
	/* the responder's side of each refusal: an access error event */
	{
		struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;

		access_events = 0;
		while (poll(&p, 1, 200) > 0 && ibv_get_async_event(ctx, &ev) == 0) {
			if (ev.event_type == IBV_EVENT_QP_ACCESS_ERR && ev.element.qp == owner.qp)
				access_events++;
			ibv_ack_async_event(&ev);
		}
		printf("owner's access errors     %d async events for %d refusals\n",
		       access_events, refusals + 1);
	}
	if (json != NULL) {
		json_t *doc = bench_json_new("mw_verbs_bench", argc, argv), *r, *p;
		const char *dev = ibv_get_device_name(ctx->device);
		char name[48];

		r = bench_json_result(doc, "bind_invalidate");
		bench_json_str(r, "device", dev);
		bench_json_num(r, "pairs_per_s", pairs);
		bench_json_num(r, "mops", pairs / 1e6);
		for (int k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "%s_%" PRIu32 "B", k ? "read" : "write", size);
			r = bench_json_result(doc, name);
			bench_json_str(r, "series", k ? "read" : "write");
			bench_json_str(r, "device", dev);
			bench_json_int(r, "payload", size);
			bench_json_int(r, "rebind_every", every);
			bench_json_num(r, "ops_per_s", k ? rd_rate : wr_rate);
			bench_json_num(r, "mops", (k ? rd_rate : wr_rate) / 1e6);
		}
		r = bench_json_result(doc, "local_inv_latency");
		bench_json_num(r, "p50_us", inv50 * 1e6);
		bench_json_num(r, "p99_us", inv99 * 1e6);
		r = bench_json_result(doc, "invalidated_to_refused");
		bench_json_num(r, "p50_us", ref50 * 1e6);
		bench_json_num(r, "p99_us", ref99 * 1e6);
		bench_json_int(r, "samples", refusals);
		/* the figures under their earlier names */
		json_object_set_new(doc, "device", json_string(dev));
		json_object_set_new(doc, "size", json_integer(size));
		json_object_set_new(doc, "iters", json_integer(ops));
		json_object_set_new(doc, "rebind_every", json_integer(every));
		json_object_set_new(doc, "bind_invalidate_pairs_per_s", json_real(pairs));
		json_object_set_new(doc, "write_ops_per_s", json_real(wr_rate));
		json_object_set_new(doc, "read_ops_per_s", json_real(rd_rate));
		p = json_pack("{s:f, s:f}", "p50", inv50 * 1e6, "p99", inv99 * 1e6);
		json_object_set_new(doc, "local_inv_us", p);
		p = json_pack("{s:f, s:f}", "p50", ref50 * 1e6, "p99", ref99 * 1e6);
		json_object_set_new(doc, "invalidated_to_refused_us", p);
		json_object_set_new(doc, "owner_access_error_events", json_integer(access_events));
		json_object_set_new(doc, "refusals", json_integer(refusals + 1));
		json_object_set_new(doc, "check_ok", json_boolean(ok));
		if (bench_json_write(doc, json) != 0)
			ok = false;
	}
	return ok ? 0 : 1;
}
