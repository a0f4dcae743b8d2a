/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One shared receive queue, two polling lcores (issue 37): a port with two
 * queues, each polled by its own thread running its own engine, as
 * mwp_lcore_main does; two UD QPs on one SRQ, one owned by each engine;
 * each poller feeds UD SENDs to its own QP, a burst whenever the SRQ
 * holds receives for both, while the main thread posts receives to the
 * SRQ and reaps their completions.  The two lcores take from the SRQ at
 * once.
 *
 * Afterwards: no receive completed twice, none lost (completed, or still
 * posted), every message received once, into the buffer its completion
 * names, from the QP the completion names; every frame sent either
 * received or dropped for want of a receive (ud_no_recv).  A plain
 * program (exit 0 if all holds), run by meson's unit suite and, under
 * ThreadSanitizer, by test/run-all.sh.
 *
 *   srq_lcores [FRAMES_PER_LCORE]
 */
#define MWP_NO_CRITERION
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "mwp_engine.h"
#include "mwp_port.h"
#include "mwp_srq.h"
#include "roce_build.h"
#include "tsan_mempool.h"
#include "verbs_fixture.h"

#define QKEY		0x5eed
#define SLOT		64u		/* GRH area 40 + payload 8, and room */
#define BURST		8
#define SRQ_WR		512u

static struct {
	struct rte_mempool *mp;
	struct mwp_port *port;
	struct mwp_engine *eng[2];
	struct mwp_queue *q[2];
	struct mwp_stats st[2];
	struct ibv_cq *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *ud[2];		/* ud[t]: the QP engine t owns */
	struct ibv_mr *mr;
	uint8_t *mem;
	uint32_t frames;		/* per lcore */
	uint64_t sent[2];
	unsigned int done;
} s;

/* A UD SEND_ONLY to q whose payload names it and seq. */
static struct rte_mbuf *
ud_send(const struct ibv_qp *q, uint32_t seq)
{
	struct mwp_flow fl = { .sport = 0xd000 };
	struct mwp_hdrs h = { .opcode = ROCE_OP_UD_SEND_ONLY, .dqpn = q->qp_num,
			      .deth = { .qkey = QKEY, .sqpn = 0x99 } };
	struct rte_mbuf *m = rte_pktmbuf_alloc(s.mp);
	uint32_t payload[2] = { q->qp_num, seq };

	if (m == NULL)
		return NULL;
	rte_ether_unformat_addr("02:00:00:00:00:02", &fl.smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &fl.dmac);
	inet_pton(AF_INET, "192.0.2.2", &fl.sip4);
	inet_pton(AF_INET, "192.0.2.1", &fl.dip4);
	if (mwp_build(m, &fl, &h, payload, sizeof(payload), NULL) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static void *
poller(void *arg)
{
	const unsigned int t = (unsigned int)(uintptr_t)arg;
	struct rte_mbuf *tx[64], *rx[BURST];
	uint32_t seq = 0;

	FIX_ASSERT(mwp_reader_register(ctx, t + 1) == 0);
	mwp_engine_start(s.eng[t]);
	while (seq < s.frames) {
		uint16_t n = 0, k;

		/* paced by the poster: a burst when the SRQ holds one for
		 * each lcore (the two still race for them) */
		if (rte_ring_count(to_msrq(s.srq)->ring) < 2 * BURST) {
			mwp_engine_run(s.eng[t], rte_rdtsc());
			mwp_reader_quiescent(ctx, t + 1);
			sched_yield();
			continue;
		}
		while (n < BURST && seq < s.frames) {
			rx[n] = ud_send(s.ud[t], seq++);
			if (rx[n] == NULL)
				abort();
			n++;
		}
		s.sent[t] += n;
		k = mwp_queue_rx(s.q[t], rx, n, tx, 64);
		rte_pktmbuf_free_bulk(tx, k);
		mwp_engine_run(s.eng[t], rte_rdtsc());
		mwp_reader_quiescent(ctx, t + 1);
	}
	mwp_engine_stop(s.eng[t]);
	mwp_reader_unregister(ctx, t + 1);
	__atomic_fetch_add(&s.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
setup(uint32_t frames)
{
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true, .nb_queues = 2 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_WR, .max_sge = 1 } };
	const size_t len = ((size_t)2 * frames + 4 * BURST) * SLOT;

	verbs_setup();
	memset(&s, 0, sizeof(s));
	s.frames = frames;
	s.mem = aligned_alloc(4096, RTE_ALIGN_CEIL(len, 4096));
	FIX_ASSERT(s.mem != NULL);
	memset(s.mem, 0xee, len);
	s.mr = mwp_reg_mr(pd, s.mem, len, IBV_ACCESS_LOCAL_WRITE);
	s.rcq = mwp_create_cq(ctx, 2 * (int)frames + 4 * BURST);
	s.srq = mwp_create_srq(pd, &sa);
	FIX_ASSERT(s.mr != NULL && s.rcq != NULL && s.srq != NULL);
	s.mp = test_pktmbuf_pool("srq_mp", 4095, 128);
	FIX_ASSERT(s.mp != NULL);
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	s.port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	FIX_ASSERT(s.port != NULL);
	mwp_port_set_mempool(s.port, s.mp);
	for (int t = 0; t < 2; t++) {
		s.eng[t] = mwp_engine_create((unsigned int)t + 10, SOCKET_ID_ANY);
		FIX_ASSERT(s.eng[t] != NULL);
		s.q[t] = mwp_queue_create(s.eng[t], s.port, (uint16_t)t, &s.st[t]);
		FIX_ASSERT(s.q[t] != NULL);
	}
	/* sequential QPNs: two in a row are owned by the two queues (QPN
	 * % 2); ud[t] is the one queue t owns */
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = s.rcq, .qp_type = IBV_QPT_UD, .srq = s.srq,
			.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		};
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
		struct ibv_qp *q = mwp_create_qp(pd, &ia);

		FIX_ASSERT(q != NULL);
		FIX_ASSERT(mwp_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_QKEY) == 0);
		a.qp_state = IBV_QPS_RTR;
		FIX_ASSERT(mwp_modify_qp(q, &a, IBV_QP_STATE) == 0);
		FIX_ASSERT(mwp_port_attach_qp(s.port, q) == 0);
		s.ud[q->qp_num % 2] = q;
	}
	FIX_ASSERT(s.ud[0] != NULL && s.ud[1] != NULL);
}

/* The EAL pinned this thread to one CPU and new threads inherit that: let
 * every thread run anywhere, or the lcores never take at once. */
static void
unpin(pthread_t t)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	pthread_setaffinity_np(t, sizeof(all), &all);
}

/* Post one receive of slot i to the SRQ: 0, or ENOMEM while it is full. */
static int
post(uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s.mem + (uint64_t)i * SLOT, .length = SLOT,
			       .lkey = s.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(s.srq, &wr, &bad);
}

int
main(int argc, char **argv)
{
	const uint32_t frames = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 20000;
	/* a receive for every frame, and the bursts' worth the pacing
	 * leaves posted at the end */
	const uint32_t slots = 2 * frames + 4 * BURST;
	uint8_t *wc_seen, *msg_seen;
	uint64_t completed = 0, no_recv, bad = 0;
	uint32_t posted = 0;
	pthread_t th[2];
	struct ibv_wc wc[64];
	bool ok;

	setup(frames);
	wc_seen = calloc(slots, 1);
	msg_seen = calloc(2 * frames, 1);
	FIX_ASSERT(wc_seen != NULL && msg_seen != NULL);
	unpin(pthread_self());
	for (int t = 0; t < 2; t++) {
		FIX_ASSERT(pthread_create(&th[t], NULL, poller, (void *)(uintptr_t)t) == 0);
		unpin(th[t]);
	}
	/* post while the lcores take; reap what they complete */
	for (;;) {
		const bool last = __atomic_load_n(&s.done, __ATOMIC_ACQUIRE) == 2;
		int n;

		while (posted < slots && post(posted) == 0)
			posted++;
		while ((n = ibv_poll_cq(s.rcq, (int)RTE_DIM(wc), wc)) > 0) {
			for (int i = 0; i < n; i++) {
				const uint32_t slot = (uint32_t)wc[i].wr_id;
				uint32_t payload[2];
				int t;

				if (wc[i].status != IBV_WC_SUCCESS || slot >= posted ||
				    wc_seen[slot]++ != 0 || wc[i].byte_len != 48) {
					bad++;
					continue;
				}
				memcpy(payload, s.mem + (uint64_t)slot * SLOT + 40, sizeof(payload));
				t = payload[0] == s.ud[0]->qp_num ? 0 :
				    payload[0] == s.ud[1]->qp_num ? 1 : -1;
				if (t < 0 || payload[0] != wc[i].qp_num || payload[1] >= frames ||
				    msg_seen[(uint32_t)t * frames + payload[1]]++ != 0)
					bad++;
				completed++;
			}
		}
		if (last)
			break;
		sched_yield();
	}
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	no_recv = s.st[0].drop[MWP_DROP_UD_NO_RECV] + s.st[1].drop[MWP_DROP_UD_NO_RECV];
	ok = bad == 0 && completed + no_recv == s.sent[0] + s.sent[1] &&
	     completed + rte_ring_count(to_msrq(s.srq)->ring) == posted &&
	     completed > frames;
	printf("srq_lcores: %lu + %lu UD SENDs on two lcores, %u receives posted to one SRQ, "
	       "%lu received, %lu without a receive, %lu wrong\n",
	       (unsigned long)s.sent[0], (unsigned long)s.sent[1], posted,
	       (unsigned long)completed, (unsigned long)no_recv, (unsigned long)bad);
	mwp_close_device(ctx);
	for (int t = 0; t < 2; t++) {
		mwp_queue_free(s.q[t]);
		mwp_engine_free(s.eng[t]);
	}
	mwp_port_free(s.port);
	rte_mempool_free(s.mp);
	free(s.mem);
	free(wc_seen);
	free(msg_seen);
	free(buf);
	free(buf2);
	printf("%d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
	return ok ? 0 : 1;
}
