/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program that polls its CQ without pause, then arms a CQ and waits for
 * its event (test_verbs_device.py's Device.test_a_program_that_stops_...):
 * while it polls, the device's progress thread stands aside ever longer;
 * arming the CQ must end that wait, for the thread runs the datapath
 * while the program sleeps.  Two RC QPs of one device, through the
 * port's own GID.  Three rounds of 40 ms of WRITEs, each polled to its
 * completion, then a SEND into an armed receive CQ and ibv_get_cq_event.
 * Prints "ok N" (N rounds) on success; the device's MWPATH_STATS line
 * says how many long stand-asides there were and how many the program
 * ended.
 *
 *     aside_check [DEVICE]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../../bench/bench_verbs.h"

#define ROUNDS		3
#define POLL_MS		40
#define SIZE		64

static void
die(const char *what, int err)
{
	fprintf(stderr, "aside_check: %s: %s\n", what, strerror(err));
	exit(1);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Poll cq until one completion; it must be a success. */
static void
poll_one(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	if (n < 0)
		die("ibv_poll_cq", EIO);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "aside_check: %s: %s\n", what, ibv_wc_status_str(wc.status));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	const char *what;
	int err;
	struct ibv_context *ctx = bench_open_device(argc > 1 ? argv[1] : NULL, 1, 0, &pa, &gid,
						     &what, &err);
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq, *ev_cq;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *mra, *mrb;
	struct ibv_pd *pd;
	static char bufa[SIZE], bufb[SIZE];
	void *ev_ctx;

	if (ctx == NULL)
		die(what, err);
	alarm(30);	/* a lost event ends the test, not the suite */
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	if (pd == NULL || ch == NULL || scq == NULL || rcq == NULL)
		die("pd, channel or CQ", errno);
	mra = ibv_reg_mr(pd, bufa, SIZE, IBV_ACCESS_LOCAL_WRITE);
	mrb = ibv_reg_mr(pd, bufb, SIZE, access);
	if (mra == NULL || mrb == NULL)
		die("ibv_reg_mr", errno);
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	if (qa == NULL || qb == NULL)
		die("ibv_create_qp", errno);
	err = bench_connect_rc(qa, 1, qb->qp_num, &gid, 0, IBV_MTU_1024, access, &what);
	if (err == 0)
		err = bench_connect_rc(qb, 1, qa->qp_num, &gid, 0, IBV_MTU_1024, access, &what);
	if (err != 0)
		die(what, err);

	struct ibv_sge sa = { .addr = (uintptr_t)bufa, .length = SIZE, .lkey = mra->lkey };
	struct ibv_sge sb = { .addr = (uintptr_t)bufb, .length = SIZE, .lkey = mrb->lkey };
	struct ibv_send_wr *bad, wr = {
		.sg_list = &sa, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_recv_wr *rbad, rwr = { .wr_id = 7, .sg_list = &sb, .num_sge = 1 };
	struct ibv_wc wc;

	for (int round = 0; round < ROUNDS; round++) {
		/* the program polls, without pause */
		const double end = now_ms() + POLL_MS;

		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)bufb;
		wr.wr.rdma.rkey = mrb->rkey;
		while (now_ms() < end) {
			if ((err = ibv_post_send(qa, &wr, &bad)) != 0)
				die("ibv_post_send (WRITE)", err);
			poll_one(scq, "WRITE");
		}
		/* ... then arms its receive CQ and sleeps until the SEND */
		if ((err = ibv_post_recv(qb, &rwr, &rbad)) != 0)
			die("ibv_post_recv", err);
		if ((err = ibv_req_notify_cq(rcq, 0)) != 0)
			die("ibv_req_notify_cq", err);
		memset(bufa, 'a' + round, SIZE);
		wr.opcode = IBV_WR_SEND;
		if ((err = ibv_post_send(qa, &wr, &bad)) != 0)
			die("ibv_post_send (SEND)", err);
		if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) != 0 || ev_cq != rcq)
			die("ibv_get_cq_event", errno);
		ibv_ack_cq_events(rcq, 1);
		if (ibv_poll_cq(rcq, 1, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != 7 || wc.byte_len != SIZE || bufb[0] != 'a' + round)
			die("the SEND's receive", EIO);
		poll_one(scq, "SEND");
	}
	printf("ok %d\n", ROUNDS);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(mra);
	ibv_dereg_mr(mrb);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(ch);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
