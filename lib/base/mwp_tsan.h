/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TSAN_H
#define MWP_TSAN_H

/**
 * @file
 * ThreadSanitizer annotations for hand-overs TSan cannot see.
 *
 * DPDK 22.11 on x86 orders its rings with compiler barriers and plain
 * loads and stores (rte_ring_generic_pvt.h: x86 is TSO), and rte_hash
 * and the mempool drivers are uninstrumented libraries.  TSan therefore
 * sees no happens-before edge between the thread that puts an object
 * into a ring and the one that takes it out, and reports every frame,
 * work request or completion handed between threads as a race.
 *
 * Each hand-over names the ring (or table) it goes through:
 * MWP_TSAN_RELEASE(ring) before the enqueue, MWP_TSAN_ACQUIRE(ring)
 * after a dequeue that returned something.  That is exactly the ordering
 * the ring gives on x86, so a TSan build then checks our own code.  The
 * ring's internal head/tail accesses are suppressed by name in
 * test/unit/tsan.supp.  Outside TSan builds both expand to nothing.
 */

#if defined(__SANITIZE_THREAD__)
#define MWP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MWP_TSAN 1
#endif
#endif

#ifdef MWP_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define MWP_TSAN_RELEASE(p) __tsan_release((void *)(uintptr_t)(p))
#define MWP_TSAN_ACQUIRE(p) __tsan_acquire((void *)(uintptr_t)(p))
#else
#define MWP_TSAN_RELEASE(p) do { } while (0)
#define MWP_TSAN_ACQUIRE(p) do { } while (0)
#endif

#endif /* MWP_TSAN_H */
