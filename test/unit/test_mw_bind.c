/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-windows.md section 2: binds, checked at post time (the call's
 * return value, nothing posted) and at execution (MW_BIND_ERR, QP -> ERR,
 * later WQEs flushed).
 */
#include "verbs_fixture.h"

TestSuite(bind, .init = verbs_setup, .fini = verbs_teardown);

static uint64_t A;	/* the region's first address */

static void
fail_bind2(struct ibv_mw *w, struct ibv_mr *m, uint64_t addr, uint64_t len,
	   unsigned int access)
{
	cr_assert_eq(post_bind2(qp, w, m, addr, len, access, 9, 77), 0);
	expect_wc(77, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
}

/* ---- post time ---- */

Test(bind, ibv_bind_mw_on_a_type2_window_is_einval)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	A = (uintptr_t)buf;
	cr_expect_eq(bind1(qp, w, mr, A, 64, IBV_ACCESS_REMOTE_READ, 1), EINVAL);
	expect_no_wc();
}

Test(bind, type1_with_zero_based_is_einval)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t key = w->rkey;

	cr_expect_eq(bind1(qp, w, mr, (uintptr_t)buf, 64,
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED, 1), EINVAL);
	cr_expect_eq(w->rkey, key, "nothing posted, key unchanged");
	expect_no_wc();
}

Test(bind, no_mr_but_an_address_or_length_is_einval)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	cr_expect_eq(bind1(qp, w, NULL, (uintptr_t)buf, 0, 0, 1), EINVAL);
	cr_expect_eq(bind1(qp, w, NULL, 0, 64, 0, 1), EINVAL);
	expect_no_wc();
}

Test(bind, mr_in_another_pd_than_the_window_is_eperm)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	cr_expect_eq(bind1(qp, w, mr2, (uintptr_t)buf2, 64, IBV_ACCESS_REMOTE_READ, 1), EPERM);
	expect_no_wc();
}

Test(bind, posting_on_a_qp_in_reset_init_or_rtr_is_einval)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp *q = make_qp(pd, IBV_QPT_RC, 8, false);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	cr_expect_eq(post_bind2(q, w, mr, (uintptr_t)buf, 64, 0, 1, 1), EINVAL);
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	cr_expect_eq(post_bind2(q, w, mr, (uintptr_t)buf, 64, 0, 1, 1), EINVAL);
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	a.path_mtu = IBV_MTU_1024;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		IBV_QP_MIN_RNR_TIMER), 0);
	cr_expect_eq(post_bind2(q, w, mr, (uintptr_t)buf, 64, 0, 1, 1), EINVAL);
	expect_no_wc();
}

Test(bind, posting_on_a_qp_in_err_completes_with_wr_flush_err)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	cr_assert_eq(mwp_modify_qp(qp, &a, IBV_QP_STATE), 0);
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, 0, 1, 5), 0);
	expect_wc(5, IBV_WC_WR_FLUSH_ERR, IBV_WC_BIND_MW);
	cr_expect_null(resolve(w->rkey));
}

Test(bind, a_bind_wr_with_sges_or_immediate_data_is_einval)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW, .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr *bad = NULL;

	wr.bind_mw.mw = w;
	wr.bind_mw.rkey = w->rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf;
	wr.bind_mw.bind_info.length = 64;
	cr_expect_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	cr_expect_eq(bad, &wr);
	wr.num_sge = 0;
	wr.imm_data = htonl(1);
	cr_expect_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	expect_no_wc();
}

Test(bind, a_full_send_ring_is_enomem_and_nothing_is_lost)
{
	struct ibv_qp *q = make_qp(pd, IBV_QPT_RC, 4, true);
	struct ibv_mw *w[5];
	struct ibv_send_wr *bad = NULL;

	for (int i = 0; i < 5; i++)
		w[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(post_bind2(q, w[i], mr, (uintptr_t)buf, 64, 0, 1, 10 + i), 0);
	cr_expect_eq(post_bind2(q, w[4], mr, (uintptr_t)buf, 64, 0, 1, 14), ENOMEM);
	RTE_SET_USED(bad);
	for (int i = 0; i < 4; i++)
		expect_wc(10 + i, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	/* the slots are free again once completed */
	cr_expect_eq(post_bind2(q, w[4], mr, (uintptr_t)buf, 64, 0, 1, 14), 0);
	expect_wc(14, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(bind, a_type1_window_posted_as_ibv_wr_bind_mw_is_rejected)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	/* o10-37.2.34 (rxe accepts it) */
	cr_expect_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, 0, 1, 1), EINVAL);
	expect_no_wc();
}

Test(bind, uc_qps_may_bind)
{
	struct ibv_qp *q = make_qp(pd, IBV_QPT_UC, 8, true);
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(q, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_WRITE, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(bind, ud_qps_cannot_bind)
{
	struct ibv_qp *q = make_qp(pd, IBV_QPT_UD, 8, true);
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	/* binds are RC, UC and XRC work (IBA 10.6.3.2) */
	cr_assert_not_null(q);
	cr_expect_eq(post_bind2(q, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_WRITE, 1, 1),
		     EINVAL);
	expect_no_wc();
}

Test(bind, qps_of_other_types_cannot_be_created)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 4 } };

	errno = 0;
	cr_expect_null(mwp_create_qp(pd, &ia));
	cr_expect_eq(errno, EINVAL);
	ia.qp_type = IBV_QPT_XRC_SEND;
	errno = 0;
	cr_expect_null(mwp_create_qp(pd, &ia));
	cr_expect_eq(errno, EINVAL);
}

/* ---- execution ---- */

Test(bind, mr_without_mw_bind_fails_c10_73)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_READ);

	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), m, (uintptr_t)buf, 64,
		   IBV_ACCESS_REMOTE_READ);
}

Test(bind, remote_write_on_a_region_without_local_write_fails_c10_74)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_MW_BIND);

	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), m, (uintptr_t)buf, 64,
		   IBV_ACCESS_REMOTE_WRITE);
}

Test(bind, remote_atomic_on_a_region_without_local_write_fails_c10_74)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_MW_BIND);

	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), m, (uintptr_t)buf, 64,
		   IBV_ACCESS_REMOTE_ATOMIC);
}

Test(bind, remote_read_alone_needs_only_mw_bind)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf, 4096, IBV_ACCESS_MW_BIND);
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(qp, w, m, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(bind, access_zero_is_legal_and_grants_nothing)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	const struct mwp_binding *b;

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, 0, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	b = resolve(w->rkey);
	cr_assert_not_null(b);
	cr_expect_eq(b->access, 0);
}

Test(bind, local_write_in_window_flags_is_ignored)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(resolve(w->rkey)->access, IBV_ACCESS_REMOTE_READ);
}

Test(bind, window_exactly_the_region_succeeds)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, BUF_LEN,
				IBV_ACCESS_REMOTE_READ, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(bind, window_one_byte_past_the_region_end_fails)
{
	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), mr, (uintptr_t)buf + 1, BUF_LEN,
		   IBV_ACCESS_REMOTE_READ);
}

Test(bind, window_one_byte_before_the_region_start_fails)
{
	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), mr, (uintptr_t)buf - 1, 16,
		   IBV_ACCESS_REMOTE_READ);
}

Test(bind, window_ending_on_the_last_byte_succeeds)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf + BUF_LEN - 1, 1,
				IBV_ACCESS_REMOTE_READ, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(bind, address_plus_length_wrapping_past_2_64_fails)
{
	/* rxe gets the wrap wrong: addr + len overflows to a small number */
	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), mr, (uintptr_t)buf + 16,
		   UINT64_MAX - 8, IBV_ACCESS_REMOTE_READ);
}

Test(bind, zero_based_window_start_outside_the_region_fails)
{
	/* rxe checks only the length */
	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), mr, (uintptr_t)buf + BUF_LEN, 16,
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED);
}

Test(bind, zero_based_window_inside_the_region_succeeds)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	const struct mwp_binding *b;

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf + 4096, 256,
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	b = resolve(w->rkey);
	cr_assert_not_null(b);
	cr_expect(b->zero_based);
	cr_expect_eq(b->va, 0);
	cr_expect_eq(b->host, buf + 4096);
}

Test(bind, binding_a_valid_type2_window_again_fails_o10_37_2_30)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t first;

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	first = w->rkey;
	fail_bind2(w, mr, (uintptr_t)buf, 32, IBV_ACCESS_REMOTE_READ);
	cr_expect_not_null(resolve(first), "the first binding stays");
}

Test(bind, type2_length_zero_fails_o10_37_2_40)
{
	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), mr, (uintptr_t)buf, 0,
		   IBV_ACCESS_REMOTE_READ);
}

Test(bind, type2_window_pd_differs_from_region_and_qp_c10_72)
{
	/* window in pd2, region and QP in pd */
	fail_bind2(ibv_alloc_mw(pd2, IBV_MW_TYPE_2), mr, (uintptr_t)buf, 64,
		   IBV_ACCESS_REMOTE_READ);
}

Test(bind, type2_region_pd_differs_from_window_and_qp_c10_72)
{
	fail_bind2(ibv_alloc_mw(pd, IBV_MW_TYPE_2), mr2, (uintptr_t)buf2, 64,
		   IBV_ACCESS_REMOTE_READ);
}

Test(bind, type2_qp_pd_differs_from_window_and_region_c10_72)
{
	struct ibv_qp *q2 = make_qp(pd2, IBV_QPT_RC, 8, true);
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(q2, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, 7), 0);
	expect_wc(7, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	cr_expect_eq(q2->state, IBV_QPS_ERR);
}

Test(bind, type1_window_and_region_pd_differ_from_the_qp)
{
	struct ibv_mw *w = ibv_alloc_mw(pd2, IBV_MW_TYPE_1);

	cr_assert_eq(bind1(qp, w, mr2, (uintptr_t)buf2, 64, IBV_ACCESS_REMOTE_READ, 7), 0);
	expect_wc(7, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
}

Test(bind, type1_length_zero_unbinds_and_the_old_key_stops_working)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t bound;

	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	bound = w->rkey;
	cr_expect_eq(to_mmr(mr)->bound_mws, 1);
	cr_assert_eq(bind1(qp, w, NULL, 0, 0, 0, 2), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_null(resolve(bound));
	cr_expect_null(resolve(w->rkey));
	cr_expect_eq(to_mmr(mr)->bound_mws, 0);
}

Test(bind, type1_rebind_kills_the_old_key_and_publishes_the_new)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t k1;

	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	k1 = w->rkey;
	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf + 64, 64, IBV_ACCESS_REMOTE_WRITE, 2), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_null(resolve(k1));
	cr_expect_not_null(resolve(w->rkey));
	cr_expect_eq(resolve(w->rkey)->host, buf + 64);
	cr_expect_eq(to_mmr(mr)->bound_mws, 1);
}

/* A sequential device (the fixture's) keeps the key bytes of Type 1
 * rebinds counting up from alloc's, wrapping past 0xff. */
Test(bind, type1_rebinds_on_a_sequential_device_count_up)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	const uint32_t first = w->rkey;
	uint32_t off = 0;

	for (uint32_t i = 1; i <= 600; i++) {
		cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, i), 0);
		expect_wc(i, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		off += w->rkey != (first & ~0xffu) + (uint8_t)(first + i);
	}
	cr_expect_eq(off, 0, "%u rebinds off the count", off);
	cr_expect_not_null(resolve(w->rkey));
}

Test(bind, a_stale_type1_window_key_fails)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	w->rkey ^= 0x5a;	/* the consumer holds a key the device does not */
	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 77), 0);
	expect_wc(77, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
}

/* Type 2: mw->rkey is the consumer's, as with rdma-core's providers:
 * posting and completing a bind leave it alone; the new key is the one
 * the WR named. */
Test(bind, a_type2_bind_leaves_mw_rkey_to_the_consumer)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	const uint32_t old = w->rkey, key = (old & ~0xffu) | 0x3c;
	struct ibv_send_wr wr = { .wr_id = 5, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	wr.bind_mw.mw = w;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf;
	wr.bind_mw.bind_info.length = 64;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
	cr_expect_eq(w->rkey, old, "posting changed mw->rkey");
	expect_wc(5, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(w->rkey, old, "the completion changed mw->rkey");
	cr_expect_not_null(resolve(key));
	cr_expect_null(resolve(old));
}

/* A stale mw->rkey (the consumer never updated it) does not matter: a
 * FREE Type 2 window binds under the index and the key byte asked. */
Test(bind, a_type2_bind_with_a_stale_mw_rkey_binds_a_free_window)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	w->rkey ^= 0x5a;
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 9, 7), 0);
	expect_wc(7, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_not_null(resolve((w->rkey & ~0xffu) | 9));
}

/* A bind that is flushed never ran: the window is still FREE and binds
 * again, whatever the consumer did with mw->rkey meanwhile. */
Test(bind, a_flushed_type2_bind_leaves_the_window_bindable)
{
	struct ibv_mw *bad_w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	const uint32_t old = w->rkey;

	/* a bind past the region fails; the one after it is flushed */
	cr_assert_eq(post_bind2(qp, bad_w, mr, (uintptr_t)buf, BUF_LEN + 1,
				IBV_ACCESS_REMOTE_READ, 1, 1), 0);
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 2, 2), 0);
	expect_wc(1, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	expect_wc(2, IBV_WC_WR_FLUSH_ERR, IBV_WC_BIND_MW);
	cr_expect_null(resolve((old & ~0xffu) | 2));
	/* the same QP, back to RTS; the same window, the same key */
	cr_assert_eq(mwp_modify_qp(qp, &a, IBV_QP_STATE), 0);
	qp_to_rts(qp);
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 2, 3), 0);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_not_null(resolve((old & ~0xffu) | 2));
}

Test(bind, a_region_deregistered_before_the_bind_runs_fails)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf, 4096, ALL_ACCESS);
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mr copy = *m;

	cr_assert_eq(mwp_dereg_mr(m), 0);
	fail_bind2(w, &copy, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ);
}

Test(bind, a_failing_bind_in_a_list_flushes_what_follows)
{
	struct ibv_mw *w[4];
	struct ibv_send_wr wr[4], *bad = NULL;

	for (int i = 0; i < 4; i++) {
		w[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 100 + i;
		wr[i].opcode = IBV_WR_BIND_MW;
		wr[i].bind_mw.mw = w[i];
		wr[i].bind_mw.rkey = w[i]->rkey | 1;
		wr[i].bind_mw.bind_info.mr = mr;
		wr[i].bind_mw.bind_info.addr = (uintptr_t)buf;
		wr[i].bind_mw.bind_info.length = i == 1 ? BUF_LEN + 1 : 64;
		wr[i].bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	/* unsignaled: success gives no CQE, failure and flushes always do */
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0);
	expect_wc(101, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	expect_wc(102, IBV_WC_WR_FLUSH_ERR, IBV_WC_BIND_MW);
	expect_wc(103, IBV_WC_WR_FLUSH_ERR, IBV_WC_BIND_MW);
	expect_no_wc();
	cr_expect_eq(qp->state, IBV_QPS_ERR);
	cr_expect_not_null(resolve(wr[0].bind_mw.rkey));
	cr_expect_null(resolve(wr[2].bind_mw.rkey));
}
