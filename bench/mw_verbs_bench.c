/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A memory-window benchmark written against <infiniband/verbs.h> alone,
 * so that the same binary runs on mwpath (through mwpath-run), on rxe or
 * on a ConnectX.  One process, one device, two RC QPs connected to each
 * other through the port's own GID: the owner binds, invalidates and
 * rebinds a Type 2 window on its region; the requester writes and reads
 * through it.
 *
 *   mw_verbs_bench [-d DEV] [-g GID_INDEX] [-n OPS] [-r REBIND_EVERY] [-s SIZE]
 *
 * Prints, one line each:
 *   - bind+invalidate pairs a second (BIND_MW then LOCAL_INV, signaled);
 *   - WRITE and READ operations a second through a window rebound (LOCAL_INV
 *     then BIND_MW with a new key) every REBIND_EVERY operations;
 *   - the LOCAL_INV's latency from post to completion, p50 and p99;
 *   - the check that decides it all: a WRITE with the key just invalidated
 *     completes with IBV_WC_REM_ACCESS_ERR, and the region's bytes outside
 *     the window never changed.
 * Exits 0 if every operation completed as expected, 1 otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

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
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = port, .pkey_index = 0,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_LOCAL_WRITE,
	};
	int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS);

	if (ret != 0)
		die("modify to INIT", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = port;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret != 0)
		die("modify to RTR", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 16;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret != 0)
		die("modify to RTS", ret);
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

int
main(int argc, char **argv)
{
	const char *dev_name = NULL;
	unsigned int ops = 20000, every = 100;
	struct ibv_device **list;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	double t0, *lat;
	uint32_t key;
	int n, c;
	bool ok = true;

	while ((c = getopt(argc, argv, "d:g:n:r:s:h")) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'n': ops = (unsigned int)atoi(optarg); break;
		case 'r': every = (unsigned int)atoi(optarg); break;
		case 's': size = (uint32_t)atoi(optarg); break;
		default:
			printf("usage: %s [-d DEV] [-g GID_INDEX] [-n OPS] [-r REBIND_EVERY] [-s SIZE]\n",
			       argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (ops == 0 || every == 0 || size == 0 || size > REGION - WIN_OFF) {
		fprintf(stderr, "mw_verbs_bench: -n, -r and -s must be positive (-s at most %u)\n",
			REGION - WIN_OFF);
		return 2;
	}
	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0)
		die("no RDMA device", ENODEV);
	for (int i = 0; i < n && ctx == NULL; i++)
		if (dev_name == NULL || strcmp(ibv_get_device_name(list[i]), dev_name) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (ctx == NULL)
		die(dev_name != NULL ? dev_name : "ibv_open_device", ENODEV);
	if (ibv_query_port(ctx, port, &pa) != 0 || ibv_query_gid(ctx, port, gid_index, &gid) != 0)
		die("port or GID query", EINVAL);
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
	connect_qp(owner.qp, req.qp->qp_num, &gid, pa.active_mtu);
	connect_qp(req.qp, owner.qp->qp_num, &gid, pa.active_mtu);
	memset(req_buf, 0xa5, size);

	/* bind + invalidate pairs */
	key = mw->rkey;
	t0 = now_s();
	for (unsigned int i = 0; i < ops; i++) {
		key = bind(ibv_inc_rkey(key));
		invalidate(key);
		wait_cq(&owner, 2, IBV_WC_SUCCESS);
	}
	printf("bind+invalidate pairs/s   %12.0f\n", ops / (now_s() - t0));

	/* RDMA through a window rebound every `every` operations */
	key = bind(ibv_inc_rkey(key));
	wait_cq(&owner, 1, IBV_WC_SUCCESS);
	printf("WRITE %u B ops/s           %12.0f  (rebound every %u)\n", size,
	       rdma_rate(IBV_WR_RDMA_WRITE, ops, every, &key), every);
	printf("READ %u B ops/s            %12.0f  (rebound every %u)\n", size,
	       rdma_rate(IBV_WR_RDMA_READ, ops, every, &key), every);

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
	qsort(lat, (size_t)n, sizeof(*lat), cmp_double);
	printf("LOCAL_INV to completion   p50 %.1f us  p99 %.1f us  (%d)\n",
	       lat[n / 2] * 1e6, lat[n * 99 / 100] * 1e6, n);
	free(lat);

	/* the check: the invalidated key is refused, memory outside the
	 * window untouched, the window holds the last WRITE */
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
	return ok ? 0 : 1;
}
