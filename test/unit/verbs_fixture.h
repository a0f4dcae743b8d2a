/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_VERBS_FIXTURE_H
#define MWP_TEST_VERBS_FIXTURE_H

/* A device with one PD (and a second one for mismatch cases), a 64 KiB
 * region with every right, a CQ, and two RC QPs in RTS. */

#include <arpa/inet.h>
#include <rte_rcu_qsbr.h>

#include "mwpath.h"
#include "mwp_priv.h"
#include "test_eal.h"	/* defines FIX_ASSERT */

#define BUF_LEN 65536
#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		    IBV_ACCESS_MW_BIND)
#define REMOTE_ALL (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static struct ibv_mr *mr, *mr2;
static struct ibv_cq *cq;
static struct ibv_qp *qp, *qp_b;
static uint8_t *buf, *buf2;
/* What the helpers below call to make the device progress: mwp_poll, or
 * a test's own (wire_fixture.h runs an engine). */
static int (*fixture_poll)(void);

static inline void
fixture_progress(void)
{
	if (fixture_poll != NULL)
		fixture_poll();
	else
		mwp_poll(ctx);
}

/* The Q_Key of the fixture's UD QPs. */
#define FIXTURE_QKEY	0x11111111u

/* Take a QP from RESET to RTS with the attributes verbs requires. */
static inline void
qp_to_rts(struct ibv_qp *q)
{
	enum ibv_qp_type type = q->qp_type;
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (type == IBV_QPT_UD) {
		/* a Q_Key and no peer */
		a.qkey = FIXTURE_QKEY;
		FIX_ASSERT(0 == mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					   IBV_QP_PORT | IBV_QP_QKEY));
		a.qp_state = IBV_QPS_RTR;
		FIX_ASSERT(0 == mwp_modify_qp(q, &a, IBV_QP_STATE));
		a.qp_state = IBV_QPS_RTS;
		FIX_ASSERT(0 == mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
		return;
	}
	a.qp_access_flags = type == IBV_QPT_RC ? REMOTE_ALL | IBV_ACCESS_LOCAL_WRITE :
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	FIX_ASSERT(0 == mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	inet_pton(AF_INET6, "::ffff:192.0.2.2", a.ah_attr.grh.dgid.raw);
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x99;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	FIX_ASSERT(0 == mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		(type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	FIX_ASSERT(0 == mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
		(type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0)));
}

/* Create a QP from init attributes and, optionally, take it to RTS. */
static inline struct ibv_qp *
make_qp_ia(struct ibv_pd *p, struct ibv_qp_init_attr *ia, bool to_rts)
{
	struct ibv_qp *q = mwp_create_qp(p, ia);

	FIX_ASSERT(q != NULL);
	if (to_rts)
		qp_to_rts(q);
	return q;
}

static inline struct ibv_qp *
make_qp(struct ibv_pd *p, enum ibv_qp_type type, uint32_t depth, bool to_rts)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = depth, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	return make_qp_ia(p, &ia, to_rts);
}

/* The fixture device's flags: keys and QPNs in sequence, as the frames
 * the tests build name them; a test of random keys clears it first. */
static uint32_t fixture_device_flags = MWP_DEVICE_F_SEQUENTIAL;

static inline void
verbs_setup(void)
{
	test_eal_init();
	ctx = mwp_open_device(&(struct mwp_device_attr){ .flags = fixture_device_flags });
	FIX_ASSERT(ctx != NULL);
	pd = mwp_alloc_pd(ctx);
	pd2 = mwp_alloc_pd(ctx);
	buf = aligned_alloc(64, BUF_LEN);
	buf2 = aligned_alloc(64, BUF_LEN);
	mr = mwp_reg_mr(pd, buf, BUF_LEN, ALL_ACCESS);
	mr2 = mwp_reg_mr(pd2, buf2, BUF_LEN, ALL_ACCESS);
	cq = mwp_create_cq(ctx, 256);
	FIX_ASSERT(pd && pd2 && mr && mr2 && cq);
	qp = make_qp(pd, IBV_QPT_RC, 64, true);
	qp_b = make_qp(pd, IBV_QPT_RC, 64, true);
}

static inline void
verbs_teardown(void)
{
	mwp_close_device(ctx);
	free(buf);
	free(buf2);
}

/* Poll the device until the CQ yields one completion (or give up). */
#ifndef MWP_NO_CRITERION
static inline bool
next_wc(struct ibv_wc *wc)
{
	for (int i = 0; i < 1000; i++) {
		fixture_progress();
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return true;
	}
	return false;
}

static inline void
expect_wc(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	cr_assert(next_wc(&wc), "no completion for wr_id %lu", (unsigned long)wr_id);
	cr_expect_eq(wc.wr_id, wr_id, "wr_id %lu, want %lu",
		     (unsigned long)wc.wr_id, (unsigned long)wr_id);
	cr_expect_eq(wc.status, st, "wr_id %lu: status %s, want %s",
		     (unsigned long)wr_id, ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(st));
	if (st == IBV_WC_SUCCESS)
		cr_expect_eq(wc.opcode, op, "opcode %d want %d", wc.opcode, op);
}

static inline void
expect_no_wc(void)
{
	struct ibv_wc wc;

	for (int i = 0; i < 10; i++)
		fixture_progress();
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "unexpected completion wr_id %lu status %s",
		     (unsigned long)wc.wr_id, ibv_wc_status_str(wc.status));
}

#endif /* !MWP_NO_CRITERION */

/* Post a Type 2 bind, and keep the new key in mw->rkey as a consumer
 * does (ibv_post_send leaves it alone; this consumer assumes success and
 * tests that expect a failure say so). */
static inline int
post_bind2(struct ibv_qp *q, struct ibv_mw *mw, struct ibv_mr *m, uint64_t addr,
	   uint64_t len, unsigned int access, uint8_t key, uint64_t wr_id)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	int ret;

	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = (mw->rkey & ~0xffu) | key;
	wr.bind_mw.bind_info.mr = m;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	ret = ibv_post_send(q, &wr, &bad);
	if (ret == 0)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

static inline int
post_local_inv(struct ibv_qp *q, uint32_t rkey, uint64_t wr_id, bool signaled)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;

	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	wr.invalidate_rkey = rkey;
	return ibv_post_send(q, &wr, &bad);
}

/* Post a Type 1 bind through ibv_bind_mw. */
static inline int
bind1(struct ibv_qp *q, struct ibv_mw *mw, struct ibv_mr *m, uint64_t addr,
      uint64_t len, unsigned int access, uint64_t wr_id)
{
	struct ibv_mw_bind b = {
		.wr_id = wr_id, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = m, .addr = addr, .length = len,
			       .mw_access_flags = access },
	};

	return ibv_bind_mw(q, mw, &b);
}

static inline const struct mwp_binding *
resolve(uint32_t rkey)
{
	return mwp_keys_lookup(mwp_device_keys(ctx), rkey);
}

#endif
