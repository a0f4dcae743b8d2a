/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement (lib/base/mwp_place.h): a payload lands whole, nothing
 * around it changes, and every byte of it is stored once -- a program
 * that changes what it sees of a placement finds its change kept.
 *
 * The program here is a SIGSEGV handler.  The destination straddles two
 * pages and the second is read-only, so the first store into it stops
 * the copy; the handler changes every byte already placed in the first
 * page (as rsockets moves on a grant its peer wrote), makes the page
 * writable, and the copy goes on.  A store that comes back to the first
 * page afterwards puts a byte back over the change.  A copy with
 * overlapping moves (rte_memcpy's, glibc's) is caught that way.
 */
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_memcpy.h>

#include "mwp_place.h"

/* Bytes just before the page boundary the handler leaves alone off x86:
 * there a store that crosses into the read-only page may have written
 * its first part before it faulted (an emulator splits wide stores), and
 * it is rightly stored again when the copy resumes.  On x86 a faulting
 * store writes nothing. */
#ifdef RTE_ARCH_X86
#define UNSURE 0
#else
#define UNSURE 64
#endif

typedef void (*copy_fn)(void *, const void *, uint32_t);

static uint8_t *area;		/* two pages */
static size_t page;
static uint8_t src[3 * 4096 + 64];
static volatile uint8_t *w_dst;	/* what the handler looks at */
static volatile uint32_t w_len, w_before, w_faults;
static uint8_t changed[3 * 4096];	/* the bytes the handler changed */

static uint8_t
mark(uint32_t i)
{
	return (uint8_t)(src[i] ^ 0x5a);
}

static void
on_fault(int sig, siginfo_t *si, void *uc)
{
	RTE_SET_USED(sig);
	RTE_SET_USED(uc);
	if ((uint8_t *)si->si_addr < area + page || (uint8_t *)si->si_addr >= area + 2 * page ||
	    w_faults++ != 0)
		abort();	/* not the fault this test makes */
	for (uint32_t i = 0; i + UNSURE < w_before && i < w_len; i++)
		if (w_dst[i] == src[i]) {
			w_dst[i] = mark(i);
			changed[i] = 1;
		}
	mprotect(area + page, page, PROT_READ | PROT_WRITE);
}

static void
setup(void)
{
	struct sigaction sa;

	page = (size_t)sysconf(_SC_PAGESIZE);
	cr_assert(page <= 4096 * 4);
	area = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(area != MAP_FAILED);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
}

TestSuite(place, .init = setup);

/*
 * Copy len bytes of src to the destination that ends its first page
 * `before` bytes into the payload (before == len: all in the first page,
 * no fault).  0: the payload whole, the bytes around it untouched, and
 * every change the handler made kept.  Else what went wrong, in why (the
 * checks are plain: a Criterion assertion a byte would keep millions).
 */
static int
watched(copy_fn copy, uint32_t len, uint32_t before, char *why, size_t size)
{
	uint8_t *dst = area + page - before;

	mprotect(area, 2 * page, PROT_READ | PROT_WRITE);
	memset(area, 0xee, 2 * page);
	memset(changed, 0, len);
	for (uint32_t i = 0; i < len; i++)
		dst[i] = (uint8_t)~src[i];
	if (before < len)
		mprotect(area + page, page, PROT_READ);
	w_dst = dst;
	w_len = len;
	w_before = before;
	w_faults = 0;
	copy(dst, src, len);
	mprotect(area + page, page, PROT_READ | PROT_WRITE);
	if (w_faults != (before < len ? 1u : 0u)) {
		snprintf(why, size, "len %u before %u: %u faults", len, before, w_faults);
		return -1;
	}
	for (uint8_t *p = area; p < area + 2 * page; p++)
		if ((p < dst || p >= dst + len) && *p != 0xee) {
			snprintf(why, size, "len %u before %u: byte %td outside the payload", len,
				 before, p - dst);
			return -1;
		}
	for (uint32_t i = 0; i < len; i++) {
		if (changed[i] && dst[i] != mark(i)) {
			snprintf(why, size, "len %u before %u: byte %u stored again", len, before, i);
			return -(int)i - 2;
		}
		if (!changed[i] && dst[i] != src[i]) {
			snprintf(why, size, "len %u before %u: byte %u not placed", len, before, i);
			return -1;
		}
	}
	return 0;
}

static void
place(void *dst, const void *s, uint32_t len)
{
	mwp_place(dst, s, len);
}

Test(place, every_length_to_300_lands_whole_and_once_wherever_the_page_ends)
{
	char why[128] = "";
	int bad = 0;

	for (uint32_t len = 1; len <= 300 && bad == 0; len++)
		for (uint32_t before = 1; before <= len && bad == 0; before++)
			bad = watched(place, len, before, why, sizeof(why));
	cr_assert_eq(bad, 0, "%s", why);
}

Test(place, long_payloads_and_every_source_alignment)
{
	static const uint32_t lens[] = { 511, 512, 1024, 1500, 4096, 5000 };
	char why[128] = "";
	int bad = 0;

	for (unsigned int k = 0; k < RTE_DIM(lens) && bad == 0; k++) {
		const uint32_t len = RTE_MIN(lens[k], (uint32_t)(2 * page - 64));
		/* the payload inside the two pages */
		const uint32_t first = len > page ? len - (uint32_t)page : 1;

		for (uint32_t before = first; before <= len && before <= page && bad == 0;
		     before += before < first + 80 ? 1 : 37)
			bad = watched(place, len, before, why, sizeof(why));
	}
	cr_assert_eq(bad, 0, "%s", why);
	/* the source at every offset from a 64-byte boundary, the
	 * destination at several (src[] is aligned as the compiler put it:
	 * offsets from where it starts) */
	for (uint32_t so = 0; so < 64; so++)
		for (uint32_t dO = 0; dO < 40; dO += 13)
			for (uint32_t len = 0; len <= 700; len += len < 70 ? 1 : 61) {
				uint8_t *dst = area + 64 + dO;

				memset(area, 0xee, 2 * page);
				mwp_place(dst, src + so, len);
				if (memcmp(dst, src + so, len) != 0 || dst[-1] != 0xee ||
				    dst[len] != 0xee)
					cr_assert_fail("src +%u dst +%u len %u", so, dO, len);
			}
}

/* A copy that stores a byte twice: ascending 16-byte moves, then the
 * first 16 bytes once more (as a copy that writes a header last would;
 * rte_memcpy's and glibc's come back over bytes at one end or the other
 * the same way). */
static void
twice(void *dst, const void *s, uint32_t len)
{
	uint32_t i;

	/* (the barriers keep the compiler from making the loop a call of
	 * memcpy and from dropping the last move as storing what is there:
	 * GCC did both for arm64, and the test saw no fault) */
	for (i = 0; i + 16 <= len; i += 16) {
		rte_mov16((uint8_t *)dst + i, (const uint8_t *)s + i);
		rte_compiler_barrier();
	}
	for (; i < len; i++) {
		((uint8_t *)dst)[i] = ((const uint8_t *)s)[i];
		rte_compiler_barrier();
	}
	rte_mov16(dst, s);
}

Test(place, the_watcher_catches_a_copy_that_stores_a_byte_twice)
{
	char why[128] = "";

	/* 200 bytes, the page ending 150 in: the handler changes bytes 0 to
	 * 149 (86 off x86), and the last move puts bytes 0..15 back */
	cr_assert_eq(watched(twice, 200, 150, why, sizeof(why)), -2,
		     "a first byte stored twice went unseen: %s", why);
}
