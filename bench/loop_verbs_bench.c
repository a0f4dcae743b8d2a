/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The whole path in one process, written against <infiniband/verbs.h>
 * alone (like mw_verbs_bench: the same binary runs on mwpath through
 * mwpath-run, on rxe or on a ConnectX).  One device, two RC QPs connected
 * to each other through the port's own GID; the program posts on one and
 * polls, as perftest's bandwidth tests do: work requests kept in flight up
 * to the send queue's depth (-t), one in -c signaled, completions polled in
 * batches; SENDs land in receives the other QP keeps posted.
 *
 *   loop_verbs_bench [-d DEV] [-x GID_INDEX] [-n ITERS] [-t TX_DEPTH]
 *                    [-c CQ_MOD] [--sizes S,...] [--op NAME] [--quick]
 *                    [--json FILE]
 *
 * Operations: WRITE, SEND and READ at each size (default 64,256,1024,4096
 * bytes) and FETCH_ADD and CMP_SWAP (8 bytes); --op write|send|read|
 * fetch_add|cmp_swap runs one.  Figures: operations a second from the
 * first post to the last completion, and ns an operation.  On mwpath the
 * datapath runs in the program's own ibv_poll_cq (with `progress = calls`,
 * everything does: bench/instr_count.sh counts the instructions of one
 * operation there, post to completion, from the function run_op).
 * --quick: -n 3000 at 64 bytes (a smoke test, not a figure).  Exits 0 if
 * every operation completed successfully and the data arrived, else 1.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "bench_json.h"
#include "bench_util.h"
#include "bench_verbs.h"

#define MAX_SIZE	4096
#define MAX_DEPTH	1024
#define MAX_SWEEP	8
#define REGION		(MAX_DEPTH * MAX_SIZE)

enum op { OP_WRITE, OP_SEND, OP_READ, OP_FETCH_ADD, OP_CMP_SWAP, OP__MAX };

static const char *const op_name[OP__MAX] = {
	"write", "send", "read", "fetch_add", "cmp_swap",
};
static const char *const op_label[OP__MAX] = {
	"WRITE", "SEND", "READ", "FETCH_ADD", "CMP_SWAP",
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qa, *qb;		/* qa posts, qb answers */
static struct ibv_mr *mra, *mrb;
static uint8_t *bufa, *bufb;
static int gid_index;
static unsigned int depth = 128, cq_mod = 32;
static const uint8_t port = 1;

static double
now_s(void)
{
	return now_ns() / 1e9;	/* bench_util.h */
}

static void
die(const char *what, int err)
{
	fprintf(stderr, "loop_verbs_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static void
connect_qp(struct ibv_qp *qp, uint32_t peer, const union ibv_gid *gid, enum ibv_mtu mtu)
{
	const char *step;
	const int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	int ret = bench_connect_rc(qp, port, peer, gid, gid_index, mtu, access, &step);

	if (ret != 0)
		die(step, ret);
}

static void
post_recv(unsigned int slot, uint32_t size)
{
	struct ibv_sge sge = { .addr = (uintptr_t)bufb + (uint64_t)slot * MAX_SIZE,
			       .length = size, .lkey = mrb->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(qb, &wr, &bad);

	if (ret != 0)
		die("ibv_post_recv", ret);
}

/* Poll cq for up to n completions, each of which must have succeeded;
 * SEND's receives are posted again.  Their count; *last: the wr_id of the
 * last one. */
static int
reap(struct ibv_cq *cq, int n, uint32_t size, uint64_t *last)
{
	struct ibv_wc wc[64];
	int got = ibv_poll_cq(cq, n < 64 ? n : 64, wc);

	if (got < 0)
		die("ibv_poll_cq", EIO);
	for (int i = 0; i < got; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "loop_verbs_bench: completion %s\n",
				ibv_wc_status_str(wc[i].status));
			exit(1);
		}
		if (cq == rcq)
			post_recv((unsigned int)wc[i].wr_id, size);
		*last = wc[i].wr_id;
	}
	return got;
}

/* iters operations of one kind, kept `depth` in flight; seconds taken.
 * Not inlined: instr_count.sh counts the instructions under it. */
static __attribute__((noinline)) double
run_op(enum op op, uint32_t size, unsigned int iters)
{
	unsigned int posted = 0, done = 0, recvd = 0;
	uint64_t last;
	double t0 = now_s(), limit = t0 + 60;

	while (done < iters || (op == OP_SEND && recvd < iters)) {
		while (posted < iters && posted - done < depth) {
			const unsigned int slot = posted % depth;
			struct ibv_sge sge = {
				.addr = (uintptr_t)bufa + (uint64_t)slot * MAX_SIZE,
				.length = size, .lkey = mra->lkey };
			struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &sge,
						  .num_sge = 1 }, *bad;
			const uint64_t remote = (uintptr_t)bufb + (uint64_t)slot * MAX_SIZE;
			int ret;

			/* one in cq_mod signaled, and the last */
			if ((posted + 1) % cq_mod == 0 || posted + 1 == iters)
				wr.send_flags = IBV_SEND_SIGNALED;
			switch (op) {
			case OP_WRITE:
			case OP_READ:
				wr.opcode = op == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
				wr.wr.rdma.remote_addr = remote;
				wr.wr.rdma.rkey = mrb->rkey;
				break;
			case OP_SEND:
				wr.opcode = IBV_WR_SEND;
				break;
			default:
				wr.opcode = op == OP_FETCH_ADD ? IBV_WR_ATOMIC_FETCH_AND_ADD :
					    IBV_WR_ATOMIC_CMP_AND_SWP;
				wr.wr.atomic.remote_addr = remote;
				wr.wr.atomic.rkey = mrb->rkey;
				wr.wr.atomic.compare_add = 1;
				wr.wr.atomic.swap = 2;
				break;
			}
			ret = ibv_post_send(qa, &wr, &bad);
			if (ret != 0)
				die("ibv_post_send", ret);
			posted++;
		}
		/* a signaled completion stands for every one posted before it
		 * (a send queue completes in order) */
		if (reap(scq, 16, size, &last) > 0)
			done = (unsigned int)last + 1;
		if (op == OP_SEND)
			recvd += (unsigned int)reap(rcq, 64, size, &last);
		if (now_s() > limit) {
			fprintf(stderr, "loop_verbs_bench: %s: %u of %u completed in 60 s\n",
				op_label[op], done, iters);
			exit(1);
		}
	}
	return now_s() - t0;
}

static const char usage[] =
	"usage: %s [-d DEV] [-x GID_INDEX] [-n ITERS] [-t TX_DEPTH] [-c CQ_MOD]\n"
	"          [--sizes S,...] [--op NAME] [--quick] [--json FILE]\n"
	"Two RC QPs of one device connected through the port's own GID: operations\n"
	"a second from ibv_post_send to the completion, polled by this program, for\n"
	"WRITE, SEND and READ at each size (default 64,256,1024,4096) and FETCH_ADD\n"
	"and CMP_SWAP.  -n: operations a figure (200000); -t: in flight (128); -c:\n"
	"one in CQ_MOD signaled (32); --op write|send|read|fetch_add|cmp_swap: that\n"
	"one only; --quick: -n 3000 at 64 B (a smoke test, not a figure); --json\n"
	"FILE: the figures, with the build and the machine, as JSON.\n";

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'x' },
		{ "iters", required_argument, NULL, 'n' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "cq-mod", required_argument, NULL, 'c' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "op", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'J' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t sizes[MAX_SWEEP] = { 64, 256, 1024, 4096 };
	unsigned int nsizes = 4, iters = 200000;
	const char *dev_name = NULL, *json_path = NULL;
	json_t *doc = bench_json_new("loop_verbs_bench", argc, argv);
	bool quick = false, sizes_given = false;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC };
	const char *what;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	int only = -1, c, err;

	while ((c = getopt_long(argc, argv, "d:x:n:t:c:h", lo, NULL)) != -1) {
		char *end = NULL;
		long v = 0;

		if (c == 'x' || c == 'n' || c == 't' || c == 'c') {
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < (c == 'x' ? 0 : 1)) {
				fprintf(stderr, "loop_verbs_bench: -%c %s: not a number in range\n",
					c, optarg);
				return 2;
			}
		}
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'x': gid_index = (int)v; break;
		case 'n': iters = (unsigned int)v; break;
		case 't': depth = (unsigned int)v; break;
		case 'c': cq_mod = (unsigned int)v; break;
		case 'S':
			nsizes = bench_parse_list(optarg, sizes, MAX_SWEEP, 1, MAX_SIZE);
			sizes_given = true;
			if (nsizes == 0) {
				fprintf(stderr, "loop_verbs_bench: --sizes: up to %d numbers, "
					"1 to %d\n", MAX_SWEEP, MAX_SIZE);
				return 2;
			}
			break;
		case 'o':
			for (int i = 0; i < OP__MAX; i++)
				if (strcmp(optarg, op_name[i]) == 0)
					only = i;
			if (only < 0) {
				fprintf(stderr, "loop_verbs_bench: --op %s: one of write, send, "
					"read, fetch_add, cmp_swap\n", optarg);
				return 2;
			}
			break;
		case 'J': json_path = optarg; break;
		case 'q': quick = true; break;
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
	if (depth > MAX_DEPTH || cq_mod > depth) {
		fprintf(stderr, "loop_verbs_bench: -t at most %d, -c at most -t\n", MAX_DEPTH);
		return 2;
	}
	if (quick) {
		iters = 3000;
		if (!sizes_given)
			nsizes = 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = bench_open_device(dev_name, port, gid_index, &pa, &gid, &what, &err);
	if (ctx == NULL)
		die(what, err);
	pd = ibv_alloc_pd(ctx);
	bufa = aligned_alloc(4096, REGION);
	bufb = aligned_alloc(4096, REGION);
	if (pd == NULL || bufa == NULL || bufb == NULL)
		die("alloc", ENOMEM);
	memset(bufa, 0xa5, REGION);
	memset(bufb, 0, REGION);
	mra = ibv_reg_mr(pd, bufa, REGION, IBV_ACCESS_LOCAL_WRITE);
	mrb = ibv_reg_mr(pd, bufb, REGION, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	scq = ibv_create_cq(ctx, (int)depth * 2, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, (int)depth * 2, NULL, NULL, 0);
	if (mra == NULL || mrb == NULL || scq == NULL || rcq == NULL)
		die("ibv_reg_mr / ibv_create_cq", errno);
	ia.send_cq = scq;
	ia.recv_cq = scq;
	ia.cap = (struct ibv_qp_cap){ .max_send_wr = depth, .max_recv_wr = 1,
				      .max_send_sge = 1, .max_recv_sge = 1 };
	qa = ibv_create_qp(pd, &ia);
	ia.send_cq = rcq;
	ia.recv_cq = rcq;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = depth;
	qb = ibv_create_qp(pd, &ia);
	if (qa == NULL || qb == NULL)
		die("ibv_create_qp", errno);
	connect_qp(qa, qb->qp_num, &gid, pa.active_mtu);
	connect_qp(qb, qa->qp_num, &gid, pa.active_mtu);

	printf("# loop_verbs_bench: %s, two RC QPs through the port's own GID, %u in flight, "
	       "one in %u signaled, %u operations a figure\n",
	       ibv_get_device_name(ctx->device), depth, cq_mod, iters);
	printf("%-16s %12s %10s\n", "operation", "M ops/s", "ns/op");
	for (int op = 0; op < OP__MAX; op++) {
		const bool atomic = op == OP_FETCH_ADD || op == OP_CMP_SWAP;

		if (only >= 0 && op != only)
			continue;
		for (unsigned int z = 0; z < (atomic ? 1 : nsizes); z++) {
			const uint32_t size = atomic ? 8 : sizes[z];
			char name[48], label[32];
			json_t *res;
			double s;

			if (op == OP_SEND)
				for (unsigned int i = 0; i < depth; i++)
					post_recv(i, size);
			s = run_op((enum op)op, size, iters);
			if (op == OP_SEND) {
				/* take qb's receives back: RESET, then INIT..RTS */
				struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

				if (ibv_modify_qp(qb, &a, IBV_QP_STATE) != 0 ||
				    ibv_modify_qp(qa, &a, IBV_QP_STATE) != 0)
					die("modify to RESET", EINVAL);
				connect_qp(qa, qb->qp_num, &gid, pa.active_mtu);
				connect_qp(qb, qa->qp_num, &gid, pa.active_mtu);
			}
			if (op == OP_WRITE && memcmp(bufb, bufa, size) != 0) {
				fprintf(stderr, "loop_verbs_bench: WRITE: the data did not arrive\n");
				return 1;
			}
			if (atomic) {
				snprintf(label, sizeof(label), "%s", op_label[op]);
				snprintf(name, sizeof(name), "loop_%s", op_name[op]);
			} else {
				snprintf(label, sizeof(label), "%u B %s", size, op_label[op]);
				snprintf(name, sizeof(name), "loop_%s_%uB", op_name[op], size);
			}
			printf("%-16s %12.3f %10.1f\n", label, iters / s / 1e6, s * 1e9 / iters);
			res = bench_json_result(doc, name);
			bench_json_str(res, "series", op_name[op]);
			bench_json_str(res, "what", label);
			bench_json_int(res, "payload", size);
			bench_json_num(res, "mpps", iters / s / 1e6);
			bench_json_num(res, "ns_per_op", s * 1e9 / iters);
		}
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(mra);
	ibv_dereg_mr(mrb);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return bench_json_write(doc, json_path) == 0 ? 0 : 1;
}
