/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_CONCURRENCY_BODY_H
#define MWP_TEST_CONCURRENCY_BODY_H

/*
 * The revocation guarantee under concurrency, shared by the Criterion test
 * (normal and ASan builds) and the plain TSan harness: one thread binds,
 * rebinds and invalidates windows in a loop (Type 2: bind + LOCAL_INV;
 * Type 1: bind, rebind, zero-length bind) while another resolves keys in
 * bursts without locks.  Once a key's invalidating completion has been
 * seen, the reader must never resolve it again.  Keys are never reissued
 * (each window runs through its 256 key bytes once), so a dead key stays
 * dead.  And a reader that holds a key's descriptor (between its lookup and
 * its next quiescent report) must never be holding it when the
 * invalidation's completion appears: that is what the grace period buys.
 */

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "verbs_fixture.h"

#define WINDOWS 8
#define READER_ID 1

static uint32_t dead[WINDOWS * 256 * 2];
static uint32_t dead_n;			/* published with release */
static uint32_t live_key;		/* a key the reader may also try */
static bool stop, ready;
static uint32_t held;			/* key whose descriptor the reader holds */
static uint32_t want_hold;		/* writer: hold this key */
static uint32_t inv_posted;		/* writer: its invalidation is posted */
static uint64_t violations, held_violations, lookups, live_hits, passes;

static void *
reader(void *arg)
{
	const struct mwp_key_table *t = mwp_device_keys(ctx);

	RTE_SET_USED(arg);
	mwp_reader_register(ctx, READER_ID);
	__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		uint32_t n = __atomic_load_n(&dead_n, __ATOMIC_ACQUIRE);
		uint32_t k = __atomic_load_n(&live_key, __ATOMIC_RELAXED);
		const struct mwp_binding *out[32];
		/* the 64 newest dead keys, and 64 older ones in rotation */
		uint32_t starts[2] = { n > 64 ? n - 64 : 0,
				       n > 128 ? (uint32_t)(passes * 64 % (n - 64)) : 0 };

		for (int s = 0; s < 2; s++)
			for (uint32_t base = starts[s]; base < RTE_MIN(starts[s] + 64, n);
			     base += 32) {
				uint32_t m = RTE_MIN(32u, n - base);

				if (mwp_keys_lookup_burst(t, &dead[base], m, out) != 0)
					violations++;
				lookups += m;
			}
		/* a live key: hold its descriptor for a while, then let go */
		if (k != 0 && mwp_keys_lookup_burst(t, &k, 1, out) == 1) {
			for (int spin = 0; spin < 50; spin++)
				if (out[0]->rkey != k || out[0]->length == 0)
					violations++;
		}
		/* asked to: hold the key across its invalidation being posted
		 * and executed, reading the descriptor all along (ASan sees a
		 * premature free) */
		k = __atomic_load_n(&want_hold, __ATOMIC_ACQUIRE);
		if (k != 0 && mwp_keys_lookup_burst(t, &k, 1, out) == 1) {
			__atomic_store_n(&held, k, __ATOMIC_RELEASE);
			while (__atomic_load_n(&inv_posted, __ATOMIC_ACQUIRE) != k)
				if (out[0]->rkey != k)
					violations++;
			for (int spin = 0; spin < 20000; spin++)
				if (out[0]->rkey != k || out[0]->length == 0)
					violations++;
			live_hits++;
			__atomic_compare_exchange_n(&want_hold, &k, 0, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			__atomic_store_n(&held, 0, __ATOMIC_RELEASE);
		}
		passes++;
		mwp_reader_quiescent(ctx, READER_ID);
	}
	mwp_reader_unregister(ctx, READER_ID);
	return NULL;
}

static void
wait_wc(uint64_t wr_id)
{
	struct ibv_wc wc;

	for (;;) {
		mwp_poll(ctx);
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			break;
	}
	FIX_ASSERT(wc.wr_id == wr_id);
	FIX_ASSERT(wc.status == IBV_WC_SUCCESS);
}

static void
died(uint32_t key)
{
	uint32_t n = dead_n;

	if (__atomic_load_n(&held, __ATOMIC_ACQUIRE) == key)
		held_violations++;
	dead[n] = key;
	__atomic_store_n(&dead_n, n + 1, __ATOMIC_RELEASE);
}

/* The EAL pinned this thread to lcore 0's CPU, and a new thread inherits
 * that: let both run anywhere, or the writer waits a scheduler quantum for
 * every quiescent report. */
static void
unpin(pthread_t t)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	pthread_setaffinity_np(t, sizeof(all), &all);
}

/* The whole scenario; fatal set-up failures abort via FIX_ASSERT. */
static void
run_concurrency(void)
{
	struct ibv_mw *w2[WINDOWS], *w1[WINDOWS];
	pthread_t th;
	uint64_t id = 0;

	for (int i = 0; i < WINDOWS; i++) {
		w2[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		w1[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	}
	unpin(pthread_self());
	FIX_ASSERT(pthread_create(&th, NULL, reader, NULL) == 0);
	unpin(th);
	/* From here every invalidation waits for the reader's reports. */
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < WINDOWS; i++) {
		uint32_t base2 = w2[i]->rkey & ~0xffu;
		uint8_t b0 = w2[i]->rkey & 0xff;

		for (int b = 0; b < 256; b++) {
			uint32_t key = base2 | (uint8_t)(b0 + b);
			uint64_t off = (uint64_t)(b % 64) * 64;

			FIX_ASSERT(post_bind2(qp, w2[i], mr, (uintptr_t)buf + off, 64,
						IBV_ACCESS_REMOTE_READ, (uint8_t)(b0 + b), ++id) == 0);
			wait_wc(id);
			__atomic_store_n(&live_key, key, __ATOMIC_RELAXED);
			if (b % 8 == 0) {
				__atomic_store_n(&want_hold, key, __ATOMIC_RELEASE);
				while (__atomic_load_n(&held, __ATOMIC_ACQUIRE) != key)
					sched_yield();
			}
			FIX_ASSERT(post_local_inv(qp, key, ++id, true) == 0);
			if (b % 8 == 0)
				__atomic_store_n(&inv_posted, key, __ATOMIC_RELEASE);
			wait_wc(id);
			died(key);
		}
		/* Type 1: bind, then rebind 254 times, then unbind: each
		 * completion kills the previous key */
		FIX_ASSERT(bind1(qp, w1[i], mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ, ++id) == 0);
		wait_wc(id);
		for (int b = 0; b < 254; b++) {
			uint32_t old = w1[i]->rkey;

			if (b == 253)
				FIX_ASSERT(bind1(qp, w1[i], NULL, 0, 0, 0, ++id) == 0);
			else
				FIX_ASSERT(bind1(qp, w1[i], mr, (uintptr_t)buf + (uint64_t)b * 8,
						   64, IBV_ACCESS_REMOTE_READ, ++id) == 0);
			__atomic_store_n(&live_key, w1[i]->rkey, __ATOMIC_RELAXED);
			wait_wc(id);
			died(old);
		}
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
}

#endif
