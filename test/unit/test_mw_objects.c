/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-windows.md section 1: objects and keys.
 */
#include "verbs_fixture.h"

TestSuite(objects, .init = verbs_setup, .fini = verbs_teardown);

Test(objects, alloc_mw_of_another_type_is_einval)
{
	errno = 0;
	cr_expect_null(ibv_alloc_mw(pd, (enum ibv_mw_type)3));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(ibv_alloc_mw(pd, (enum ibv_mw_type)0));
	cr_expect_eq(errno, EINVAL);
}

Test(objects, mr_and_mw_indices_never_overlap)
{
	struct ibv_mw *w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert(w1 && w2);
	cr_expect_lt(mr->rkey >> 8, MWP_MW_INDEX_BASE);
	cr_expect_lt(mr2->rkey >> 8, MWP_MW_INDEX_BASE);
	cr_expect_geq(w1->rkey >> 8, MWP_MW_INDEX_BASE);
	cr_expect_geq(w2->rkey >> 8, MWP_MW_INDEX_BASE);
	cr_expect_neq(w1->rkey >> 8, w2->rkey >> 8);
	cr_expect_eq(mr->lkey, mr->rkey);
}

Test(objects, fresh_type1_window_is_usable_by_nobody)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	cr_assert_not_null(w);
	cr_expect_eq(w->type, IBV_MW_TYPE_1);
	cr_expect_null(resolve(w->rkey));
}

Test(objects, fresh_type2_window_is_free)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_not_null(w);
	cr_expect_eq(to_mmw(w)->state, MWP_MW_FREE);
	cr_expect_null(resolve(w->rkey));
	/* FREE: it can be bound */
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 7, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(objects, type1_bind_sets_key_to_inc_rkey_when_posted)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t old = w->rkey;

	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 128, IBV_ACCESS_REMOTE_READ, 1), 0);
	/* written at post time, before the bind runs */
	cr_expect_eq(w->rkey, ibv_inc_rkey(old));
	cr_expect_null(resolve(w->rkey));
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_not_null(resolve(w->rkey));
	cr_expect_null(resolve(old));
	/* each bind increments the key byte again */
	cr_assert_eq(bind1(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 2), 0);
	cr_expect_eq(w->rkey, ibv_inc_rkey(ibv_inc_rkey(old)));
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(objects, type2_new_rkey_is_index_and_any_key_byte_even_the_old_one)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t idx = w->rkey & ~0xffu;
	uint8_t old_byte = w->rkey & 0xff;

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ,
				old_byte, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(w->rkey, idx | old_byte);
	cr_expect_not_null(resolve(idx | old_byte));
	cr_assert_eq(post_local_inv(qp, w->rkey, 2, true), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ,
				0xa7, 3), 0);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(w->rkey, idx | 0xa7);
	cr_expect_not_null(resolve(idx | 0xa7));
}

Test(objects, dealloc_of_a_bound_window_unbinds_it_and_frees_it)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t key;

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	key = w->rkey;
	cr_expect_not_null(resolve(key));
	cr_expect_eq(to_mmr(mr)->bound_mws, 1);
	cr_assert_eq(ibv_dealloc_mw(w), 0);
	cr_expect_null(resolve(key));
	cr_expect_eq(to_mmr(mr)->bound_mws, 0);
}

Test(objects, dealloc_pd_with_objects_is_ebusy)
{
	struct ibv_pd *p = mwp_alloc_pd(ctx);
	struct ibv_mr *m = mwp_reg_mr(p, buf, 64, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mw *w;

	cr_expect_eq(mwp_dealloc_pd(p), EBUSY);
	cr_assert_eq(mwp_dereg_mr(m), 0);
	w = ibv_alloc_mw(p, IBV_MW_TYPE_1);
	cr_expect_eq(mwp_dealloc_pd(p), EBUSY);
	cr_assert_eq(ibv_dealloc_mw(w), 0);
	cr_expect_eq(mwp_dealloc_pd(p), 0);
}

Test(objects, dereg_mr_with_a_bound_window_is_ebusy_and_the_window_keeps_working)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf, 4096, ALL_ACCESS);
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	cr_assert_eq(bind1(qp, w, m, (uintptr_t)buf, 100, IBV_ACCESS_REMOTE_READ, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(mwp_dereg_mr(m), EBUSY);
	cr_expect_not_null(resolve(w->rkey));
	cr_expect_not_null(resolve(m->rkey));
	/* unbind (zero-length Type 1 bind), then it goes */
	cr_assert_eq(bind1(qp, w, NULL, 0, 0, 0, 2), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(mwp_dereg_mr(m), 0);
}

Test(objects, reg_mr_rejects_bad_arguments)
{
	errno = 0;
	cr_expect_null(mwp_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(mwp_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(mwp_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_ATOMIC));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(mwp_reg_mr_iova(pd, buf, 64, UINT64_MAX - 10, IBV_ACCESS_LOCAL_WRITE));
	cr_expect_eq(errno, EINVAL);
}

Test(objects, sequential_keys_are_deterministic)
{
	struct ibv_context *c2 = mwp_open_device(&(struct mwp_device_attr){ .flags = MWP_DEVICE_F_SEQUENTIAL });
	struct ibv_pd *p2 = mwp_alloc_pd(c2);
	struct ibv_mr *m2 = mwp_reg_mr(p2, buf, 64, ALL_ACCESS);
	struct ibv_mr *m3 = mwp_reg_mr(p2, buf, 64, ALL_ACCESS);
	struct ibv_mw *w2 = ibv_alloc_mw(p2, IBV_MW_TYPE_2);

	/* the fixture made two MRs before; a fresh device starts over */
	cr_expect_eq(m2->rkey, mr->rkey);
	cr_expect_eq(m3->rkey, mr2->rkey);
	cr_expect_eq(w2->rkey, MWP_MW_INDEX_BASE << 8, "first window, first generation");
	mwp_close_device(c2);
}

Test(objects, a_reused_slot_gets_a_new_key)
{
	struct ibv_mr *m = mwp_reg_mr(pd, buf, 64, ALL_ACCESS);
	uint32_t k = m->lkey;
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t wk = w->rkey;

	cr_assert_eq(mwp_dereg_mr(m), 0);
	m = mwp_reg_mr(pd, buf, 64, ALL_ACCESS);
	cr_expect_eq(m->lkey >> 8, k >> 8, "same slot");
	cr_expect_neq(m->lkey, k, "new key byte");
	cr_assert_eq(ibv_dealloc_mw(w), 0);
	w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	cr_expect_eq(w->rkey >> 8, wk >> 8);
	cr_expect_neq(w->rkey, wk);
}

/* Every slot in use: the next region or window is ENOMEM and leaves
 * nothing behind (the PD's count of users included); a slot given back
 * is used again, with a new key. */
Test(objects, regions_and_windows_past_the_last_slot_are_enomem_and_leave_nothing)
{
	struct ibv_context *c2 = mwp_open_device(&(struct mwp_device_attr){
		.flags = MWP_DEVICE_F_SEQUENTIAL, .max_keys = 4 });
	struct ibv_pd *p2;
	struct ibv_mr *m[4];
	struct ibv_mw *w[4];
	uint32_t old;

	cr_assert_not_null(c2);
	p2 = mwp_alloc_pd(c2);
	cr_assert_not_null(p2);
	for (int i = 0; i < 4; i++) {
		m[i] = mwp_reg_mr(p2, buf, 64, ALL_ACCESS);
		w[i] = ibv_alloc_mw(p2, IBV_MW_TYPE_2);
		cr_assert(m[i] != NULL && w[i] != NULL, "slot %d", i);
	}
	errno = 0;
	cr_expect_null(mwp_reg_mr(p2, buf, 64, ALL_ACCESS));
	cr_expect_eq(errno, ENOMEM);
	errno = 0;
	cr_expect_null(ibv_alloc_mw(p2, IBV_MW_TYPE_2));
	cr_expect_eq(errno, ENOMEM);
	old = m[2]->lkey;
	cr_assert_eq(mwp_dereg_mr(m[2]), 0);
	m[2] = mwp_reg_mr(p2, buf, 64, ALL_ACCESS);
	cr_assert_not_null(m[2]);
	cr_expect_eq(m[2]->lkey >> 8, old >> 8, "the slot given back");
	cr_expect_neq(m[2]->lkey, old, "a new key byte");
	old = w[1]->rkey;
	cr_assert_eq(ibv_dealloc_mw(w[1]), 0);
	w[1] = ibv_alloc_mw(p2, IBV_MW_TYPE_2);
	cr_assert_not_null(w[1]);
	cr_expect_eq(w[1]->rkey >> 8, old >> 8);
	cr_expect_neq(w[1]->rkey, old);
	for (int i = 0; i < 4; i++) {
		cr_expect_eq(mwp_dealloc_pd(p2), EBUSY, "in use by %d regions", 4 - i);
		cr_assert_eq(mwp_dereg_mr(m[i]), 0);
		cr_assert_eq(ibv_dealloc_mw(w[i]), 0);
	}
	cr_expect_eq(mwp_dealloc_pd(p2), 0, "the refused ones left no user behind");
	mwp_close_device(c2);
}

Test(objects, a_qp_may_be_created_with_a_chosen_number)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4 } };
	struct ibv_qp *q = mwp_create_qp_num(pd, &ia, 0x1234);

	cr_assert_not_null(q);
	cr_expect_eq(q->qp_num, 0x1234);
	errno = 0;
	cr_expect_null(mwp_create_qp_num(pd, &ia, 0x1234));
	cr_expect_eq(errno, EEXIST);
	errno = 0;
	cr_expect_null(mwp_create_qp_num(pd, &ia, 1));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(mwp_create_qp_num(pd, &ia, 0x1000000));
	cr_expect_eq(errno, EINVAL);
}

/* The QPNs the device chooses are 24-bit: after 0xffffff it starts
 * again at the first, skipping those in use. */
Test(objects, automatic_qp_numbers_wrap_inside_24_bits)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4 } };
	struct ibv_qp *q[3];

	to_mdev(ctx)->next_qpn = 0xfffffe;
	for (int i = 0; i < 3; i++) {
		q[i] = mwp_create_qp(pd, &ia);
		cr_assert_not_null(q[i]);
	}
	cr_expect_eq(q[0]->qp_num, 0xfffffe);
	cr_expect_eq(q[1]->qp_num, 0xffffff);
	cr_expect_geq(q[2]->qp_num, MWP_FIRST_QPN);
	cr_expect_lt(q[2]->qp_num, 0xfffffe);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(mwp_destroy_qp(q[i]), 0);
}

/* A pinned R_Key (replays of captured traffic): the peers' key is the
 * caller's, the L_Key stays mwpath's own and still finds the region for
 * receives, but grants peers nothing; a live key cannot be pinned twice;
 * deregistration revokes both. */
Test(objects, pinned_rkey_region)
{
	static uint8_t mem[256];
	const struct mwp_binding *b;
	struct ibv_mr *p;
	uint32_t lkey;

	p = mwp_reg_mr_key(pd, mem, sizeof(mem), 0x5000, ALL_ACCESS, 0x1350d);
	cr_assert_not_null(p);
	cr_expect_eq(p->rkey, 0x1350d);
	cr_expect_neq(p->lkey, p->rkey);
	b = resolve(0x1350d);
	cr_assert_not_null(b);
	cr_expect_eq(b->va, 0x5000);
	cr_expect_eq(b->access, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC);
	b = resolve(p->lkey);
	cr_assert_not_null(b, "receives find the region by its L_Key");
	cr_expect_eq(b->access, 0, "the L_Key grants peers nothing");
	cr_expect_eq(b->local_access, ALL_ACCESS);

	errno = 0;
	cr_expect_null(mwp_reg_mr_key(pd, mem, sizeof(mem), 0, ALL_ACCESS, 0x1350d));
	cr_expect_eq(errno, EEXIST);
	errno = 0;
	cr_expect_null(mwp_reg_mr_key(pd, mem, sizeof(mem), 0, ALL_ACCESS, mr->rkey));
	cr_expect_eq(errno, EEXIST, "another region's key");
	cr_expect_not_null(resolve(mr->rkey), "and that region keeps it");

	lkey = p->lkey;
	cr_assert_eq(mwp_dereg_mr(p), 0);
	cr_expect_null(resolve(0x1350d));
	cr_expect_null(resolve(lkey));
}

/* The query API (mwp_query.h) says what the objects hold. */
Test(objects, the_query_api_describes_regions_windows_and_qps)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct mwp_mr_info mi;
	struct mwp_mw_info wi;
	struct mwp_qp_info qi;

	cr_assert_not_null(w);
	cr_assert_eq(mwp_mr_query_info(mr, &mi), 0);
	cr_expect_eq(mi.iova, (uintptr_t)buf);
	cr_expect_eq(mi.access, ALL_ACCESS);
	cr_expect_eq(mi.bound_mws, 0);
	cr_assert_eq(mwp_mw_query_info(w, &wi), 0);
	cr_expect_not(wi.valid);
	cr_expect_null(wi.mr);

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 0x42,
				9), 0);
	expect_wc(9, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_assert_eq(mwp_mw_query_info(w, &wi), 0);
	cr_expect(wi.valid);
	cr_expect_eq(wi.rkey, w->rkey);
	cr_expect_eq(wi.mr, mr);
	cr_assert_eq(mwp_mr_query_info(mr, &mi), 0);
	cr_expect_eq(mi.bound_mws, 1);

	cr_assert_eq(mwp_qp_query_info(qp, &qi), 0);
	cr_expect_eq(qi.dest_qpn, to_mqp(qp)->dest_qpn);
	cr_expect_eq(qi.expected_psn, to_mqp(qp)->resp.epsn);
	cr_expect_eq(qi.sq_psn, to_mqp(qp)->sq_psn);
	cr_expect_eq(qi.resp.rx_pkts, 0);
	cr_expect_eq(qi.req.pkts, 0);
	cr_expect_eq(mwp_cq_overruns(cq), 0);

	cr_expect_eq(mwp_mr_query_info(NULL, &mi), EINVAL);
	cr_expect_eq(mwp_mw_query_info(w, NULL), EINVAL);
	cr_expect_eq(mwp_qp_query_info(NULL, &qi), EINVAL);
}
