/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory-windows.md section 5 (ordering) and section 6 (the DET-style
 * bind).  Data WQEs leave as packets on a test wire (wire_fixture.h); the
 * order they leave in, and what the key table held when each left, are
 * read off the frames.  Each data WQE names its wr_id in its remote
 * address (0x100000 + 64 * wr_id) and, for a SEND, in its payload.
 */
#include <stddef.h>
#include <rte_ring.h>

#include "wire_fixture.h"

#define MAX_SEEN 2048

static struct {
	uint64_t wr_id[MAX_SEEN];
	bool key_live[MAX_SEEN];
	unsigned int n;
	unsigned int scanned;
	uint32_t watch_key;		/* checked when a data WQE leaves */
} tx;

#define VA(id)		(UINT64_C(0x100000) + 64 * (id))

/* The data WQEs whose first packet went out since the last look, in
 * order, and whether the watched key was live then. */
static void
look(void)
{
	for (; tx.scanned < wire.nb_frames; tx.scanned++) {
		const struct wire_frame *f = &wire.frames[tx.scanned];
		const uint32_t mask = f->opcode == 0xff ? 0 : roce_opcode[f->opcode].mask;
		uint64_t id;

		if (!(mask & ROCE_M_REQ) || !(mask & ROCE_M_START))
			continue;
		if (mask & ROCE_M_SEND)
			memcpy(&id, f->payload, sizeof(id));
		else
			id = (f->va - VA(0)) / 64;
		cr_assert_lt(tx.n, MAX_SEEN);
		tx.wr_id[tx.n] = id;
		tx.key_live[tx.n] = tx.watch_key != 0 && resolve(tx.watch_key) != NULL;
		tx.n++;
	}
}

static int
pump_and_look(void)
{
	wire_pump();
	look();
	return 0;
}

static void
setup(void)
{
	wire_setup();
	memset(&tx, 0, sizeof(tx));
	wire.auto_answer = true;
	fixture_poll = pump_and_look;
}

TestSuite(order5, .init = setup, .fini = wire_teardown);

static void
pump(int n)
{
	for (int i = 0; i < n; i++)
		pump_and_look();
}

static int
post_op(struct ibv_qp *q, enum ibv_wr_opcode op, uint64_t wr_id, unsigned int flags)
{
	uint8_t *at = buf + 64 * (wr_id % 1024);
	struct ibv_sge sge = { .addr = (uintptr_t)at, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = op, .send_flags = flags,
				  .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr *bad;

	memcpy(at, &wr_id, sizeof(wr_id));
	wr.wr.rdma.remote_addr = VA(wr_id);
	wr.wr.rdma.rkey = 0x1234;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = VA(wr_id);
		wr.wr.atomic.rkey = 0x1234;
	}
	return ibv_post_send(q, &wr, &bad);
}

/* The (first) request frame of wr_id. */
static const struct wire_frame *
request_of(uint64_t wr_id)
{
	for (unsigned int i = 0; i < wire.nb_frames; i++) {
		const struct wire_frame *f = &wire.frames[i];
		uint32_t mask = f->opcode == 0xff ? 0 : roce_opcode[f->opcode].mask;
		uint64_t id;

		if (!(mask & ROCE_M_REQ) || !(mask & ROCE_M_START))
			continue;
		if (mask & ROCE_M_SEND)
			memcpy(&id, f->payload, sizeof(id));
		else
			id = (f->va - VA(0)) / 64;
		if (id == wr_id)
			return f;
	}
	cr_assert_fail("no request for wr_id %lu", (unsigned long)wr_id);
	return NULL;
}

Test(order5, completions_appear_in_posting_order)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_op(qp, IBV_WR_SEND, 1, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, 2), 0);
	cr_assert_eq(post_op(qp, IBV_WR_RDMA_WRITE, 3, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_local_inv(qp, (w->rkey & ~0xffu) | 1, 4, true), 0);
	cr_assert_eq(post_op(qp, IBV_WR_SEND, 5, IBV_SEND_SIGNALED), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	expect_wc(4, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	expect_wc(5, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_expect_eq(tx.n, 3);
	cr_expect(tx.wr_id[0] == 1 && tx.wr_id[1] == 3 && tx.wr_id[2] == 5);
}

Test(order5, a_send_posted_after_a_bind_leaves_only_after_the_bind_took_effect)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	tx.watch_key = (w->rkey & ~0xffu) | 0x42;
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 0x42, 1), 0);
	cr_assert_eq(post_op(qp, IBV_WR_SEND, 2, IBV_SEND_SIGNALED), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_assert_eq(tx.n, 1);
	cr_expect(tx.key_live[0], "the peer could not yet use the new rkey");
}

/* The engine never waits for the device lock: while a control thread
 * holds it, binds wait for a later pass and the datapath answers on. */
Test(order5, a_bind_waits_while_the_device_lock_is_held_and_the_datapath_goes_on)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	const uint32_t key = (w->rkey & ~0xffu) | 0x21;
	struct mwp_engine_stats st;
	struct mwp_hdrs h = { .opcode = ROCE_OP_RC_RDMA_WRITE_ONLY, .dqpn = qp->qp_num,
			      .psn = 0, .ackreq = true };
	struct wire_frame pf = { .sqpn = qp->qp_num };
	struct mwp_flow fl;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);
	static const uint8_t data[16] = "goes on, locked";
	unsigned int before;
	struct rte_mbuf *out[64];
	uint16_t n;

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 0x21, 1), 0);
	pthread_mutex_lock(&to_mdev(ctx)->lock);	/* a control thread, busy */
	for (int i = 0; i < 5; i++) {
		wire.now += wire.hz / 1000000;
		mwp_engine_run(wire.eng, wire.now);
		n = mwp_queue_tx(wire.q, out, 64);
		rte_pktmbuf_free_bulk(out, n);
	}
	mwp_engine_stats_get(wire.eng, &st);
	cr_expect_geq(st.sq_deferred, 5, "the bind waited, pass after pass");
	cr_expect_null(resolve(key), "not bound yet");
	/* a peer's WRITE to the region meanwhile: executed and answered */
	cr_assert_not_null(m);
	wire_peer_flow(&pf, &fl);
	h.reth.va = (uintptr_t)buf + 256;
	h.reth.rkey = mr->rkey;
	h.reth.dmalen = sizeof(data);
	cr_assert_eq(mwp_build(m, &fl, &h, data, sizeof(data), NULL), 0);
	before = wire.nb_frames;
	wire_feed(&m, 1);
	cr_expect_eq(memcmp(buf + 256, data, sizeof(data)), 0);
	cr_assert_eq(wire.nb_frames, before + 1);
	cr_expect_eq(wire.frames[before].opcode, ROCE_OP_RC_ACKNOWLEDGE);
	pthread_mutex_unlock(&to_mdev(ctx)->lock);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_not_null(resolve(key));
}

Test(order5, local_inv_waits_for_every_earlier_wqe)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t key = (w->rkey & ~0xffu) | 7;
	struct ibv_wc wc;

	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 7, 1), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	wire.auto_answer = false;		/* the SEND stays on the wire */
	cr_assert_eq(post_op(qp, IBV_WR_SEND, 2, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_local_inv(qp, key, 3, true), 0);
	pump(20);
	cr_expect_not_null(resolve(key), "LOCAL_INV ran before the SEND completed");
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0);
	wire_ack(qp->qp_num, request_of(2)->psn);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(3, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	cr_expect_null(resolve(key));
}

Test(order5, fence_waits_for_earlier_reads_and_atomics)
{
	wire.auto_answer = false;
	cr_assert_eq(post_op(qp, IBV_WR_RDMA_READ, 1, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_op(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_op(qp, IBV_WR_SEND, 3, IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
	pump(20);
	cr_expect_eq(tx.n, 2, "the fenced SEND left early");
	wire_answer_read(request_of(1), 1024);
	pump(20);
	cr_expect_eq(tx.n, 2, "one ATOMIC is still outstanding");
	wire_atomic_ack(qp->qp_num, request_of(2)->psn, 5);
	pump(20);
	cr_expect_eq(tx.n, 3);
	cr_expect_eq(tx.wr_id[2], 3);
}

Test(order5, fence_does_not_wait_for_earlier_sends)
{
	wire.auto_answer = false;
	cr_assert_eq(post_op(qp, IBV_WR_SEND, 1, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_op(qp, IBV_WR_RDMA_WRITE, 2, IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
	pump(5);
	cr_expect_eq(tx.n, 2);
}

Test(order5, an_unsignaled_success_has_no_cqe_a_failure_always_does)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert_eq(post_op(qp, IBV_WR_SEND, 1, 0), 0);
	cr_assert_eq(post_local_inv(qp, w->rkey, 2, false), 0);	/* FREE: fails */
	expect_wc(2, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	expect_no_wc();
}

Test(order5, sq_sig_all_signals_every_success)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1 },
	};
	struct ibv_qp *q = make_qp_ia(pd, &ia, true);

	wire_attach(q);
	cr_assert_eq(post_op(q, IBV_WR_SEND, 9, 0), 0);
	expect_wc(9, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* A data WQE that cannot leave (its peer's MAC unknown, no neighbour
 * table to ask) holds every later bind: the send queue runs in order. */
Test(order5, a_held_data_wqe_holds_the_ring_and_later_binds)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp *q = make_qp(pd, IBV_QPT_RC, 16, true);
	struct rte_ether_addr mac;

	mwp_engine_stop(wire.eng);
	cr_assert_eq(mwp_port_attach_qp(wire.port, q), 0);	/* no MAC */
	mwp_engine_start(wire.eng);
	cr_assert_eq(post_op(q, IBV_WR_SEND, 1, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_bind2(q, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, 2), 0);
	expect_no_wc();
	cr_expect_eq(tx.n, 0);
	cr_expect_null(resolve((w->rkey & ~0xffu) | 1), "the bind overtook the SEND");
	rte_ether_unformat_addr(PEER_MAC, &mac);
	cr_assert_eq(mwp_qp_set_peer_mac(q, &mac), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
}

Test(order5, a_failed_data_wqe_moves_the_qp_to_err_and_flushes_the_rest)
{
	wire.auto_answer = false;
	cr_assert_eq(post_op(qp, IBV_WR_RDMA_READ, 1, IBV_SEND_SIGNALED), 0);
	cr_assert_eq(post_op(qp, IBV_WR_SEND, 2, IBV_SEND_FENCE), 0);
	pump(5);
	wire_aeth(qp->qp_num, request_of(1)->psn, ROCE_AETH_NAK_REM_ACC);
	expect_wc(1, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ);
	expect_wc(2, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
}

Test(order5, posted_receives_are_flushed_in_err)
{
	struct ibv_recv_wr r = { .wr_id = 55 }, *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_recv(qp, &r, &bad), 0);
	cr_assert_eq(mwp_modify_qp(qp, &a, IBV_QP_STATE), 0);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 55);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
}

Test(order5, a_failure_mid_list_then_reset_and_back_to_rts_recovers_the_same_qp)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	cr_assert_eq(post_local_inv(qp, w->rkey, 1, true), 0);
	expect_wc(1, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	cr_assert_eq(qp->state, IBV_QPS_ERR);
	cr_assert_eq(mwp_modify_qp(qp, &a, IBV_QP_STATE), 0);
	cr_expect_eq(qp->state, IBV_QPS_RESET);
	cr_expect_eq(rte_ring_count(to_mqp(qp)->sq), 0);
	cr_expect_eq(mwp_qp_sq_outstanding(qp), 0);
	/* the same QP, RESET -> INIT -> RTR -> RTS */
	qp_to_rts(qp);
	cr_assert_eq(qp->state, IBV_QPS_RTS);
	cr_assert_eq(post_bind2(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, 2), 0);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_not_null(resolve(w->rkey));
}

Test(order5, illegal_qp_transitions_and_missing_attributes_are_einval)
{
	struct ibv_qp *q = make_qp(pd, IBV_QPT_RC, 8, false);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };

	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE), EINVAL, "RESET -> RTS");
	a.qp_state = IBV_QPS_INIT;
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE), EINVAL, "INIT without port");
	/* one port, numbered 1; one P_Key, at index 0 */
	for (a.port_num = 0; a.port_num < 4; a.port_num++)
		if (a.port_num != 1)
			cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL,
				     "port %u", a.port_num);
	a.port_num = 1;
	a.pkey_index = 1;
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL, "P_Key index 1");
	cr_expect_eq(q->state, IBV_QPS_RESET, "a refused modify changes nothing");
	a.pkey_index = 0;
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PATH_MTU), EINVAL,
		     "RTR without address");
	a.ah_attr.is_global = 0;
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		IBV_QP_MIN_RNR_TIMER), EINVAL, "RoCE needs a GRH");
	a.qp_state = IBV_QPS_ERR;
	cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE), 0, "any -> ERR");
}

/* Each attribute that is one number: one past its range is refused and
 * changes nothing; the edge of its range is taken and kept. */
Test(order5, each_numeric_attribute_out_of_range_is_einval_and_its_edge_is_kept)
{
	static const struct {
		int bit;
		size_t off, size;
		uint32_t edge, bad;
	} cases[] = {
#define C(bit, f, edge, bad) { bit, offsetof(struct ibv_qp_attr, f),	\
			       sizeof(((struct ibv_qp_attr *)NULL)->f), edge, bad }
		C(IBV_QP_PATH_MTU, path_mtu, IBV_MTU_4096, IBV_MTU_4096 + 1),
		C(IBV_QP_PATH_MTU, path_mtu, IBV_MTU_256, 0),
		C(IBV_QP_DEST_QPN, dest_qp_num, 0xffffff, 0x1000000),
		C(IBV_QP_RQ_PSN, rq_psn, 0xffffff, 0x1000000),
		C(IBV_QP_SQ_PSN, sq_psn, 0xffffff, 0x1000000),
		C(IBV_QP_TIMEOUT, timeout, 31, 32),
		C(IBV_QP_RETRY_CNT, retry_cnt, 7, 8),
		C(IBV_QP_RNR_RETRY, rnr_retry, 7, 8),
		C(IBV_QP_PORT, port_num, 1, 2),
		C(IBV_QP_PKEY_INDEX, pkey_index, 0, 1),
#undef C
	};
	struct ibv_qp *q = make_qp(pd, IBV_QPT_RC, 8, false);

	qp_to_rts(q);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS }, got;
		struct ibv_qp_init_attr ia;
		uint32_t before = 0, after = 0;

		cr_assert_eq(mwp_query_qp(q, &got, cases[i].bit, &ia), 0);
		memcpy(&before, (char *)&got + cases[i].off, cases[i].size);
		memcpy((char *)&a + cases[i].off, &cases[i].bad, cases[i].size);
		cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | cases[i].bit), EINVAL,
			     "case %zu: %u", i, cases[i].bad);
		cr_assert_eq(mwp_query_qp(q, &got, cases[i].bit, &ia), 0);
		memcpy(&after, (char *)&got + cases[i].off, cases[i].size);
		cr_expect_eq(after, before, "case %zu: a refused value changes nothing", i);
		memcpy((char *)&a + cases[i].off, &cases[i].edge, cases[i].size);
		cr_expect_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | cases[i].bit), 0,
			     "case %zu: %u", i, cases[i].edge);
		cr_assert_eq(mwp_query_qp(q, &got, cases[i].bit, &ia), 0);
		memcpy(&after, (char *)&got + cases[i].off, cases[i].size);
		cr_expect_eq(after, cases[i].edge, "case %zu: kept", i);
	}
	cr_expect_eq(q->state, IBV_QPS_RTS);
}

Test(order5, a_mixed_list_of_1008_wqes_on_three_qps_completes_in_order)
{
	struct ibv_qp *qs[3] = { qp, qp_b, NULL };
	struct ibv_mw *ws[3][8];
	uint64_t next_id[3] = { 0 };
	uint64_t seen[3] = { 0 };
	struct ibv_wc wc[16];
	int posted = 0, done = 0;

	qs[2] = make_qp(pd, IBV_QPT_RC, 64, true);
	wire_attach(qs[2]);
	for (int q = 0; q < 3; q++)
		for (int i = 0; i < 8; i++)
			ws[q][i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	/* per QP: bind window i, send (maybe fenced), local_inv window i */
	while (posted < 1008 || done < posted) {
		for (int q = 0; q < 3; q++) {
			struct ibv_mw *w = ws[q][(next_id[q] / 3) % 8];
			uint64_t id = ((uint64_t)q << 32) | next_id[q];
			int ret;

			if (next_id[q] == 336)	/* whole bind/send/inv triples */
				continue;
			switch (next_id[q] % 3) {
			case 0:
				ret = post_bind2(qs[q], w, mr, (uintptr_t)buf,
						 64, IBV_ACCESS_REMOTE_READ,
						 (uint8_t)next_id[q], id);
				break;
			case 1:
				ret = post_op(qs[q], IBV_WR_SEND, id, IBV_SEND_SIGNALED |
					      ((next_id[q] % 2) ? IBV_SEND_FENCE : 0));
				break;
			default:
				ret = post_local_inv(qs[q], w->rkey, id, true);
				break;
			}
			if (ret == ENOMEM)
				continue;
			cr_assert_eq(ret, 0);
			next_id[q]++;
			posted++;
		}
		pump_and_look();
		for (int n = ibv_poll_cq(cq, 16, wc); n > 0; n = ibv_poll_cq(cq, 16, wc))
			for (int i = 0; i < n; i++) {
				int q = (int)(wc[i].wr_id >> 32);

				cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "wr %lx: %s",
					     (unsigned long)wc[i].wr_id,
					     ibv_wc_status_str(wc[i].status));
				cr_assert_eq(wc[i].wr_id & 0xffffffff, seen[q],
					     "QP %d out of order", q);
				cr_assert_eq(wc[i].qp_num, qs[q]->qp_num);
				seen[q]++;
				done++;
			}
	}
	cr_expect_eq(done, 1008);
	cr_expect_eq(mwp_keys_count(mwp_device_keys(ctx)), 2, "only the two MRs remain");
	for (int q = 0; q < 3; q++)
		cr_expect_eq(mwp_qp_sq_outstanding(qs[q]), 0);
}

/* ---- section 6: the DET-style bind ---- */

Test(order5, det_bind_returns_the_new_key_and_fences_what_follows)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t key = 0;

	tx.watch_key = ibv_inc_rkey(w->rkey);
	cr_assert_eq(mwp_det_bind(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ,
				  1, &key), 0);
	cr_expect_eq(key, tx.watch_key);
	cr_assert_eq(post_op(qp, IBV_WR_SEND, 2, IBV_SEND_SIGNALED), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_SEND);
	cr_expect(tx.key_live[0]);
	/* usable on every QP of the PD: a Type 1 key has no QP */
	cr_expect_eq(resolve(key)->kind, MWP_KEY_MW1);
}

Test(order5, det_bind_length_zero_returns_an_unbound_key)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t k1, k2;

	cr_assert_eq(mwp_det_bind(qp, w, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, 1, &k1), 0);
	cr_assert_eq(mwp_det_bind(qp, w, NULL, 0, 0, 0, 2, &k2), 0);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	expect_wc(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	cr_expect_neq(k1, k2);
	cr_expect_null(resolve(k1));
	cr_expect_null(resolve(k2));
}

Test(order5, det_bind_error_codes)
{
	struct ibv_mw *w = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *wo = ibv_alloc_mw(pd2, IBV_MW_TYPE_1);
	struct ibv_mr *nobind = mwp_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *nolw = mwp_reg_mr(pd, buf, 4096, IBV_ACCESS_MW_BIND);
	struct ibv_qp *init = make_qp(pd, IBV_QPT_RC, 8, false);
	struct ibv_qp *small = make_qp(pd, IBV_QPT_RC, 1, true);
	uint64_t a = (uintptr_t)buf;
	uint32_t k;

	cr_expect_eq(mwp_det_bind(qp, w, nobind, a, 64, IBV_ACCESS_REMOTE_READ, 1, &k), EACCES);
	cr_expect_eq(mwp_det_bind(qp, w, nolw, a, 64, IBV_ACCESS_REMOTE_WRITE, 1, &k), EACCES);
	cr_expect_eq(mwp_det_bind(qp, w, mr, UINT64_MAX - 4, 64, IBV_ACCESS_REMOTE_READ, 1, &k), EFAULT);
	cr_expect_eq(mwp_det_bind(qp, w2, mr, a, 64, IBV_ACCESS_REMOTE_READ, 1, &k), EINVAL);
	cr_expect_eq(mwp_det_bind(qp, w, mr, a, 64, IBV_ACCESS_MW_BIND, 1, &k), EINVAL);
	cr_expect_eq(mwp_det_bind(qp, w, mr, a, 64, IBV_ACCESS_REMOTE_READ, 1, NULL), EINVAL);
	cr_expect_eq(mwp_det_bind(init, w, mr, a, 64, IBV_ACCESS_REMOTE_READ, 1, &k), ENOTCONN);
	cr_expect_eq(mwp_det_bind(qp, wo, mr, a, 64, IBV_ACCESS_REMOTE_READ, 1, &k), EPERM);
	cr_expect_eq(mwp_det_bind(qp, w, mr2, (uintptr_t)buf2, 64, IBV_ACCESS_REMOTE_READ, 1, &k), EPERM);
	cr_expect_eq(mwp_det_bind(qp, w, mr, a + BUF_LEN - 8, 64, IBV_ACCESS_REMOTE_READ, 1, &k), ERANGE);
	cr_expect_eq(mwp_det_bind(qp, w, mr, a - 8, 64, IBV_ACCESS_REMOTE_READ, 1, &k), ERANGE);
	cr_expect_eq(mwp_det_bind(small, w, mr, a, 64, IBV_ACCESS_REMOTE_READ, 1, &k), 0);
	cr_expect_eq(mwp_det_bind(small, w, mr, a, 64, IBV_ACCESS_REMOTE_READ, 2, &k), ENOSPC);
	expect_wc(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	expect_no_wc();
}

Test(order5, a_full_cq_is_an_overrun_the_qp_goes_to_err_and_no_completion_is_lost)
{
	struct ibv_cq *small = mwp_create_cq(ctx, 4);
	struct ibv_qp_init_attr ia = { .send_cq = small, .recv_cq = small,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 1 } };
	struct ibv_qp *q = make_qp_ia(pd, &ia, true);
	struct ibv_mw *w[6];
	struct ibv_wc wc[8];
	int got = 0, n;

	for (int i = 0; i < 6; i++) {
		w[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		cr_assert_eq(post_bind2(q, w[i], mr, (uintptr_t)buf, 64,
					IBV_ACCESS_REMOTE_READ, 1, 10 + i), 0);
	}
	pump(5);
	cr_expect_eq(q->state, IBV_QPS_ERR, "overrun must move the QP to ERR");
	cr_expect_gt(to_mcq(small)->overruns, 0);
	/* drain: every completion arrives, in order, none dropped */
	for (int i = 0; i < 50 && got < 6; i++) {
		pump_and_look();
		n = ibv_poll_cq(small, 8, wc);
		for (int k = 0; k < n; k++, got++)
			cr_expect_eq(wc[k].wr_id, (uint64_t)(10 + got));
	}
	cr_expect_eq(got, 6, "completions lost: %d of 6", got);
}

/* What the events of a device and a CQ record (mwp_device_set_async,
 * mwp_cq_set_event). */
static struct ibv_async_event seen_async[8];
static int nb_async, nb_cq_events;

static void
on_async(struct ibv_context *c, const struct ibv_async_event *ev, void *arg)
{
	RTE_SET_USED(c);
	RTE_SET_USED(arg);
	if (nb_async < 8)
		seen_async[nb_async] = *ev;
	nb_async++;
}

static void
on_cq_event(struct ibv_cq *c, void *arg)
{
	RTE_SET_USED(c);
	RTE_SET_USED(arg);
	nb_cq_events++;
}

Test(order5, an_overrun_raises_cq_err_once_and_qp_fatal_and_an_armed_cq_signals_once)
{
	struct ibv_cq *small = mwp_create_cq(ctx, 4);
	struct ibv_qp_init_attr ia = { .send_cq = small, .recv_cq = small,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 1 } };
	struct ibv_qp *q = make_qp_ia(pd, &ia, true);
	bool cq_err = false, qp_fatal = false;

	cr_expect_eq(ibv_req_notify_cq(small, 0), EOPNOTSUPP, "no event function yet");
	mwp_device_set_async(ctx, on_async, NULL);
	mwp_cq_set_event(small, on_cq_event, NULL);
	cr_assert_eq(ibv_req_notify_cq(small, 0), 0);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(post_bind2(q, ibv_alloc_mw(pd, IBV_MW_TYPE_2), mr, (uintptr_t)buf,
					64, IBV_ACCESS_REMOTE_READ, 1, 10 + i), 0);
	pump(5);
	mwp_device_set_async(ctx, NULL, NULL);
	cr_expect_eq(nb_cq_events, 1, "armed once, signalled once: %d", nb_cq_events);
	cr_assert_leq(nb_async, 8);
	for (int i = 0; i < nb_async; i++) {
		if (seen_async[i].event_type == IBV_EVENT_CQ_ERR) {
			cr_expect_not(cq_err, "CQ_ERR once, on the first overrun");
			cr_expect_eq(seen_async[i].element.cq, small);
			cq_err = true;
		} else {
			cr_expect_eq(seen_async[i].event_type, IBV_EVENT_QP_FATAL);
			cr_expect_eq(seen_async[i].element.qp, q);
			qp_fatal = true;
		}
	}
	cr_expect(cq_err && qp_fatal, "CQ_ERR %d, QP_FATAL %d", cq_err, qp_fatal);
}

Test(order5, receive_completions_carry_byte_len_flags_and_the_invalidated_rkey)
{
	struct ibv_recv_wr r[3] = { { .wr_id = 1 }, { .wr_id = 2 }, { .wr_id = 3 } }, *bad;
	struct ibv_wc wc;
	uint64_t id;

	cr_expect_eq(mwp_rq_complete(qp, IBV_WC_RECV, 1, 0, 0, IBV_WC_SUCCESS, &id),
		     -ENOENT, "no receive posted: the responder answers RNR");
	r[0].next = &r[1];
	r[1].next = &r[2];
	cr_assert_eq(ibv_post_recv(qp, r, &bad), 0);
	cr_assert_eq(mwp_rq_complete(qp, IBV_WC_RECV, 100, IBV_WC_WITH_INV,
					  0x80000542, IBV_WC_SUCCESS, &id), 0);
	cr_expect_eq(id, 1);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, 100);
	cr_expect_eq(wc.wc_flags, IBV_WC_WITH_INV);
	cr_expect_eq(wc.invalidated_rkey, 0x80000542);
	cr_expect_eq(wc.qp_num, qp->qp_num);
	cr_assert_eq(mwp_rq_complete(qp, IBV_WC_RECV_RDMA_WITH_IMM, 0, IBV_WC_WITH_IMM,
					  htonl(0xabcd), IBV_WC_SUCCESS, NULL), 0);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 2);
	cr_expect_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(wc.imm_data, htonl(0xabcd));
	/* an error receive completion moves the QP to ERR (REM_INV_REQ_ERR
	 * for a SEND_WITH_INV naming a bad key, section 4) */
	cr_assert_eq(mwp_rq_complete(qp, IBV_WC_RECV, 0, 0, 0,
					  IBV_WC_REM_INV_REQ_ERR, NULL), 0);
	cr_assert(next_wc(&wc));
	cr_expect_eq(wc.wr_id, 3);
	cr_expect_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	cr_expect_eq(qp->state, IBV_QPS_ERR);
}

Test(order5, post_time_validation_returns_the_verbs_errno_and_bad_wr)
{
	struct ibv_qp *uc = make_qp(pd, IBV_QPT_UC, 8, true);
	struct ibv_sge sge[3] = { { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey },
				  { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey },
				  { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey } };
	struct ibv_send_wr ok = { .wr_id = 1, .opcode = IBV_WR_SEND, .sg_list = sge, .num_sge = 1 };
	struct ibv_send_wr wr = ok, *bad = NULL;

	/* UC: no READ, ATOMIC or SEND_WITH_INV */
	wr.opcode = IBV_WR_RDMA_READ;
	cr_expect_eq(ibv_post_send(uc, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	cr_expect_eq(ibv_post_send(uc, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	cr_expect_eq(ibv_post_send(uc, &wr, &bad), EINVAL);
	/* too many SGEs (the fixture's QPs take 2) */
	wr = ok;
	wr.num_sge = 3;
	cr_expect_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	/* inline data beyond max_inline_data (0 here) */
	wr = ok;
	wr.send_flags = IBV_SEND_INLINE;
	cr_expect_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	/* an atomic needs one 8-byte SGE */
	wr = ok;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	sge[0].length = 4;
	cr_expect_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	sge[0].length = 8;
	/* in a list, the first bad WR is reported and the earlier ones stay */
	{
		struct ibv_send_wr l[3] = { ok, ok, ok };

		l[0].next = &l[1];
		l[1].next = &l[2];
		l[1].num_sge = 5;
		l[0].send_flags = IBV_SEND_SIGNALED;
		cr_expect_eq(ibv_post_send(qp, l, &bad), EINVAL);
		cr_expect_eq(bad, &l[1]);
		expect_wc(1, IBV_WC_SUCCESS, IBV_WC_SEND);
		expect_no_wc();
	}
}
