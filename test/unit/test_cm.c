/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager (issue 39) between two mwpath hosts in one
 * process: A (02:00:00:00:00:01, 192.0.2.1) and B (...:02, 192.0.2.2),
 * each a device, a port, an engine and its queue, joined by a link the
 * test runs (link_run) and may cut, or filter by CM attribute.  Both
 * CMs run on the test's clock.  What is checked: the handshakes (REQ,
 * REP, RTU; REJ; DREQ, DREP; SIDR) with what each side offers arriving
 * in the events, two RC QPs connected by them carrying a SEND; retries
 * and timeouts, a lost RTU, a duplicate REQ getting the kernel's MRA;
 * every malformed, unknown or out-of-state MAD counted and answered as
 * the kernel answers; a flood of REQs held to the listener's backlog.
 */
#include <arpa/inet.h>
#include <string.h>

#include <rte_cycles.h>

#include "test_eal.h"
#include "mwp_cm_priv.h"
#include "mwp_engine_priv.h"
#include "mwp_verbs.h"
#include "roce_mad.h"

struct host {
	struct ibv_context *ctx;
	struct mwp_port *port;
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;
	struct mwp_cm *cm;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
};

static struct host A, B;
static uint64_t now, hz;
static bool cut;		/* frames between the hosts are lost */
static uint16_t drop_attr;	/* CM MADs of this attribute are lost */
static unsigned int dropped;

#define BUF 65536

static void
host_up(struct host *h, unsigned int n, const struct mwp_cm_attr *ca)
{
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true };
	char mac[32], ip[32];

	memset(h, 0, sizeof(*h));
	snprintf(mac, sizeof(mac), "02:00:00:00:00:0%u", n);
	snprintf(ip, sizeof(ip), "192.0.2.%u", n);
	rte_ether_unformat_addr(mac, &pc.mac);
	inet_pton(AF_INET, ip, &pc.ipv4);
	h->gid.raw[10] = h->gid.raw[11] = 0xff;
	memcpy(&h->gid.raw[12], &pc.ipv4, 4);
	h->ctx = mwp_open_device(&(struct mwp_device_attr){ .socket = SOCKET_ID_ANY });
	cr_assert_not_null(h->ctx);
	h->port = mwp_port_create(&pc, (uint16_t)n, SOCKET_ID_ANY);
	cr_assert_not_null(h->port);
	mwp_port_set_mempool(h->port, test_mp);
	h->eng = mwp_engine_create(n, SOCKET_ID_ANY);
	cr_assert_not_null(h->eng);
	h->q = mwp_queue_create(h->eng, h->port, 0, &h->st);
	cr_assert_not_null(h->q);
	h->cm = mwp_cm_create(h->ctx, h->port, ca);
	cr_assert_not_null(h->cm, "%s", strerror(errno));
	h->pd = mwp_alloc_pd(h->ctx);
	h->cq = mwp_create_cq(h->ctx, 256);
	h->buf = aligned_alloc(64, BUF);
	memset(h->buf, 0, BUF);
	h->mr = mwp_reg_mr(h->pd, h->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cr_assert(h->pd && h->cq && h->mr);
	mwp_engine_start(h->eng);
}

static void
host_down(struct host *h)
{
	mwp_engine_stop(h->eng);
	cr_expect_eq(mwp_cm_destroy(h->cm), 0);
	mwp_close_device(h->ctx);
	mwp_queue_free(h->q);
	cr_expect_eq(mwp_engine_free(h->eng), 0);
	mwp_port_free(h->port);
	free(h->buf);
}

static struct mwp_cm_attr attr_a, attr_b;

static void
setup(void)
{
	test_eal_init();
	hz = rte_get_tsc_hz();
	cut = false;
	drop_attr = 0;
	dropped = 0;
	host_up(&A, 1, &attr_a);
	host_up(&B, 2, &attr_b);
	/* the test's clock starts where the engines' did (never behind) */
	now = rte_rdtsc();
}

static void
teardown(void)
{
	host_down(&A);
	host_down(&B);
}

TestSuite(cm, .init = setup, .fini = teardown, .timeout = 120);

/* The CM attribute of a frame to QP1, or 0. */
static uint16_t
cm_attr_of(struct rte_mbuf *m)
{
	struct mwp_pkt p;
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	if (mwp_parse(m, &p) != MWP_DROP_NONE || p.qpn != ROCE_GSI_QPN ||
	    p.payload_len < ROCE_MAD_HDR_BYTES)
		return 0;
	return mad_attr(d + p.payload_off);
}

/* Frames from one host to the other, and what those answer at once. */
static void
deliver(struct host *to, struct rte_mbuf **m, uint16_t n, struct host *back)
{
	struct rte_mbuf *keep[64], *tx[64];
	uint16_t k = 0, t;

	for (uint16_t i = 0; i < n; i++) {
		uint16_t a = cm_attr_of(m[i]);

		if (cut || (drop_attr != 0 && a == drop_attr)) {
			dropped += a != 0;
			rte_pktmbuf_free(m[i]);
		} else {
			keep[k++] = m[i];
		}
	}
	if (k == 0)
		return;
	t = mwp_queue_rx(to->q, keep, k, tx, 64);
	if (t != 0)
		deliver(back, tx, t, to);
}

/* One pass of both hosts, 100 us on, then their CMs. */
static void
pump(void)
{
	struct host *h[2] = { &A, &B };

	now += hz / 10000;	/* 100 us */
	for (int i = 0; i < 2; i++) {
		struct rte_mbuf *tx[64];
		uint16_t n;

		mwp_poll(h[i]->ctx);
		mwp_engine_run(h[i]->eng, now);
		n = mwp_queue_tx(h[i]->q, tx, 64);
		deliver(h[1 - i], tx, n, h[i]);
	}
	mwp_cm_progress(A.cm, now);
	mwp_cm_progress(B.cm, now);
}

static void
run(unsigned int passes)
{
	for (unsigned int i = 0; i < passes; i++)
		pump();
}

/* Move the clock by ms, a pass every 10 ms. */
static void
advance_ms(uint64_t ms)
{
	for (uint64_t t = 0; t < ms; t += 10) {
		now += hz / 100;
		pump();
	}
}

static struct mwp_cm_stats
stats(struct host *h)
{
	struct mwp_cm_stats st;

	mwp_cm_stats_get(h->cm, &st);
	return st;
}

/* The next event of h within some passes, of type want. */
static void
expect_event(struct host *h, enum mwp_cm_event_type want, struct mwp_cm_event *ev)
{
	for (int i = 0; i < 200; i++) {
		if (mwp_cm_get_event(h->cm, ev) == 0) {
			cr_assert_eq(ev->type, want, "event %d, not %d", ev->type, want);
			return;
		}
		pump();
	}
	{
		struct mwp_cm_stats a = stats(&A), b = stats(&B);
		fprintf(stderr, "A: rx %lu tx %lu full %lu bad %lu; B: rx %lu tx %lu bad %lu; A tx_pkts %lu B rx %lu\n",
			a.rx_mads, a.tx_mads, a.send_full, a.bad_mads, b.rx_mads, b.tx_mads, b.bad_mads,
			(unsigned long)A.st.tx_pkts, (unsigned long)B.st.rx_pkts);
		for (int d = 0; d < MWP_DROP__MAX; d++)
			if (A.st.drop[d] || B.st.drop[d])
				fprintf(stderr, "drop %s A %lu B %lu\n", mwp_drop_name(d), (unsigned long)A.st.drop[d], (unsigned long)B.st.drop[d]);
	}
	cr_assert_fail("no event %d", want);
}

static void
expect_no_event(struct host *h)
{
	struct mwp_cm_event ev;

	run(50);
	cr_expect_eq(mwp_cm_get_event(h->cm, &ev), EAGAIN, "event %d", ev.type);
}

static struct mwp_cm_path
path_to(const struct host *from, const struct host *to)
{
	return (struct mwp_cm_path){ .sgid = from->gid, .dgid = to->gid };
}

static struct ibv_qp *
rc_qp(struct host *h)
{
	struct ibv_qp_init_attr ia = { .send_cq = h->cq, .recv_cq = h->cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_qp *q = mwp_create_qp(h->pd, &ia);

	cr_assert_not_null(q);
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(mwp_port_attach_qp(h->port, q), 0);
	return q;
}

/* RTR and RTS with what the peer offered (ev->param) on the path: a
 * starting PSN is the one its sender receives from (my_psn, which this
 * side offered, to RTR; the peer's to RTS), as Linux's CM pairs them. */
static void
qp_connect(struct ibv_qp *q, const struct host *peer, const struct mwp_cm_conn_param *theirs,
	   uint32_t my_psn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = theirs->qp_num, .rq_psn = my_psn,
				 .max_dest_rd_atomic = 1, .min_rnr_timer = 1 };

	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = theirs->starting_psn;
	a.timeout = 14;
	a.retry_cnt = theirs->retry_count;
	a.rnr_retry = theirs->rnr_retry_count;
	a.max_rd_atomic = 1;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

/* One completion of cq (it must be a success), or none. */
static int
poll1(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(cq, 1, &wc);

	if (n == 1)
		cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	return n;
}

#define SID mwp_cm_ip_service_id(ROCE_CM_PS_TCP, 7471)

/* The hosts know each other's MAC (ARP): a SIDR REQ to B and its answer. */
static void
warm(void)
{
	struct mwp_cm_path p = path_to(&A, &B);
	struct mwp_cm_event ev;
	struct mwp_cm_id *id;

	cr_assert_eq(mwp_cm_sidr_req(A.cm, 1, &p, NULL, 0, NULL, &id), 0);
	expect_event(&A, MWP_CM_SIDR_REP_RECEIVED, &ev);
	cr_assert_eq(mwp_cm_destroy_id(id), 0);
}

/* A's REQ for SID with private data "hello", B's REQ event. */
static struct mwp_cm_id *
connect_a(struct ibv_qp *qa, struct mwp_cm_event *ev)
{
	struct mwp_cm_path p = path_to(&A, &B);
	struct mwp_cm_conn_param cp = { .qp_num = qa->qp_num, .starting_psn = 0x123456,
					.qp_type = IBV_QPT_RC, .responder_resources = 4,
					.initiator_depth = 2, .retry_count = 6,
					.rnr_retry_count = 7, .private_data = "hello",
					.private_data_len = 5 };
	struct mwp_cm_id *id;

	cr_assert_eq(mwp_cm_connect(A.cm, SID, &p, &cp, &A, &id), 0);
	expect_event(&B, MWP_CM_REQ_RECEIVED, ev);
	return id;
}

Test(cm, a_req_for_a_service_nobody_listens_on_is_rejected_invalid_service_id)
{
	struct ibv_qp *qa = rc_qp(&A);
	struct mwp_cm_path p = path_to(&A, &B);
	struct mwp_cm_conn_param cp = { .qp_num = qa->qp_num, .qp_type = IBV_QPT_RC };
	struct mwp_cm_event ev;
	struct mwp_cm_id *id;

	cr_assert_eq(mwp_cm_connect(A.cm, SID, &p, &cp, NULL, &id), 0);
	expect_event(&A, MWP_CM_REJ_RECEIVED, &ev);
	cr_expect_eq(ev.id, id);
	cr_expect_eq(ev.rej_reason, ROCE_REJ_INVALID_SERVICE_ID);
	cr_expect_eq(stats(&B).rej_no_listener, 1);
	cr_expect_eq(stats(&B).rx_by_attr[0], 1);
	/* QP1 is a QP: its frames are not QPN guesses */
	cr_expect_eq(B.st.drop[MWP_DROP_UNKNOWN_QP], 0);
	cr_expect_eq(A.st.drop[MWP_DROP_UNKNOWN_QP], 0);
	cr_expect_eq(mwp_cm_destroy_id(id), 0);
}

Test(cm, req_rep_rtu_connect_two_rc_qps_with_what_each_side_offered)
{
	struct ibv_qp *qa = rc_qp(&A), *qb = rc_qp(&B);
	struct mwp_cm_id *l, *ia, *ib;
	struct mwp_cm_event ev, rep;
	struct mwp_cm_conn_param bp = { .responder_resources = 2, .initiator_depth = 4,
					.rnr_retry_count = 5, .private_data = "welcome",
					.private_data_len = 7 };
	struct ibv_sge sge = { .addr = (uintptr_t)A.buf, .length = 64, .lkey = A.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	struct ibv_sge rsge = { .addr = (uintptr_t)B.buf, .length = 64, .lkey = B.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	int got = 0;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, &B, &l), 0);
	ia = connect_a(qa, &ev);
	/* B hears everything A offered, and where A is */
	ib = ev.id;
	cr_expect_eq(ev.listen_id, l);
	cr_expect_eq(ev.context, &B);
	cr_expect_eq(ev.service_id, SID);
	cr_expect_eq(ev.param.qp_num, qa->qp_num);
	cr_expect_eq(ev.param.starting_psn, 0x123456);
	cr_expect_eq(ev.param.responder_resources, 4);
	cr_expect_eq(ev.param.initiator_depth, 2);
	cr_expect_eq(ev.param.retry_count, 6);
	cr_expect_eq(ev.param.rnr_retry_count, 7);
	cr_expect_eq(ev.param.qp_type, IBV_QPT_RC);
	cr_expect_eq(ev.path.mtu, IBV_MTU_1024);
	cr_expect_arr_eq(ev.path.dgid.raw, A.gid.raw, 16);
	cr_expect_arr_eq(ev.path.sgid.raw, B.gid.raw, 16);
	cr_expect_eq(ev.private_len, CM_REQ_PRIVATE_BYTES);
	cr_expect_arr_eq(ev.private_data, "hello", 5);
	qp_connect(qb, &A, &ev.param, 0x654321);
	bp.qp_num = qb->qp_num;
	bp.starting_psn = 0x654321;
	cr_assert_eq(mwp_cm_accept(ib, &bp), 0);
	cr_expect_eq(mwp_cm_accept(ib, &bp), EINVAL, "accepted twice");
	expect_event(&A, MWP_CM_REP_RECEIVED, &rep);
	cr_expect_eq(rep.id, ia);
	cr_expect_eq(rep.context, &A);
	cr_expect_eq(rep.param.qp_num, qb->qp_num);
	cr_expect_eq(rep.param.starting_psn, 0x654321);
	cr_expect_eq(rep.param.responder_resources, 2);
	cr_expect_eq(rep.param.initiator_depth, 4);
	cr_expect_eq(rep.param.rnr_retry_count, 5);
	cr_expect_arr_eq(rep.private_data, "welcome", 7);
	qp_connect(qa, &B, &rep.param, 0x123456);
	cr_assert_eq(mwp_cm_rtu(ia, NULL, 0), 0);
	expect_event(&B, MWP_CM_RTU_RECEIVED, &ev);
	cr_expect_eq(ev.id, ib);
	/* the connected QPs carry a SEND */
	memset(A.buf, 0x5a, 64);
	cr_assert_eq(ibv_post_recv(qb, &rwr, &rbad), 0);
	cr_assert_eq(ibv_post_send(qa, &wr, &bad), 0);
	for (int i = 0; i < 500 && got < 2; i++) {
		pump();
		got += poll1(A.cq) + poll1(B.cq);
	}
	cr_expect_eq(got, 2);
	cr_expect_eq(B.buf[63], 0x5a);
	cr_expect_eq(stats(&A).retries + stats(&B).retries, 0);
	mwp_destroy_qp(qa);
	mwp_destroy_qp(qb);
}

/* A connected pair of ids over qa and qb (both in RTS), through B's
 * listener on SID (made the first time). */
static void
connected_to(struct ibv_qp *qa, struct ibv_qp *qb, struct mwp_cm_id **ia,
	     struct mwp_cm_id **ib, bool listen)
{
	struct mwp_cm_conn_param bp = { .qp_num = qb->qp_num, .starting_psn = 7 };
	struct mwp_cm_event ev;
	struct mwp_cm_id *l;

	if (listen)
		cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, &B, &l), 0);
	*ia = connect_a(qa, &ev);
	*ib = ev.id;
	qp_connect(qb, &A, &ev.param, 7);
	cr_assert_eq(mwp_cm_accept(*ib, &bp), 0);
	expect_event(&A, MWP_CM_REP_RECEIVED, &ev);
	qp_connect(qa, &B, &ev.param, 0x123456);
	cr_assert_eq(mwp_cm_rtu(*ia, NULL, 0), 0);
	expect_event(&B, MWP_CM_RTU_RECEIVED, &ev);
}

static void
connected(struct ibv_qp *qa, struct ibv_qp *qb, struct mwp_cm_id **ia, struct mwp_cm_id **ib)
{
	connected_to(qa, qb, ia, ib, true);
}

Test(cm, dreq_and_drep_end_a_connection_and_timewait_frees_the_ids)
{
	struct ibv_qp *qa = rc_qp(&A), *qb = rc_qp(&B);
	struct mwp_cm_id *ia, *ib;
	struct mwp_cm_event ev;

	connected(qa, qb, &ia, &ib);
	cr_assert_eq(mwp_cm_disconnect(ia, "bye", 3), 0);
	expect_event(&B, MWP_CM_DREQ_RECEIVED, &ev);
	cr_expect_eq(ev.id, ib);
	cr_expect_arr_eq(ev.private_data, "bye", 3);
	cr_assert_eq(mwp_cm_disconnect(ib, NULL, 0), 0);
	expect_event(&A, MWP_CM_DREP_RECEIVED, &ev);
	cr_expect_eq(ev.id, ia);
	cr_expect_eq(mwp_cm_disconnect(ia, NULL, 0), EINVAL, "disconnected twice");
	/* a DREQ again, as a peer that missed the DREP sends it: the DREP again */
	cr_expect_eq(mwp_cm_destroy_id(ia), 0);
	cr_expect_eq(mwp_cm_destroy_id(ib), 0);
	advance_ms(1100);
	cr_expect_eq(A.cm->nb_ids, 0);
	cr_expect_eq(B.cm->nb_ids, 1, "the listener only");
	expect_no_event(&A);
	expect_no_event(&B);
	mwp_destroy_qp(qa);
	mwp_destroy_qp(qb);
}

Test(cm, letting_an_established_id_go_sends_a_dreq_the_peer_hears)
{
	struct ibv_qp *qa = rc_qp(&A), *qb = rc_qp(&B);
	struct mwp_cm_id *ia, *ib;
	struct mwp_cm_event ev;

	connected(qa, qb, &ia, &ib);
	cr_assert_eq(mwp_cm_destroy_id(ia), 0);
	expect_event(&B, MWP_CM_DREQ_RECEIVED, &ev);
	cr_assert_eq(mwp_cm_disconnect(ib, NULL, 0), 0);
	run(50);
	cr_expect_eq(stats(&A).rx_by_attr[ROCE_CM_DREP - ROCE_CM_REQ], 1);
	expect_no_event(&A);
	mwp_destroy_qp(qa);
	mwp_destroy_qp(qb);
}

/* A program that exits holding its ids (qperf's server destroys only its
 * listener): each is let go as the kernel's rdma_cm lets go of a closed
 * file's -- the DREQ it heard is answered, the connection still up gets
 * a DREQ, the listener goes. */
Test(cm, a_program_gone_lets_every_id_go_with_what_each_owes)
{
	struct ibv_qp *qa = rc_qp(&A), *qb = rc_qp(&B), *qa2 = rc_qp(&A), *qb2 = rc_qp(&B);
	struct mwp_cm_id *ia, *ib, *ia2, *ib2;
	struct mwp_cm_event ev;
	const uint64_t dreq = ROCE_CM_DREQ - ROCE_CM_REQ, drep = ROCE_CM_DREP - ROCE_CM_REQ;

	connected(qa, qb, &ia, &ib);
	connected_to(qa2, qb2, &ia2, &ib2, false);
	/* A disconnects the first; B hears it and never answers */
	cr_assert_eq(mwp_cm_disconnect(ia, NULL, 0), 0);
	expect_event(&B, MWP_CM_DREQ_RECEIVED, &ev);
	cr_expect_eq(ev.id, ib);
	/* B's program is gone: the DREP, a DREQ for the second, the listener */
	cr_expect_eq(mwp_cm_release_all(B.cm), 3);
	run(50);
	/* in the order of B's slots: one of each, for its own id */
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(mwp_cm_get_event(A.cm, &ev), 0);
		if (ev.type == MWP_CM_DREP_RECEIVED)
			cr_expect_eq(ev.id, ia);
		else
			cr_expect(ev.type == MWP_CM_DREQ_RECEIVED && ev.id == ia2,
				  "event %d for %p", ev.type, (void *)ev.id);
	}
	cr_expect_eq(stats(&A).rx_by_attr[drep], 1);
	cr_expect_eq(stats(&A).rx_by_attr[dreq], 1);
	cr_expect_eq(stats(&B).retries, 0, "the DREP came at once: no DREQ again");
	cr_expect_eq(mwp_cm_release_all(B.cm), 0, "nothing left to let go");
	mwp_destroy_qp(qa);
	mwp_destroy_qp(qb);
	mwp_destroy_qp(qa2);
	mwp_destroy_qp(qb2);
}

Test(cm, the_program_rejects_with_its_reason_and_private_data)
{
	struct ibv_qp *qa = rc_qp(&A);
	struct mwp_cm_event ev;
	struct mwp_cm_id *l, *ia;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l), 0);
	ia = connect_a(qa, &ev);
	cr_assert_eq(mwp_cm_reject(ev.id, ROCE_REJ_CONSUMER, "nope", 4), 0);
	expect_event(&A, MWP_CM_REJ_RECEIVED, &ev);
	cr_expect_eq(ev.id, ia);
	cr_expect_eq(ev.rej_reason, ROCE_REJ_CONSUMER);
	cr_expect_arr_eq(ev.private_data, "nope", 4);
	cr_expect_eq(mwp_cm_rtu(ia, NULL, 0), EINVAL);
	mwp_destroy_qp(qa);
}

Test(cm, an_unanswered_req_is_sent_again_then_fails_after_fifteen_retries)
{
	struct ibv_qp *qa = rc_qp(&A);
	struct mwp_cm_path p = path_to(&A, &B);
	struct mwp_cm_conn_param cp = { .qp_num = qa->qp_num, .qp_type = IBV_QPT_RC };
	struct mwp_cm_event ev;
	struct mwp_cm_id *id;

	warm();
	cut = true;
	cr_assert_eq(mwp_cm_connect(A.cm, SID, &p, &cp, NULL, &id), 0);
	/* 4.096 us * 2^20, twice: 8.6 s a try */
	advance_ms(8000);
	cr_expect_eq(stats(&A).retries, 0);
	advance_ms(1000);
	cr_expect_eq(stats(&A).retries, 1);
	advance_ms(16 * 8600);
	cr_expect_eq(stats(&A).retries, 15);
	cr_expect_eq(stats(&A).timeouts, 1);
	expect_event(&A, MWP_CM_REQ_ERROR, &ev);
	cr_expect_eq(ev.id, id);
	cr_expect_eq(dropped, 17, "%u: the REQ, 15 retries and the REJ (timeout)", dropped);
	mwp_destroy_qp(qa);
}

Test(cm, a_lost_rtu_comes_again_when_the_rep_does)
{
	struct ibv_qp *qa = rc_qp(&A), *qb = rc_qp(&B);
	struct mwp_cm_conn_param bp = { .qp_num = qb->qp_num };
	struct mwp_cm_event ev;
	struct mwp_cm_id *l, *ia;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l), 0);
	ia = connect_a(qa, &ev);
	cr_assert_eq(mwp_cm_accept(ev.id, &bp), 0);
	expect_event(&A, MWP_CM_REP_RECEIVED, &ev);
	drop_attr = ROCE_CM_RTU;
	cr_assert_eq(mwp_cm_rtu(ia, NULL, 0), 0);
	run(50);
	cr_expect_eq(dropped, 1);
	drop_attr = 0;
	advance_ms(9000);	/* B's REP again; A's RTU again */
	expect_event(&B, MWP_CM_RTU_RECEIVED, &ev);
	cr_expect_eq(stats(&B).retries, 1);
	cr_expect_eq(stats(&A).duplicates, 1);
	mwp_destroy_qp(qa);
	mwp_destroy_qp(qb);
}

Test(cm, a_duplicate_req_while_the_program_decides_gets_an_mra)
{
	struct ibv_qp *qa = rc_qp(&A);
	struct mwp_cm_event ev;
	struct mwp_cm_id *l;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l), 0);
	connect_a(qa, &ev);
	advance_ms(9000);	/* A's REQ again */
	cr_expect_eq(stats(&B).duplicates, 1);
	expect_event(&A, MWP_CM_MRA_RECEIVED, &ev);
	/* the MRA's 2^24 * 4.096 us: A waits over two minutes before trying again */
	advance_ms(60000);
	cr_expect_eq(stats(&A).retries, 1);
	expect_no_event(&B);
	mwp_destroy_qp(qa);
}

Test(cm, sidr_finds_a_ud_service_and_a_missing_one_says_so)
{
	const uint64_t usid = mwp_cm_ip_service_id(ROCE_CM_PS_UDP, 7174);
	struct mwp_cm_path p = path_to(&A, &B);
	struct mwp_cm_conn_param bp = { .qp_num = 0x1234, .qkey = 0x01234567,
					.private_data = "ud", .private_data_len = 2 };
	struct mwp_cm_event ev;
	struct mwp_cm_id *l, *id;

	cr_assert_eq(mwp_cm_sidr_req(A.cm, usid, &p, "who", 3, NULL, &id), 0);
	expect_event(&A, MWP_CM_SIDR_REP_RECEIVED, &ev);
	cr_expect_eq(ev.sidr_status, ROCE_SIDR_NO_SERVICE);
	cr_expect_eq(stats(&B).sidr_no_listener, 1);
	cr_assert_eq(mwp_cm_destroy_id(id), 0);

	cr_assert_eq(mwp_cm_listen(B.cm, usid, 0, 4, NULL, &l), 0);
	cr_assert_eq(mwp_cm_sidr_req(A.cm, usid, &p, "who", 3, NULL, &id), 0);
	expect_event(&B, MWP_CM_SIDR_REQ_RECEIVED, &ev);
	cr_expect_eq(ev.service_id, usid);
	cr_expect_eq(ev.listen_id, l);
	cr_expect_arr_eq(ev.private_data, "who", 3);
	cr_expect_arr_eq(ev.path.dgid.raw, A.gid.raw, 16);
	cr_assert_eq(mwp_cm_sidr_rep(ev.id, ROCE_SIDR_OK, &bp), 0);
	cr_expect_eq(mwp_cm_sidr_rep(ev.id, ROCE_SIDR_OK, &bp), EINVAL, "answered twice");
	expect_event(&A, MWP_CM_SIDR_REP_RECEIVED, &ev);
	cr_expect_eq(ev.id, id);
	cr_expect_eq(ev.sidr_status, ROCE_SIDR_OK);
	cr_expect_eq(ev.param.qp_num, 0x1234);
	cr_expect_eq(ev.param.qkey, 0x01234567);
	cr_expect_arr_eq(ev.private_data, "ud", 2);
}

Test(cm, listeners_may_not_overlap)
{
	struct mwp_cm_id *l, *l2;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l), 0);
	cr_expect_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l2), EADDRINUSE);
	cr_expect_eq(mwp_cm_listen(B.cm, SID & ~0xffffull, ~0xffffull, 4, NULL, &l2), EADDRINUSE);
	cr_expect_eq(mwp_cm_destroy_id(l), 0);
	cr_expect_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l2), 0);
}

/* ---- bad input ---- */

/* A UD QP of A's, to send B's QP1 what a test makes. */
static struct ibv_qp *
raw_qp(void)
{
	struct ibv_qp_init_attr ia = { .send_cq = A.cq, .recv_cq = A.cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 64, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = ROCE_GSI_QKEY };
	struct ibv_qp *q = mwp_create_qp(A.pd, &ia);

	cr_assert_not_null(q);
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	cr_assert_eq(mwp_port_attach_qp(A.port, q), 0);
	return q;
}

static void
send_raw(struct ibv_qp *q, const uint8_t *mad, uint32_t len)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;
	struct ibv_sge sge = { .addr = (uintptr_t)A.buf, .length = len, .lkey = A.mr->lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1 }, *bad;

	aa.grh.dgid = B.gid;
	ah = mwp_create_ah(A.pd, &aa);
	cr_assert_not_null(ah);
	memcpy(A.buf, mad, len);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ROCE_GSI_QPN;
	wr.wr.ud.remote_qkey = ROCE_GSI_QKEY;
	cr_assert_eq(ibv_post_send(q, &wr, &bad), 0);
	mwp_destroy_ah(ah);
	run(20);
}

/* A CM MAD of attr from comm ID local to remote. */
static void
mad_of(uint8_t *mad, uint16_t attr, uint32_t local, uint32_t remote)
{
	memset(mad, 0, ROCE_MAD_BYTES);
	mad_cm_hdr(mad, attr, 0x77);
	mad_put(mad, CM_REP_LOCAL_COMM_ID, local);
	mad_put(mad, CM_REP_REMOTE_COMM_ID, remote);
}

Test(cm, malformed_and_foreign_mads_are_counted_and_change_nothing)
{
	struct ibv_qp *q = raw_qp();
	uint8_t mad[ROCE_MAD_BYTES];
	struct mwp_cm_stats st;
	struct mwp_cm_id *l;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l), 0);
	run(20);
	mad_of(mad, ROCE_CM_REQ, 1, 0);
	send_raw(q, mad, 100);			/* short */
	mad[0] = 2;
	send_raw(q, mad, ROCE_MAD_BYTES);	/* base version 2 */
	mad_of(mad, ROCE_CM_REQ, 1, 0);
	mad[1] = 0x04;
	send_raw(q, mad, ROCE_MAD_BYTES);	/* the SA's class */
	mad_of(mad, ROCE_CM_REQ, 1, 0);
	mad[2] = 1;
	send_raw(q, mad, ROCE_MAD_BYTES);	/* class version 1 */
	mad_of(mad, ROCE_CM_REQ, 1, 0);
	mad[3] = ROCE_MAD_METHOD_GET;
	send_raw(q, mad, ROCE_MAD_BYTES);	/* Get */
	st = stats(&B);
	cr_expect_eq(st.bad_mads, 5);
	mad_of(mad, 0x0030, 1, 0);
	send_raw(q, mad, ROCE_MAD_BYTES);	/* no such attribute */
	mad_of(mad, ROCE_CM_LAP, 1, 0);
	send_raw(q, mad, ROCE_MAD_BYTES);	/* no alternate paths */
	cr_expect_eq(stats(&B).unknown_attr, 2);
	/* messages for no id: RTU, REJ, MRA, DREP dropped; REP answered by a
	 * REJ (invalid communication ID), DREQ by a DREP, as the kernel does */
	mad_of(mad, ROCE_CM_RTU, 5, 0x1234);
	send_raw(q, mad, ROCE_MAD_BYTES);
	mad_of(mad, ROCE_CM_REJ, 5, 0x1234);
	send_raw(q, mad, ROCE_MAD_BYTES);
	mad_of(mad, ROCE_CM_MRA, 5, 0x1234);
	send_raw(q, mad, ROCE_MAD_BYTES);
	mad_of(mad, ROCE_CM_DREP, 5, 0x1234);
	send_raw(q, mad, ROCE_MAD_BYTES);
	mad_of(mad, ROCE_CM_REP, 5, 0x1234);
	send_raw(q, mad, ROCE_MAD_BYTES);
	mad_of(mad, ROCE_CM_DREQ, 5, 0x1234);
	send_raw(q, mad, ROCE_MAD_BYTES);
	mad_of(mad, ROCE_CM_SIDR_REP, 5, 0);
	send_raw(q, mad, ROCE_MAD_BYTES);
	st = stats(&B);
	cr_expect_eq(st.unknown_id, 7);
	cr_expect_eq(st.rx_mads, 14);
	/* the REJ and the DREP came back to A's QP1 */
	st = stats(&A);
	cr_expect_eq(st.rx_by_attr[ROCE_CM_REJ - ROCE_CM_REQ], 1);
	cr_expect_eq(st.rx_by_attr[ROCE_CM_DREP - ROCE_CM_REQ], 1);
	cr_expect_eq(st.unknown_id, 2, "neither is for an id of A's");
	cr_expect_eq(B.cm->nb_ids, 1, "the listener only");
	expect_no_event(&A);
	expect_no_event(&B);
	mwp_destroy_qp(q);
}

Test(cm, a_flood_of_reqs_is_held_to_the_backlog_and_the_rest_rejected)
{
	struct ibv_qp *q = raw_qp();
	uint8_t mad[ROCE_MAD_BYTES];
	struct mwp_cm_event ev;
	struct mwp_cm_stats st;
	struct mwp_cm_id *l;
	unsigned int n = 0;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 8, NULL, &l), 0);
	run(20);
	for (uint32_t i = 1; i <= 200; i++) {
		mad_of(mad, ROCE_CM_REQ, i, 0);
		mad_put64(mad, CM_REQ_SERVICE_ID, SID);
		mad_put(mad, CM_REQ_LOCAL_QPN, 0x100 + i);
		send_raw(q, mad, ROCE_MAD_BYTES);
	}
	while (mwp_cm_get_event(B.cm, &ev) == 0) {
		cr_expect_eq(ev.type, MWP_CM_REQ_RECEIVED);
		n++;
	}
	st = stats(&B);
	cr_expect_eq(n, 8);
	cr_expect_eq(st.rej_backlog, 192, "rej_backlog %lu, rx %lu, event_full %lu, send_full %lu, "
		     "unknown %lu, bad %lu", (unsigned long)st.rej_backlog,
		     (unsigned long)st.rx_mads, (unsigned long)st.event_full,
		     (unsigned long)st.send_full, (unsigned long)st.unknown_id,
		     (unsigned long)st.bad_mads);
	cr_expect_eq(B.cm->nb_ids, 9);
	/* the same REQs again: duplicates of the 8, the rest rejected again */
	for (uint32_t i = 1; i <= 16; i++) {
		mad_of(mad, ROCE_CM_REQ, i, 0);
		mad_put64(mad, CM_REQ_SERVICE_ID, SID);
		send_raw(q, mad, ROCE_MAD_BYTES);
	}
	st = stats(&B);
	cr_expect_eq(st.duplicates, 8);
	cr_expect_eq(st.rej_backlog, 200);
	cr_expect_eq(B.cm->nb_ids, 9);
	mwp_destroy_qp(q);
}

Test(cm, a_peers_huge_response_timeout_is_capped_at_137_seconds_a_try)
{
	struct ibv_qp *q = raw_qp();
	const struct mwp_cm_conn_param bp = { .qp_num = 0x55 };
	uint8_t mad[ROCE_MAD_BYTES];
	struct mwp_cm_event ev;
	struct mwp_cm_id *l;

	cr_assert_eq(mwp_cm_listen(B.cm, SID, 0, 4, NULL, &l), 0);
	run(20);
	mad_of(mad, ROCE_CM_REQ, 7, 0);
	mad_put64(mad, CM_REQ_SERVICE_ID, SID);
	mad_put(mad, CM_REQ_REMOTE_CM_TIMEOUT, 31);	/* 2.4 hours a try */
	mad_put(mad, CM_REQ_MAX_CM_RETRIES, 15);
	send_raw(q, mad, ROCE_MAD_BYTES);
	expect_event(&B, MWP_CM_REQ_RECEIVED, &ev);
	cr_assert_eq(mwp_cm_accept(ev.id, &bp), 0);
	/* 2 x 4.096 us x 2^24 */
	cr_expect_leq(ev.id->rt.interval, 2 * (UINT64_C(4096) << 24) / 1000 * (hz / 1000000));
	cr_expect_gt(ev.id->rt.interval, 0);
	mwp_destroy_qp(q);
}

/* ---- the caller's sleep (mwp_cm_set_wake, mwp_cm_idle_until) ---- */

static void
count_wake(void *arg)
{
	(*(unsigned int *)arg)++;
}

/* h's frames to the other host, and what those answer at once, with no
 * CM's progress on either side. */
static void
send_from(struct host *h)
{
	struct rte_mbuf *tx[64];
	uint16_t n;

	mwp_poll(h->ctx);
	mwp_engine_run(h->eng, now);
	n = mwp_queue_tx(h->q, tx, 64);
	deliver(h == &A ? &B : &A, tx, n, h);
}

Test(cm, an_idle_cm_sleeps_until_its_next_timer_and_a_mad_or_a_sooner_timer_wakes_it)
{
	struct ibv_qp *qa = rc_qp(&A);
	struct mwp_cm_path p = path_to(&A, &B);
	struct mwp_cm_conn_param cp = { .qp_num = qa->qp_num, .qp_type = IBV_QPT_RC };
	unsigned int wa = 0, wb = 0;
	struct mwp_cm_event ev;
	struct mwp_cm_id *id;
	uint64_t until;

	warm();
	/* no wake function: the caller may not sleep */
	cr_expect_eq(mwp_cm_idle_until(A.cm, now), 0);
	mwp_cm_set_wake(A.cm, count_wake, &wa);
	mwp_cm_set_wake(B.cm, count_wake, &wb);
	/* nothing to do, no timer: as long as the caller likes */
	cr_expect_eq(mwp_cm_idle_until(A.cm, now), UINT64_MAX);
	cr_expect_eq(mwp_cm_idle_until(B.cm, now), UINT64_MAX);
	cr_expect_eq(wa + wb, 0);

	/* A's program connects while A's thread sleeps: the REQ's timer is
	 * sooner than the sleep's end */
	cr_assert_eq(mwp_cm_connect(A.cm, SID, &p, &cp, NULL, &id), 0);
	cr_expect_eq(wa, 1);
	mwp_cm_progress(A.cm, now);
	until = mwp_cm_idle_until(A.cm, now);
	cr_expect(until > now && until < UINT64_MAX, "until the REQ's retry");
	cr_expect_eq(until, id->rt.deadline);

	/* the REQ reaches B's QP1: its completion wakes B, once */
	send_from(&A);
	cr_expect_eq(wb, 1);
	cr_expect_eq(stats(&B).rx_by_attr[0], 0, "not taken yet");
	/* a MAD that came since the last pass: due now */
	cr_expect_eq(mwp_cm_idle_until(B.cm, now), 0);
	cr_expect_eq(stats(&B).rx_by_attr[0], 1, "taken by the look");
	mwp_cm_progress(B.cm, now);
	cr_expect_eq(mwp_cm_idle_until(B.cm, now), UINT64_MAX);
	cr_expect_eq(wb, 1);

	/* B's REJ (nobody listens) reaches A: A wakes, and its event */
	send_from(&B);
	cr_expect_eq(wa, 2);
	expect_event(&A, MWP_CM_REJ_RECEIVED, &ev);
	cr_expect_eq(ev.id, id);
	cr_expect_eq(mwp_cm_destroy_id(id), 0);
	mwp_cm_set_wake(A.cm, NULL, NULL);
	mwp_cm_set_wake(B.cm, NULL, NULL);
	cr_expect_eq(mwp_cm_idle_until(A.cm, now), 0);
	mwp_destroy_qp(qa);
}

/* A CM shared with other processes (mwp_cm_share): what the test's
 * "others" say. */
static bool others_listen_on;	/* another process listens on SID */
static bool b_answers;		/* B answers for nobody */

static bool
t_others_listen(void *arg, uint64_t sid)
{
	(void)arg;
	return others_listen_on && sid == SID;
}

static bool
t_answers_strays(void *arg)
{
	(void)arg;
	return b_answers;
}

static const struct mwp_cm_share_ops t_ops = {
	.others_listen = t_others_listen,
	.answers_strays = t_answers_strays,
};

Test(cm, a_shared_cm_leaves_what_is_another_processes_and_answers_only_for_nobody)
{
	struct ibv_qp *qa = rc_qp(&A);
	struct mwp_cm_path p = path_to(&A, &B);
	struct mwp_cm_conn_param cp = { .qp_num = qa->qp_num, .qp_type = IBV_QPT_RC };
	const uint64_t usid = mwp_cm_ip_service_id(ROCE_CM_PS_UDP, 7471);
	uint8_t mad[ROCE_MAD_BYTES];
	struct mwp_cm_event ev;
	struct mwp_cm_id *id, *l;

	/* bad arguments, and a CM with ids already */
	cr_expect_eq(mwp_cm_share(B.cm, 16, 4, &t_ops), EINVAL);
	cr_expect_eq(mwp_cm_share(B.cm, 0, 0, &t_ops), EINVAL);
	cr_expect_eq(mwp_cm_share(B.cm, 1, 4, NULL), EINVAL);
	cr_assert_eq(mwp_cm_listen(B.cm, 99, 0, 4, NULL, &l), 0);
	cr_expect_eq(mwp_cm_share(B.cm, 1, 4, &t_ops), EBUSY);
	cr_assert_eq(mwp_cm_destroy_id(l), 0);
	cr_assert_eq(mwp_cm_share(B.cm, 3, 4, &t_ops), 0);
	cr_assert_eq(mwp_cm_share(A.cm, 5, 4, &t_ops), 0);

	/* another process listens: B leaves A's REQ alone (no REJ; A's
	 * retries go on) */
	others_listen_on = true;
	b_answers = true;
	cr_assert_eq(mwp_cm_connect(A.cm, SID, &p, &cp, NULL, &id), 0);
	run(20);
	cr_expect_eq(mwp_cm_get_event(A.cm, &ev), EAGAIN);
	cr_expect_eq(stats(&B).rej_no_listener, 0);
	cr_expect_geq(stats(&B).others, 1);
	/* A's local ID carries its part in its top 4 bits */
	cr_expect_eq(id->local_id >> 28, 5u);
	cr_assert_eq(mwp_cm_destroy_id(id), 0);
	run(20);

	/* nobody listens, and B is not the one that answers: silence */
	others_listen_on = false;
	b_answers = false;
	cr_assert_eq(mwp_cm_connect(A.cm, SID, &p, &cp, NULL, &id), 0);
	run(20);
	cr_expect_eq(mwp_cm_get_event(A.cm, &ev), EAGAIN);
	cr_expect_eq(stats(&B).rej_no_listener, 0);
	cr_assert_eq(mwp_cm_destroy_id(id), 0);
	run(20);

	/* nobody listens and B answers for nobody: the REJ, and "no
	 * service" for a SIDR */
	b_answers = true;
	cr_assert_eq(mwp_cm_connect(A.cm, SID, &p, &cp, NULL, &id), 0);
	expect_event(&A, MWP_CM_REJ_RECEIVED, &ev);
	cr_expect_eq(ev.rej_reason, ROCE_REJ_INVALID_SERVICE_ID);
	cr_expect_eq(stats(&B).rej_no_listener, 1);
	cr_assert_eq(mwp_cm_destroy_id(id), 0);
	cr_assert_eq(mwp_cm_sidr_req(A.cm, usid, &p, NULL, 0, NULL, &id), 0);
	expect_event(&A, MWP_CM_SIDR_REP_RECEIVED, &ev);
	cr_expect_eq(ev.sidr_status, ROCE_SIDR_NO_SERVICE);
	cr_assert_eq(mwp_cm_destroy_id(id), 0);

	/* an answer naming another part's ID is not B's: a DREQ or a REP
	 * for part 7 gets no DREP or REJ (part 7's process answers it),
	 * counted; a DREQ for B's own part but no id gets the kernel's DREP */
	{
		struct ibv_qp *q = raw_qp();
		const uint64_t others = stats(&B).others, unknown = stats(&B).unknown_id;
		const uint64_t dreps = stats(&A).rx_by_attr[ROCE_CM_DREP - ROCE_CM_REQ];
		const uint64_t rejs = stats(&A).rx_by_attr[ROCE_CM_REJ - ROCE_CM_REQ];

		mad_of(mad, ROCE_CM_DREQ, 5, 7u << 28 | 0x55);
		send_raw(q, mad, ROCE_MAD_BYTES);
		mad_of(mad, ROCE_CM_REP, 5, 7u << 28 | 0x56);
		send_raw(q, mad, ROCE_MAD_BYTES);
		cr_expect_eq(stats(&B).others, others + 2);
		cr_expect_eq(stats(&B).unknown_id, unknown);
		cr_expect_eq(stats(&A).rx_by_attr[ROCE_CM_DREP - ROCE_CM_REQ], dreps);
		cr_expect_eq(stats(&A).rx_by_attr[ROCE_CM_REJ - ROCE_CM_REQ], rejs);
		mad_of(mad, ROCE_CM_DREQ, 5, 3u << 28 | 0x55);
		send_raw(q, mad, ROCE_MAD_BYTES);
		cr_expect_eq(stats(&B).others, others + 2);
		cr_expect_eq(stats(&B).unknown_id, unknown + 1);
		cr_expect_eq(stats(&A).rx_by_attr[ROCE_CM_DREP - ROCE_CM_REQ], dreps + 1);
		mwp_destroy_qp(q);
	}
}
