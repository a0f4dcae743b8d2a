/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A verbs program that includes only <infiniband/verbs.h> and <mwpath.h>:
 * the inline verbs of libibverbs (ibv_alloc_mw, ibv_bind_mw, ibv_post_send,
 * ibv_poll_cq, ibv_inc_rkey, ibv_dealloc_mw) run unchanged on an mwpath
 * device; only the calls libibverbs does not inline are renamed mwp_*.
 *
 * It binds a Type 1 window with ibv_bind_mw, a Type 2 window with
 * ibv_post_send, reads the completions with ibv_poll_cq, checks that the
 * keys resolve, invalidates both, and checks that they no longer do.
 * Prints "N passed, N failed"; exit status 0 when all steps pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <mwpath.h>

static int passed, failed;

#define STEP(cond, what) do {						\
		if (cond) {						\
			passed++;					\
		} else {						\
			failed++;					\
			fprintf(stderr, "verbs_example: FAILED: %s\n", what); \
		}							\
	} while (0)

/* Poll until one completion arrives. */
static int
wait_one(struct ibv_context *ctx, struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 10000; i++) {
		int n;

		mwp_poll(ctx);
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
	}
	return 0;
}

static int
to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE;
	if (mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid.raw[10] = 0xff;	/* ::ffff:192.0.2.2 */
	a.ah_attr.grh.dgid.raw[11] = 0xff;
	a.ah_attr.grh.dgid.raw[12] = 192;
	a.ah_attr.grh.dgid.raw[15] = 2;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x12;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	if (mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "64",
			"-l", "0", "--log-level=lib.eal:error", NULL };
	struct ibv_qp_init_attr qia;
	struct ibv_send_wr wr, *bad;
	struct ibv_mw_bind bind;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mw *mw1, *mw2;
	struct ibv_wc wc;
	uint32_t k1, k2;
	char *buf;

	(void)argc;
	if (rte_eal_init(9, eal) < 0) {
		fprintf(stderr, "verbs_example: EAL init failed\n");
		return 1;
	}
	ctx = mwp_open_device(NULL);
	pd = ctx ? mwp_alloc_pd(ctx) : NULL;
	buf = calloc(1, 4096);
	mr = pd ? mwp_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_MW_BIND) : NULL;
	cq = ctx ? mwp_create_cq(ctx, 16) : NULL;
	memset(&qia, 0, sizeof(qia));
	qia.send_cq = cq;
	qia.recv_cq = cq;
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = 8;
	qia.cap.max_recv_wr = 8;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	qp = mr && cq ? mwp_create_qp(pd, &qia) : NULL;
	STEP(qp != NULL && to_rts(qp) == 0, "set-up");
	if (qp == NULL)
		return 1;

	/* Type 1: ibv_alloc_mw + ibv_bind_mw */
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	STEP(mw1 != NULL, "ibv_alloc_mw(TYPE_1)");
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf;
	bind.bind_info.length = 1024;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	k1 = mw1->rkey;
	STEP(ibv_bind_mw(qp, mw1, &bind) == 0, "ibv_bind_mw");
	/* the device chooses the new key byte (at random); the index stays */
	STEP(mw1->rkey >> 8 == k1 >> 8 && mw1->rkey != k1,
	     "Type 1 rkey: the same index, a new key byte once posted");
	k1 = mw1->rkey;
	STEP(wait_one(ctx, cq, &wc) == 1 && wc.wr_id == 1 &&
	     wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
	     "Type 1 bind completion");
	STEP(mwp_keys_lookup(mwp_device_keys(ctx), k1) != NULL, "Type 1 key resolves");

	/* Type 2: ibv_alloc_mw + IBV_WR_BIND_MW through ibv_post_send */
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	STEP(mw2 != NULL, "ibv_alloc_mw(TYPE_2)");
	k2 = (mw2->rkey & ~0xffu) | 0x5a;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = k2;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + 1024;
	wr.bind_mw.bind_info.length = 512;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_ZERO_BASED;
	STEP(ibv_post_send(qp, &wr, &bad) == 0, "ibv_post_send(BIND_MW)");
	STEP(wait_one(ctx, cq, &wc) == 1 && wc.wr_id == 2 &&
	     wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
	     "Type 2 bind completion");
	STEP(mwp_keys_lookup(mwp_device_keys(ctx), k2) != NULL, "Type 2 key resolves");

	/* Invalidate: LOCAL_INV for Type 2, zero-length bind for Type 1 */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = k2;
	STEP(ibv_post_send(qp, &wr, &bad) == 0, "ibv_post_send(LOCAL_INV)");
	STEP(wait_one(ctx, cq, &wc) == 1 && wc.wr_id == 3 &&
	     wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV,
	     "LOCAL_INV completion");
	STEP(mwp_keys_lookup(mwp_device_keys(ctx), k2) == NULL, "Type 2 key dead");
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 4;
	bind.send_flags = IBV_SEND_SIGNALED;
	STEP(ibv_bind_mw(qp, mw1, &bind) == 0, "ibv_bind_mw(length 0)");
	STEP(wait_one(ctx, cq, &wc) == 1 && wc.wr_id == 4 &&
	     wc.status == IBV_WC_SUCCESS, "unbind completion");
	STEP(mwp_keys_lookup(mwp_device_keys(ctx), k1) == NULL, "Type 1 key dead");

	STEP(ibv_dealloc_mw(mw1) == 0 && ibv_dealloc_mw(mw2) == 0, "ibv_dealloc_mw");
	STEP(mwp_destroy_qp(qp) == 0 && mwp_destroy_cq(cq) == 0 &&
	     mwp_dereg_mr(mr) == 0 && mwp_dealloc_pd(pd) == 0 &&
	     mwp_close_device(ctx) == 0, "tear-down");
	free(buf);
	rte_eal_cleanup();
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
