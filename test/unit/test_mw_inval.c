/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-windows.md section 4, the local side: LOCAL_INV.
 */
#include "verbs_fixture.h"

TestSuite(inval, .init = verbs_setup, .fini = verbs_teardown);

static struct ibv_mw *
bound2(struct ibv_qp *q)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_bind2(q, w, mr, (uintptr_t)buf, 256,
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 0x33, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_assert_not_null(resolve(w->rkey));
	return w;
}

Test(inval, local_inv_frees_the_window_kills_the_key_and_allows_a_rebind)
{
	struct ibv_mw *w = bound2(qp);
	uint32_t key = w->rkey;

	cr_assert_eq(post_local_inv(qp, key, 2, true), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	cr_expect_null(resolve(key));
	cr_expect_eq(to_mmw(w)->state, MWP_MW_FREE);
	cr_expect_eq(to_mmr(mr)->bound_mws, 0);
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 0x34, 3), 0);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(inval, local_inv_with_a_wrong_key_byte_is_loc_qp_op_err)
{
	struct ibv_mw *w = bound2(qp);

	cr_assert_eq(post_local_inv(qp, w->rkey ^ 1, 2, true), 0);
	expect_wc(2, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
	cr_expect_not_null(resolve(w->rkey), "nothing invalidated");
}

Test(inval, local_inv_with_an_unknown_rkey_is_loc_qp_op_err)
{
	cr_assert_eq(post_local_inv(qp, 0x7fffff01, 2, true), 0);
	expect_wc(2, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
}

Test(inval, local_inv_on_a_type1_window_is_an_error_o10_37_2_26)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_assert_eq(post_local_inv(qp, w->rkey, 2, true), 0);
	expect_wc(2, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	cr_expect_not_null(resolve(w->rkey));
}

Test(inval, local_inv_of_a_window_bound_to_another_qp_is_mw_bind_err_and_invalidates_nothing)
{
	struct ibv_mw *w = bound2(qp_b);

	/* rxe invalidates it */
	cr_assert_eq(post_local_inv(qp, w->rkey, 2, true), 0);
	expect_wc(2, IBV_WC_MW_BIND_ERR, IBV_WC_LOCAL_INV);
	cr_expect_not_null(resolve(w->rkey));
	cr_expect_eq(to_mmw(w)->state, MWP_MW_VALID);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
}

Test(inval, local_inv_of_a_free_window_is_an_error_never_a_crash)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	/* rxe dereferences NULL here */
	cr_assert_eq(post_local_inv(qp, w->rkey, 2, true), 0);
	expect_wc(2, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
}

Test(inval, a_region_cannot_be_invalidated_even_with_bound_windows)
{
	struct ibv_mw *w = bound2(qp);

	cr_assert_eq(post_local_inv(qp, mr->rkey, 2, true), 0);
	expect_wc(2, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	cr_expect_not_null(resolve(mr->rkey));
	cr_expect_not_null(resolve(w->rkey));
}

Test(inval, local_inv_completion_waits_for_a_grace_period_c10_68)
{
	struct ibv_mw *w = bound2(qp);
	uint32_t key = w->rkey;
	struct ibv_wc wc;

	/* a reader that has not reported a quiescent state may still hold
	 * the old descriptor: no completion until it does */
	cr_assert_eq(mwp_reader_register(ctx, 3), 0);
	cr_assert_eq(post_local_inv(qp, key, 2, true), 0);
	for (int i = 0; i < 20; i++)
		mwp_poll(ctx);
	cr_expect_null(resolve(key), "the key is gone from the table at once");
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "completion before the grace period");
	mwp_reader_quiescent(ctx, 3);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	cr_assert_eq(mwp_reader_unregister(ctx, 3), 0);
}

Test(inval, invalidations_in_a_row_share_a_grace_period_and_complete_in_order)
{
	struct ibv_mw *w[3];
	struct ibv_wc wc;

	for (int i = 0; i < 3; i++)
		w[i] = bound2(qp);
	/* the second and third do not wait for the first's grace period
	 * (its work is done); their completions still wait for theirs and
	 * leave in posting order */
	cr_assert_eq(mwp_reader_register(ctx, 3), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(post_local_inv(qp, w[i]->rkey, 10 + (uint64_t)i, true), 0);
	for (int i = 0; i < 20; i++)
		mwp_poll(ctx);
	for (int i = 0; i < 3; i++)
		cr_expect_null(resolve(w[i]->rkey), "key %d still in the table", i);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "completion before the grace period");
	mwp_reader_quiescent(ctx, 3);
	for (int i = 0; i < 3; i++)
		expect_wc(10 + (uint64_t)i, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	cr_assert_eq(mwp_reader_unregister(ctx, 3), 0);
}

Test(inval, rebind_and_zero_length_bind_completions_wait_for_a_grace_period)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_wc wc;

	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_assert_eq(mwp_reader_register(ctx, 0), 0);
	/* a first bind revokes nothing: no grace needed */
	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 32, IBV_ACCESS_REMOTE_READ, 2), 0);
	for (int i = 0; i < 20; i++)
		mwp_poll(ctx);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "rebind completed before grace");
	mwp_reader_quiescent(ctx, 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_assert_eq(bind1(qp, w, NULL, 0, 0, 0, 3), 0);
	for (int i = 0; i < 20; i++)
		mwp_poll(ctx);
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "unbind completed before grace");
	mwp_reader_quiescent(ctx, 0);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mwp_reader_unregister(ctx, 0);
}

Test(inval, a_reader_id_registers_once)
{
	cr_assert_eq(mwp_reader_register(ctx, 2), 0);
	cr_expect_eq(mwp_reader_register(ctx, 2), EINVAL);
	cr_expect_eq(mwp_close_device(ctx), EBUSY, "a reader is registered");
	cr_assert_eq(mwp_reader_unregister(ctx, 2), 0);
	cr_expect_eq(mwp_reader_unregister(ctx, 2), EINVAL);
}
