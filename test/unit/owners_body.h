/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_OWNERS_BODY_H
#define MWP_TEST_OWNERS_BODY_H

/*
 * The revocation guarantee with two polling lcores, shared by the
 * Criterion test (normal and ASan builds) and the plain TSan program.
 *
 * One port with two queues, each polled by its own thread running its own
 * engine, as mwp_lcore_main does.  One UC QP; its owner is the engine of
 * queue QPN % 2.  Both pollers make 64-bit RDMA WRITE ONLY requests to
 * that QP, each request to an 8-byte slot of its own in one region, so
 * that the region's bytes say afterwards which requests were executed
 * (a burst from each poller whenever a key is born or dies).
 * The QP's frames thus arrive on both queues: the non-owner hands its
 * share over, counted.  Meanwhile the control thread binds a Type 2
 * window over the whole region on the QP (the owner executes the bind),
 * waits for its completion, publishes the key, lets the pollers use it
 * for a while, posts LOCAL_INV, waits for that completion (which comes
 * only after both pollers reported quiescent states), and only then adds
 * the key to the dead list -- ROUNDS times, each with a key never used
 * before (window index x key byte).
 *
 * A poller picks, for each request, the live key or one from the dead
 * list.  A request whose key was on the dead list when it was made must
 * never be executed, whichever lcore takes it and however late: its slot
 * must stay zero.  UC is used because a refused RC request would NAK and
 * stop the QP (IBA 9.9.3); on UC a refused request is dropped silently,
 * and the next WRITE ONLY starts afresh whatever its PSN (9.7.5.1.2).
 */

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "mwp_engine.h"
#include "mwp_port.h"
#include "roce_build.h"
#include "tsan_mempool.h"
#include "verbs_fixture.h"

#define OW_VA		UINT64_C(0x40000000)
#define OW_BURST	8

static struct {
	uint64_t region;		/* bytes: 8 per request slot */
	uint32_t slots;
	uint32_t round;			/* bumped at each key birth and death */
	struct ibv_mr *mr;
	struct ibv_qp *uc;
	uint8_t *mem;
	uint8_t *dead_at_send;		/* per slot: its key was dead */
	struct rte_mempool *mp;
	struct mwp_port *port;
	struct mwp_engine *eng[2];
	struct mwp_queue *q[2];
	struct mwp_stats st[2];
	uint32_t live_key;		/* 0: none */
	uint32_t *dead;			/* keys whose LOCAL_INV completed */
	uint32_t dead_n;		/* published with release */
	uint32_t next_slot;		/* shared by the pollers */
	bool stop;
	uint64_t sent[2], sent_dead[2], passes[2];
	uint64_t handed[2];
	unsigned int ready;
} ow;

/* A WRITE ONLY of the slot's tag (slot + 1) to the slot, with key. */
static struct rte_mbuf *
ow_request(uint32_t slot, uint32_t key)
{
	struct mwp_flow fl = { .sport = 0xd000 };
	struct mwp_hdrs h = { .opcode = ROCE_OP_UC_RDMA_WRITE_ONLY,
			      .dqpn = ow.uc->qp_num, .psn = slot & 0xffffff };
	struct rte_mbuf *m = rte_pktmbuf_alloc(ow.mp);
	uint64_t tag = (uint64_t)slot + 1;
	uint8_t payload[8];

	if (m == NULL)
		return NULL;
	memcpy(payload, &tag, 8);
	rte_ether_unformat_addr("02:00:00:00:00:02", &fl.smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &fl.dmac);
	inet_pton(AF_INET, "192.0.2.2", &fl.sip4);
	inet_pton(AF_INET, "192.0.2.1", &fl.dip4);
	h.reth.va = OW_VA + (uint64_t)slot * 8;
	h.reth.rkey = key;
	h.reth.dmalen = 8;
	if (mwp_build(m, &fl, &h, payload, 8, NULL) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static void *
ow_poller(void *arg)
{
	const unsigned int t = (unsigned int)(uintptr_t)arg;
	struct mwp_queue *q = ow.q[t];
	struct rte_mbuf *tx[64], *rx[OW_BURST];
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (t + 1);
	uint32_t seen = 0;

	FIX_ASSERT(mwp_reader_register(ctx, t + 1) == 0);
	mwp_engine_start(ow.eng[t]);
	__atomic_fetch_add(&ow.ready, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&ow.stop, __ATOMIC_ACQUIRE)) {
		uint16_t n = 0, k;

		unsigned int work = mwp_engine_run(ow.eng[t], rte_rdtsc());

		k = mwp_queue_tx(q, tx, 64);
		rte_pktmbuf_free_bulk(tx, k);
		/* a burst of requests each time a key is born or dies */
		if (__atomic_load_n(&ow.round, __ATOMIC_ACQUIRE) == seen) {
			/* three threads on two CPUs here: give way when idle */
			if (work + k == 0)
				sched_yield();
			goto quiescent;
		}
		seen = __atomic_load_n(&ow.round, __ATOMIC_ACQUIRE);
		while (n < OW_BURST) {
			uint32_t nd = __atomic_load_n(&ow.dead_n, __ATOMIC_ACQUIRE);
			uint32_t live = __atomic_load_n(&ow.live_key, __ATOMIC_ACQUIRE);
			uint32_t key, slot;
			bool dead;

			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			/* half the requests with a dead key (the newest most) */
			dead = nd != 0 && ((rnd & 1) || live == 0);
			if (!dead && live == 0)
				break;
			key = dead ? ow.dead[nd - 1 - (uint32_t)((rnd >> 8) % RTE_MIN(nd, 64u))] :
			      live;
			slot = __atomic_fetch_add(&ow.next_slot, 1, __ATOMIC_RELAXED);
			if (slot >= ow.slots)
				break;
			ow.dead_at_send[slot] = dead;
			rx[n] = ow_request(slot, key);
			if (rx[n] == NULL)
				abort();	/* not FIX_ASSERT: per request */
			n++;
			ow.sent[t]++;
			ow.sent_dead[t] += dead;
		}
		if (n != 0) {
			k = mwp_queue_rx(q, rx, n, tx, 64);
			rte_pktmbuf_free_bulk(tx, k);
		}
quiescent:
		ow.passes[t]++;
		mwp_reader_quiescent(ctx, t + 1);
	}
	/* what is still handed over or owed */
	for (int i = 0; i < 100; i++) {
		uint16_t k = mwp_queue_tx(q, tx, 64);

		rte_pktmbuf_free_bulk(tx, k);
		mwp_reader_quiescent(ctx, t + 1);
	}
	mwp_engine_stop(ow.eng[t]);
	mwp_reader_unregister(ctx, t + 1);
	return NULL;
}

/* Set up for rounds rounds: a slot for each request they can make (two
 * bursts of OW_BURST from each poller per round). */
static void
ow_setup(uint32_t rounds)
{
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true, .nb_queues = 2 };

	verbs_setup();
	memset(&ow, 0, sizeof(ow));
	ow.slots = rounds * 4 * OW_BURST + 1024;
	ow.region = (uint64_t)ow.slots * 8;
	ow.mem = aligned_alloc(4096, RTE_ALIGN_CEIL(ow.region, 4096));
	ow.dead_at_send = calloc(ow.slots, 1);
	ow.dead = calloc(rounds, sizeof(*ow.dead));
	FIX_ASSERT(ow.mem != NULL && ow.dead_at_send != NULL && ow.dead != NULL);
	memset(ow.mem, 0, ow.region);
	ow.mr = mwp_reg_mr_iova(pd, ow.mem, ow.region, OW_VA, ALL_ACCESS);
	ow.uc = make_qp(pd, IBV_QPT_UC, 256, true);
	FIX_ASSERT(ow.mr != NULL && ow.uc != NULL);
	ow.mp = test_pktmbuf_pool("ow_mp", 4095, 128);
	FIX_ASSERT(ow.mp != NULL);
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	ow.port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	FIX_ASSERT(ow.port != NULL);
	mwp_port_set_mempool(ow.port, ow.mp);
	for (int t = 0; t < 2; t++) {
		ow.eng[t] = mwp_engine_create((unsigned int)t + 10, SOCKET_ID_ANY);
		FIX_ASSERT(ow.eng[t] != NULL);
		ow.q[t] = mwp_queue_create(ow.eng[t], ow.port, (uint16_t)t, &ow.st[t]);
		FIX_ASSERT(ow.q[t] != NULL);
	}
	FIX_ASSERT(mwp_port_attach_qp(ow.port, ow.uc) == 0);
}

static void
ow_teardown(void)
{
	mwp_close_device(ctx);
	for (int t = 0; t < 2; t++) {
		mwp_queue_free(ow.q[t]);
		mwp_engine_free(ow.eng[t]);
	}
	mwp_port_free(ow.port);
	rte_mempool_free(ow.mp);
	free(ow.mem);
	free(ow.dead_at_send);
	free(ow.dead);
	free(buf);
	free(buf2);
}

/* The EAL pinned this thread to one CPU and new threads inherit that: let
 * every thread run anywhere, or the three of them share one CPU and every
 * hand-over between them waits for a scheduler quantum. */
static void
ow_unpin(pthread_t t)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	pthread_setaffinity_np(t, sizeof(all), &all);
}

/* The next completion; the engines run the QP, so no mwp_poll. */
static void
ow_wait(uint64_t wr_id)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(cq, 1, &wc) != 1)
		sched_yield();
	if (wc.wr_id != wr_id || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "owners: completion %lu: wr_id %lu status %d\n",
			(unsigned long)wr_id, (unsigned long)wc.wr_id, (int)wc.status);
		abort();
	}
}

/* The scenario: rounds bind/use/invalidate rounds.  Returns the number of
 * requests made with a dead key that were executed (must be 0). */
static uint64_t
ow_run(uint32_t rounds)
{
	const uint32_t nw = (rounds + 255) / 256;
	struct ibv_mw **w = calloc(nw, sizeof(*w));
	pthread_t th[2];
	uint64_t id = 0, violations = 0;
	uint32_t done = 0;

	FIX_ASSERT(w != NULL);
	for (uint32_t i = 0; i < nw; i++) {
		w[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		FIX_ASSERT(w[i] != NULL);
	}
	ow_unpin(pthread_self());
	for (uintptr_t t = 0; t < 2; t++) {
		FIX_ASSERT(pthread_create(&th[t], NULL, ow_poller, (void *)t) == 0);
		ow_unpin(th[t]);
	}
	while (__atomic_load_n(&ow.ready, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
	for (uint32_t i = 0; i < nw && done < rounds; i++) {
		const uint32_t base = w[i]->rkey & ~0xffu;
		const uint8_t b0 = (uint8_t)w[i]->rkey;

		for (int b = 0; b < 256 && done < rounds; b++, done++) {
			const uint8_t kb = (uint8_t)(b0 + b);
			const uint32_t key = base | kb;

			if (post_bind2(ow.uc, w[i], ow.mr, OW_VA, ow.region,
				       IBV_ACCESS_REMOTE_WRITE, kb, ++id) != 0)
				abort();
			ow_wait(id);
			__atomic_store_n(&ow.live_key, key, __ATOMIC_RELEASE);
			__atomic_fetch_add(&ow.round, 1, __ATOMIC_RELEASE);
			/* let the pollers use it a little */
			for (int s = 0; s < 4; s++)
				sched_yield();
			if (post_local_inv(ow.uc, key, ++id, true) != 0)
				abort();
			ow_wait(id);
			/* the completion is in: from now on the key is dead */
			__atomic_store_n(&ow.live_key, 0, __ATOMIC_RELEASE);
			ow.dead[ow.dead_n] = key;
			__atomic_store_n(&ow.dead_n, ow.dead_n + 1, __ATOMIC_RELEASE);
			__atomic_fetch_add(&ow.round, 1, __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&ow.stop, true, __ATOMIC_RELEASE);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < 2; t++) {
		uint64_t in;

		mwp_queue_handoffs(ow.q[t], &ow.handed[t], &in);
	}
	/* the region's slots: a tag where a request was executed */
	for (uint32_t s = 0; s < RTE_MIN(ow.next_slot, ow.slots); s++) {
		uint64_t v;

		memcpy(&v, ow.mem + (uint64_t)s * 8, 8);
		if (v != 0 && v != (uint64_t)s + 1)
			violations++;		/* written by someone else */
		else if (v != 0 && ow.dead_at_send[s])
			violations++;		/* a dead key was granted */
	}
	free(w);
	return violations;
}

/* Requests executed (their slot holds their tag). */
static uint64_t
ow_executed(void)
{
	uint64_t n = 0;

	for (uint32_t s = 0; s < RTE_MIN(ow.next_slot, ow.slots); s++) {
		uint64_t v;

		memcpy(&v, ow.mem + (uint64_t)s * 8, 8);
		n += v == (uint64_t)s + 1;
	}
	return n;
}

#endif
