/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended verbs (issue 38) on the test wire: extended CQs read
 * through start_poll / next_poll / end_poll and every accessor, and
 * refused for what mwpath cannot fill; extended QPs and the ibv_wr_* post
 * API -- the frames a batch puts on the wire, in order with ibv_post_send,
 * its completions, and a batch with an error (a bad SGE list, too deep,
 * a setter with no work request) posting nothing; ibv_rereg_mr changing
 * a region's access, memory and PD under the same keys, and refusing
 * while windows are bound.
 */
#include <arpa/inet.h>

#include "wire_fixture.h"
#include "mwp_cq.h"
#include "mwp_mr.h"

static void
setup(void)
{
	wire_setup();
}

TestSuite(verbs_ex, .init = setup, .fini = wire_teardown, .timeout = 60);

/* ---- extended CQs ---- */

static struct ibv_cq_ex *
cq_ex(uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 64, .wc_flags = wc_flags };

	return mwp_create_cq_ex(ctx, &a);
}

Test(verbs_ex, an_extended_cq_refuses_what_it_cannot_fill)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16 };

	a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cr_expect_null(mwp_create_cq_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	a.wc_flags = IBV_WC_EX_WITH_CVLAN;
	cr_expect_null(mwp_create_cq_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	a.wc_flags = 0;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	cr_expect_null(mwp_create_cq_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP, "parent domains");
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	cr_expect_null(mwp_create_cq_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	a.comp_mask = 0;
	a.cqe = 0;
	cr_expect_null(mwp_create_cq_ex(ctx, &a));
	cr_expect_eq(errno, EINVAL);
	a.cqe = MWP_MAX_CQE + 1;
	cr_expect_null(mwp_create_cq_ex(ctx, &a));
	cr_expect_eq(errno, EINVAL);
	/* every flag of the standard set, and single-threaded */
	a.cqe = 16;
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	struct ibv_cq_ex *c = mwp_create_cq_ex(ctx, &a);

	cr_assert_not_null(c);
	cr_expect_eq(mwp_destroy_cq(ibv_cq_ex_to_cq(c)), 0);
}

Test(verbs_ex, an_extended_cq_gives_each_completion_and_every_field)
{
	struct ibv_cq_ex *c = cq_ex(IBV_WC_STANDARD_FLAGS);
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc w[3] = {
		{ .wr_id = 1, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
		  .byte_len = 100, .imm_data = htonl(0x1234), .qp_num = 0x11,
		  .src_qp = 0x77, .wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH, .slid = 3,
		  .sl = 0xa, .dlid_path_bits = 1 },
		{ .wr_id = 2, .status = IBV_WC_REM_ACCESS_ERR, .opcode = IBV_WC_RDMA_WRITE,
		  .vendor_err = 9, .qp_num = 0x12 },
		{ .wr_id = 3, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_FETCH_ADD },
	};
	struct ibv_wc plain;

	cr_assert_not_null(c);
	cr_expect_eq(ibv_start_poll(c, &pa), ENOENT, "empty");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(mwp_cq_push(to_mcq(ibv_cq_ex_to_cq(c)), &w[i]), 0);
	cr_assert_eq(ibv_start_poll(c, &pa), 0);
	cr_expect_eq(c->wr_id, 1);
	cr_expect_eq(c->status, IBV_WC_SUCCESS);
	cr_expect_eq(ibv_wc_read_opcode(c), IBV_WC_RECV);
	cr_expect_eq(ibv_wc_read_byte_len(c), 100);
	cr_expect_eq(ibv_wc_read_imm_data(c), htonl(0x1234));
	cr_expect_eq(ibv_wc_read_qp_num(c), 0x11);
	cr_expect_eq(ibv_wc_read_src_qp(c), 0x77);
	cr_expect_eq(ibv_wc_read_wc_flags(c), IBV_WC_WITH_IMM | IBV_WC_GRH);
	cr_expect_eq(ibv_wc_read_slid(c), 3);
	cr_expect_eq(ibv_wc_read_sl(c), 0xa);
	cr_expect_eq(ibv_wc_read_dlid_path_bits(c), 1);
	cr_assert_eq(ibv_next_poll(c), 0);
	cr_expect_eq(c->wr_id, 2);
	cr_expect_eq(c->status, IBV_WC_REM_ACCESS_ERR);
	cr_expect_eq(ibv_wc_read_vendor_err(c), 9);
	cr_expect_eq(ibv_wc_read_opcode(c), IBV_WC_RDMA_WRITE);
	ibv_end_poll(c);
	/* what is left reads as well through ibv_poll_cq */
	cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(c), 1, &plain), 1);
	cr_expect_eq(plain.wr_id, 3);
	cr_expect_eq(ibv_start_poll(c, &pa), ENOENT);
	/* a poll that found nothing holds nothing: another may start */
	cr_expect_eq(ibv_start_poll(c, &pa), ENOENT);
	cr_expect_eq(mwp_destroy_cq(ibv_cq_ex_to_cq(c)), 0);
}

/* ---- extended QPs ---- */

static struct ibv_qp_init_attr_ex
qp_attr_ex(enum ibv_qp_type t, uint32_t depth, uint64_t ops)
{
	return (struct ibv_qp_init_attr_ex){
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = depth, .max_recv_wr = 16, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd, .send_ops_flags = ops,
	};
}

Test(verbs_ex, extended_qp_attributes_are_checked_as_rxe_checks_them)
{
	struct ibv_qp_init_attr_ex a = qp_attr_ex(IBV_QPT_RC, 8, IBV_QP_EX_WITH_SEND);
	struct ibv_qp *q;

	a.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	cr_expect_null(mwp_create_qp_ex(ctx, &a), "no PD");
	cr_expect_eq(errno, EINVAL);
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
	cr_expect_null(mwp_create_qp_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	cr_expect_null(mwp_create_qp_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	a = qp_attr_ex(IBV_QPT_UD, 8, IBV_QP_EX_WITH_RDMA_WRITE);
	cr_expect_null(mwp_create_qp_ex(ctx, &a), "UD cannot write");
	cr_expect_eq(errno, EOPNOTSUPP);
	a = qp_attr_ex(IBV_QPT_UC, 8, IBV_QP_EX_WITH_RDMA_READ);
	cr_expect_null(mwp_create_qp_ex(ctx, &a), "UC cannot read");
	cr_expect_eq(errno, EOPNOTSUPP);
	a = qp_attr_ex(IBV_QPT_RC, 8, IBV_QP_EX_WITH_TSO);
	cr_expect_null(mwp_create_qp_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	a = qp_attr_ex(IBV_QPT_XRC_SEND, 8, IBV_QP_EX_WITH_SEND);
	cr_expect_null(mwp_create_qp_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
	/* create flags 0 are no flags; without send_ops_flags no wr API */
	a = qp_attr_ex(IBV_QPT_RC, 8, 0);
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	q = mwp_create_qp_ex(ctx, &a);
	cr_assert_not_null(q);
	cr_expect_null(mwp_qp_to_qp_ex(q));
	cr_expect_eq(mwp_destroy_qp(q), 0);
	cr_expect_null(mwp_qp_to_qp_ex(qp), "an ordinary QP");
}

/* An extended RC QP in RTS on the wire, every request answered. */
static struct ibv_qp_ex *
rc_ex(uint32_t depth)
{
	struct ibv_qp_init_attr_ex a = qp_attr_ex(IBV_QPT_RC, depth,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
		IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW);
	struct ibv_qp *q = mwp_create_qp_ex(ctx, &a);

	cr_assert_not_null(q);
	qp_to_rts(q);
	wire_attach(q);
	wire.auto_answer = true;
	cr_assert_not_null(mwp_qp_to_qp_ex(q));
	return mwp_qp_to_qp_ex(q);
}

Test(verbs_ex, a_batch_goes_on_the_wire_in_order_and_completes_as_posted)
{
	struct ibv_qp_ex *x = rc_ex(16);
	char text[] = "inline!";

	memset(buf, 0x5a, 256);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, 0xabcd01, 0x1000);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 64);
	x->wr_id = 2;
	ibv_wr_send_imm(x, htonl(0x42));
	ibv_wr_set_inline_data(x, text, sizeof(text));
	memset(text, 0, sizeof(text));	/* copied when set */
	x->wr_id = 3;
	ibv_wr_rdma_read(x, 0xabcd02, 0x2000);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf + 1024, 32);
	x->wr_id = 4;
	ibv_wr_atomic_fetch_add(x, 0xabcd03, 0x3000, 5);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf + 2048, 8);
	cr_assert_eq(ibv_wr_complete(x), 0);
	for (uint64_t id = 1; id <= 4; id++)
		expect_wc(id, IBV_WC_SUCCESS,
			  id == 1 ? IBV_WC_RDMA_WRITE : id == 2 ? IBV_WC_SEND :
			  id == 3 ? IBV_WC_RDMA_READ : IBV_WC_FETCH_ADD);
	cr_assert_geq(wire.nb_frames, 4);
	cr_expect_eq(wire.frames[0].opcode, 0x0a, "WRITE ONLY");
	cr_expect_eq(wire.frames[0].rkey, 0xabcd01);
	cr_expect_eq(wire.frames[0].va, 0x1000);
	cr_expect_eq(wire.frames[0].payload_len, 64);
	cr_expect_eq(wire.frames[0].payload[0], 0x5a);
	cr_expect_eq(wire.frames[1].opcode, 0x05, "SEND ONLY with immediate");
	cr_expect_eq(wire.frames[1].payload_len, sizeof(text));
	cr_expect_str_eq((const char *)wire.frames[1].payload, "inline!");
	cr_expect_eq(wire.frames[2].opcode, 0x0c, "READ REQUEST");
	cr_expect_eq(wire.frames[2].dmalen, 32);
	cr_expect_eq(wire.frames[3].opcode, 0x14, "FETCH ADD");
	cr_expect_eq(wire.frames[3].swap_add, 5);
	for (unsigned int i = 1; i < 4; i++)
		cr_expect_eq(wire.frames[i].psn, (wire.frames[0].psn + i) & 0xffffff);
}

Test(verbs_ex, an_atomic_write_carries_the_value_it_was_given)
{
	struct ibv_qp_init_attr_ex a = qp_attr_ex(IBV_QPT_RC, 8,
		IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_SEND);
	uint64_t value = 0x1122334455667788ull;
	struct ibv_qp_ex *x;
	struct ibv_qp *q;

	a.cap.max_inline_data = 0;	/* the value needs no inline room */
	q = mwp_create_qp_ex(ctx, &a);
	cr_assert_not_null(q);
	qp_to_rts(q);
	wire_attach(q);
	wire.auto_answer = true;
	x = mwp_qp_to_qp_ex(q);
	ibv_wr_start(x);
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, 0xabcd07, 0x4000, &value);
	value = 0;	/* copied when given */
	cr_assert_eq(ibv_wr_complete(x), 0);
	expect_wc(9, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
	cr_assert_geq(wire.nb_frames, 1);
	cr_expect_eq(wire.frames[0].opcode, 0x1d, "ATOMIC WRITE");
	cr_expect_eq(wire.frames[0].rkey, 0xabcd07);
	cr_expect_eq(wire.frames[0].va, 0x4000);
	cr_expect_eq(wire.frames[0].payload_len, 8);
	cr_expect_eq(memcmp(wire.frames[0].payload, "\x88\x77\x66\x55\x44\x33\x22\x11", 8), 0);
	/* a UC QP may not be made for it */
	a = qp_attr_ex(IBV_QPT_UC, 8, IBV_QP_EX_WITH_ATOMIC_WRITE);
	cr_expect_null(mwp_create_qp_ex(ctx, &a));
	cr_expect_eq(errno, EOPNOTSUPP);
}

Test(verbs_ex, a_batch_with_an_error_posts_nothing)
{
	struct ibv_qp_ex *x = rc_ex(4);
	struct ibv_qp *q = &x->qp_base;
	struct ibv_sge many[MWP_MAX_SGE + 1] = { 0 };

	/* an SGE list longer than any */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 8);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, RTE_DIM(many), many);
	cr_expect_eq(ibv_wr_complete(x), EINVAL);
	/* more SGEs than the QP was made for (4) */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 5, many);
	cr_expect_eq(ibv_wr_complete(x), EINVAL);
	/* a setter before any builder */
	ibv_wr_start(x);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 8);
	ibv_wr_send(x);
	cr_expect_eq(ibv_wr_complete(x), EINVAL);
	/* deeper than the send queue */
	ibv_wr_start(x);
	for (int i = 0; i < 5; i++) {
		ibv_wr_send(x);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 8);
	}
	cr_expect_eq(ibv_wr_complete(x), ENOSPC);
	/* an opcode an RC QP cannot post */
	ibv_wr_start(x);
	ibv_wr_send_tso(x, buf, 8, 100);
	cr_expect_eq(ibv_wr_complete(x), EINVAL);
	/* abandoned */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 8);
	ibv_wr_abort(x);
	cr_expect_eq(mwp_qp_sq_outstanding(q), 0);
	expect_no_wc();
	cr_expect_eq(wire.nb_frames, 0, "nothing sent");
	/* and the QP posts on: four at once, the queue's depth */
	ibv_wr_start(x);
	for (int i = 0; i < 4; i++) {
		x->wr_id = 10 + (uint64_t)i;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(x);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 8);
	}
	cr_expect_eq(ibv_wr_complete(x), 0);
	for (uint64_t id = 10; id < 14; id++)
		expect_wc(id, IBV_WC_SUCCESS, IBV_WC_SEND);
}

Test(verbs_ex, a_batch_and_ibv_post_send_share_one_queue_and_one_order)
{
	struct ibv_qp_ex *x = rc_ex(16);
	struct ibv_qp *q = &x->qp_base;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND, .sg_list = &sge,
				  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = { .mr = mr, .addr = (uintptr_t)buf, .length = 64,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };

	cr_assert_not_null(mw);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, (mw->rkey & ~0xffu) | 0x33, &bi);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
	ibv_wr_start(x);
	x->wr_id = 3;
	ibv_wr_local_inv(x, (mw->rkey & ~0xffu) | 0x33);
	cr_assert_eq(ibv_wr_complete(x), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	cr_expect_null(resolve((mw->rkey & ~0xffu) | 0x33), "invalidated");
	/* a Type 1 window is bound with ibv_bind_mw, never posted */
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

	ibv_wr_start(x);
	ibv_wr_bind_mw(x, mw1, mw1->rkey, &bi);
	cr_expect_eq(ibv_wr_complete(x), EINVAL);
	ibv_dealloc_mw(mw1);
	ibv_dealloc_mw(mw);
}

Test(verbs_ex, a_ud_batch_carries_its_address)
{
	struct ibv_qp_init_attr_ex a = qp_attr_ex(IBV_QPT_UD, 8,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	struct ibv_qp *q = mwp_create_qp_ex(ctx, &a);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;

	cr_assert_not_null(q);
	qp_to_rts(q);
	wire_attach(q);
	x = mwp_qp_to_qp_ex(q);
	inet_pton(AF_INET6, "::ffff:192.0.2.2", aa.grh.dgid.raw);
	ah = mwp_create_ah(pd, &aa);
	cr_assert_not_null(ah);
	ibv_wr_start(x);
	x->wr_id = 5;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htonl(7));
	ibv_wr_set_ud_addr(x, ah, 0x123, 0x4444);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 16);
	cr_assert_eq(ibv_wr_complete(x), 0);
	expect_wc(5, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_assert_geq(wire.nb_frames, 1);
	cr_expect_eq(wire.frames[0].opcode, 0x65, "UD SEND ONLY with immediate");
	cr_expect_eq(wire.frames[0].dqpn, 0x123);
	cr_expect_eq(wire.frames[0].qkey, 0x4444);
	/* no address: refused as ibv_post_send refuses it */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 16);
	cr_expect_eq(ibv_wr_complete(x), EINVAL);
	mwp_destroy_ah(ah);
}

/* ---- ibv_rereg_mr ---- */

Test(verbs_ex, rereg_changes_access_under_the_same_keys)
{
	const uint32_t lkey = mr->lkey, rkey = mr->rkey;
	const struct mwp_binding *b;

	cr_assert_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	cr_expect_eq(mr->lkey, lkey);
	cr_expect_eq(mr->rkey, rkey);
	b = resolve(rkey);
	cr_assert_not_null(b);
	cr_expect_eq(b->access, IBV_ACCESS_REMOTE_READ, "remote write is gone");
	cr_expect_eq(b->local_access, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	/* flags a region cannot have, or none: nothing changes */
	cr_expect_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_REMOTE_WRITE), EINVAL);
	cr_expect_eq(mwp_rereg_mr(mr, 0, NULL, NULL, 0, 0), EINVAL);
	cr_expect_eq(mwp_rereg_mr(mr, 8, NULL, NULL, 0, 0), EINVAL);
	cr_expect_eq(resolve(rkey)->access, IBV_ACCESS_REMOTE_READ);
}

Test(verbs_ex, rereg_moves_a_region_to_new_memory_and_another_pd)
{
	uint8_t *mem = aligned_alloc(64, 4096);
	const uint32_t rkey = mr->rkey;
	const struct mwp_binding *b;

	cr_assert_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, mem, 4096, 0), 0);
	cr_expect_eq(mr->addr, mem);
	cr_expect_eq(mr->length, 4096);
	b = resolve(rkey);
	cr_assert_not_null(b);
	cr_expect_eq(b->host, mem);
	cr_expect_eq(b->va, (uintptr_t)mem);
	cr_expect_eq(b->length, 4096);
	cr_expect_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 4096, 0),
		     EINVAL);
	/* the PD: the old one has one user less, the new one more */
	cr_assert_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	cr_expect_eq(mr->pd, pd2);
	cr_expect_eq(resolve(rkey)->pd, pd2->handle);
	cr_assert_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0), 0);
	cr_expect_eq(resolve(rkey)->pd, pd->handle);
	cr_assert_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, BUF_LEN, 0),
		     0);
	free(mem);
}

Test(verbs_ex, rereg_is_refused_while_a_window_is_bound)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	const struct mwp_binding *b;

	cr_assert_not_null(mw);
	cr_assert_eq(bind1(qp, mw, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_WRITE, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE), EBUSY);
	b = resolve(mr->rkey);
	cr_expect_eq(b->access, REMOTE_ALL, "unchanged");
	cr_expect_not_null(resolve(mw->rkey), "the window works on");
	ibv_dealloc_mw(mw);
	cr_expect_eq(mwp_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE), 0);
}

/* ---- RESET cleans the CQs ---- */

static void
post_send_id(struct ibv_qp *q, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_SEND, .sg_list = &sge,
				  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *bad;

	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
}

Test(verbs_ex, a_qp_taken_to_reset_leaves_none_of_its_completions_in_its_cqs)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[8];
	int n;

	/* qp_b's two sends flushed by ERR, between two of qp's */
	wire.auto_answer = true;
	post_send_id(qp, 1);
	for (int i = 0; i < 20; i++)
		fixture_progress();	/* completed, and left in the CQ */
	post_send_id(qp_b, 2);
	post_send_id(qp_b, 3);
	cr_assert_eq(mwp_modify_qp(qp_b, &a, IBV_QP_STATE), 0);
	for (int i = 0; i < 20; i++)
		fixture_progress();
	post_send_id(qp, 4);
	for (int i = 0; i < 20; i++)
		fixture_progress();
	a.qp_state = IBV_QPS_RESET;
	cr_assert_eq(mwp_modify_qp(qp_b, &a, IBV_QP_STATE), 0);
	n = ibv_poll_cq(cq, 8, wc);
	cr_assert_eq(n, 2, "%d completions", n);
	cr_expect_eq(wc[0].wr_id, 1);
	cr_expect_eq(wc[1].wr_id, 4);
	cr_expect_eq(wc[0].qp_num, qp->qp_num);
	/* and back to RTS it completes afresh */
	qp_to_rts(qp_b);
	post_send_id(qp_b, 5);
	expect_wc(5, IBV_WC_SUCCESS, IBV_WC_SEND);
}
