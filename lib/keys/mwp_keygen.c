/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where keys come from: slots, indices and key bytes (mwp_keygen.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_common.h>
#include <rte_random.h>

#include "mwp_keygen.h"
#include "mwp_log.h"

/* ---- random numbers: getrandom, a buffer per thread ---- */

#define RAND_WORDS	32

static __thread uint64_t rand_buf[RAND_WORDS];
static __thread unsigned int rand_left;

/* A forked child draws its own: what is left of the buffer (the forking
 * thread's, the child's one thread) was also the parent's, and every
 * child of one parent would draw the same numbers -- the same QP
 * numbers, keys and key bytes -- until it ran out. */
static void
rand_forget(void)
{
	rand_left = 0;
}

static void
rand_at_fork(void)
{
	pthread_atfork(NULL, NULL, rand_forget);
}

static void
rand_fill(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	size_t got = 0;

	pthread_once(&once, rand_at_fork);
	while (got < sizeof(rand_buf)) {
		ssize_t r = getrandom((uint8_t *)rand_buf + got, sizeof(rand_buf) - got, 0);

		if (r > 0) {
			got += (size_t)r;
		} else if (r < 0 && errno != EINTR) {
			/* no getrandom (a very old kernel): DPDK's generator,
			 * seeded from the clock; said once */
			static bool said;

			if (!said) {
				said = true;
				MWP_LOG(WARNING, "getrandom: %s: keys from rte_rand, not a CSPRNG",
					strerror(errno));
			}
			for (unsigned int i = 0; i < RAND_WORDS; i++)
				rand_buf[i] = rte_rand();
			break;
		}
	}
	rand_left = RAND_WORDS;
}

uint64_t
mwp_rand64(void)
{
	if (rand_left == 0)
		rand_fill();
	return rand_buf[--rand_left];
}

uint32_t
mwp_rand_below(uint32_t n)
{
	/* Lemire's multiply-and-reject: no modulo bias */
	uint64_t m = (uint64_t)(uint32_t)mwp_rand64() * n;
	uint32_t low = (uint32_t)m;

	if (low < n) {
		const uint32_t t = -n % n;

		while (low < t) {
			m = (uint64_t)(uint32_t)mwp_rand64() * n;
			low = (uint32_t)m;
		}
	}
	return (uint32_t)(m >> 32);
}

/* ---- the keyed permutation of [0, domain): a 4-round Feistel network
 * on 24 bits (two 12-bit halves), walked until it lands in the domain ---- */

static inline uint32_t
round_fn(uint32_t half, uint64_t key)
{
	/* splitmix64's finaliser: every input bit reaches every output bit */
	uint64_t z = half ^ key;

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (uint32_t)(z ^ (z >> 31)) & 0xfff;
}

static uint32_t
feistel(const uint64_t *k, uint32_t x)
{
	uint32_t l = x >> 12, r = x & 0xfff;

	for (int i = 0; i < 4; i++) {
		const uint32_t t = l ^ round_fn(r, k[i]);

		l = r;
		r = t;
	}
	return (l << 12) | r;
}

static uint32_t
feistel_inv(const uint64_t *k, uint32_t x)
{
	uint32_t l = x >> 12, r = x & 0xfff;

	for (int i = 3; i >= 0; i--) {
		const uint32_t t = r ^ round_fn(l, k[i]);

		r = l;
		l = t;
	}
	return (l << 12) | r;
}

uint32_t
mwp_keygen_index(const struct mwp_keygen *g, uint32_t slot)
{
	uint32_t x = slot;

	if (g->sequential)
		return slot;
	/* cycle walking: a permutation of [0, 2^24) restricted to the
	 * domain (over half of it: two steps on average) */
	do
		x = feistel(g->round_key, x);
	while (x >= g->domain);
	return x;
}

int64_t
mwp_keygen_slot(const struct mwp_keygen *g, uint32_t index)
{
	uint32_t x = index;

	if (index >= g->domain)
		return -1;
	if (!g->sequential)
		do
			x = feistel_inv(g->round_key, x);
		while (x >= g->domain);
	return x < g->n ? (int64_t)x : -1;
}

/* ---- slots ---- */

int
mwp_keygen_init(struct mwp_keygen *g, uint32_t n, uint32_t domain, bool sequential)
{
	memset(g, 0, sizeof(*g));
	if (n == 0 || domain < n || domain > (UINT32_C(1) << 24))
		return EINVAL;
	g->sequential = sequential;
	g->n = n;
	g->domain = domain;
	g->last = malloc(n);
	if (!sequential) {
		for (int i = 0; i < 4; i++)
			g->round_key[i] = mwp_rand64();
		g->qsize = RTE_MIN(MWP_KEYGEN_QUARANTINE, n / 2);
		g->held = calloc(n, 1);
		g->fifo = calloc(RTE_MAX(g->qsize, 1u), sizeof(*g->fifo));
		if (g->held == NULL || g->fifo == NULL)
			goto fail;
	}
	if (g->last == NULL)
		goto fail;
	memset(g->last, 0xff, n);
	return 0;
fail:
	mwp_keygen_fini(g);
	return ENOMEM;
}

void
mwp_keygen_fini(struct mwp_keygen *g)
{
	free(g->last);
	free(g->held);
	free(g->fifo);
	g->last = g->held = NULL;
	g->fifo = NULL;
}

/* The oldest slot in quarantine leaves it. */
static uint32_t
release_oldest(struct mwp_keygen *g)
{
	const uint32_t s = g->fifo[g->qhead];

	g->qhead = (g->qhead + 1) % g->qsize;
	g->qcount--;
	g->held[s] = 0;
	return s;
}

int
mwp_keygen_take(struct mwp_keygen *g, void *const *tbl)
{
	uint32_t start;

	if (g->sequential) {
		for (uint32_t i = g->hint; i < g->n; i++)
			if (tbl[i] == NULL) {
				g->hint = i + 1;
				return (int)i;
			}
		g->hint = g->n;
		return -1;
	}
	/* a random start, then the first free slot out of quarantine */
	start = mwp_rand_below(g->n);
	for (uint32_t i = 0; i < g->n; i++) {
		const uint32_t s = start + i < g->n ? start + i : start + i - g->n;

		if (tbl[s] == NULL && !g->held[s])
			return (int)s;
	}
	/* every free slot is in quarantine: the one held longest */
	while (g->qcount != 0) {
		const uint32_t s = release_oldest(g);

		if (tbl[s] == NULL)
			return (int)s;
	}
	return -1;
}

void
mwp_keygen_untake(struct mwp_keygen *g, uint32_t slot)
{
	if (g->sequential)
		g->hint = RTE_MIN(g->hint, slot);
}

void
mwp_keygen_give(struct mwp_keygen *g, uint32_t slot)
{
	if (g->sequential) {
		g->hint = RTE_MIN(g->hint, slot);
		return;
	}
	if (g->qsize == 0)
		return;
	if (g->qcount == g->qsize)
		release_oldest(g);
	g->fifo[(g->qhead + g->qcount) % g->qsize] = slot;
	g->qcount++;
	g->held[slot] = 1;
}

uint8_t
mwp_keygen_key_byte(struct mwp_keygen *g, uint32_t slot)
{
	return mwp_key_byte_next(g->last[slot], g->sequential);
}

void
mwp_keygen_commit(struct mwp_keygen *g, uint32_t slot, uint8_t key_byte)
{
	g->last[slot] = key_byte;
}

uint8_t
mwp_key_byte_next(uint8_t cur, bool sequential)
{
	if (sequential)
		return (uint8_t)(cur + 1);
	return (uint8_t)(cur + 1 + mwp_rand_below(255));
}

/* ---- a key's last bytes (a Type 1 window's rebinds) ---- */

void
mwp_key_hist_init(struct mwp_key_hist *h, uint8_t first)
{
	memset(h, 0, sizeof(*h));
	mwp_key_hist_add(h, first);
}

void
mwp_key_hist_add(struct mwp_key_hist *h, uint8_t b)
{
	unsigned int i = 0;

	/* already in: out of the ring (its later entries move down one),
	 * to be appended below */
	if (mwp_key_hist_has(h, b)) {
		while (i < h->count && h->ring[(h->head + i) % MWP_KEY_HIST] != b)
			i++;
		if (i < h->count) {
			for (; i + 1 < h->count; i++)
				h->ring[(h->head + i) % MWP_KEY_HIST] =
					h->ring[(h->head + i + 1) % MWP_KEY_HIST];
			h->count--;
		}
	}
	/* full: the oldest leaves */
	if (h->count >= MWP_KEY_HIST) {
		const uint8_t old = h->ring[h->head];

		h->set[old >> 6] &= ~(UINT64_C(1) << (old & 63));
		h->head = (uint8_t)((h->head + 1) % MWP_KEY_HIST);
		h->count = MWP_KEY_HIST - 1;
	}
	h->ring[(h->head + h->count) % MWP_KEY_HIST] = b;
	h->count++;
	h->set[b >> 6] |= UINT64_C(1) << (b & 63);
}

uint8_t
mwp_key_hist_next(struct mwp_key_hist *h, uint8_t cur, bool sequential)
{
	unsigned int nfree = 256;
	uint32_t r;

	if (sequential)
		return (uint8_t)(cur + 1);
	if (!mwp_key_hist_has(h, cur))
		mwp_key_hist_add(h, cur);
	for (int w = 0; w < 4; w++)
		nfree -= (unsigned int)__builtin_popcountll(h->set[w]);
	if (nfree != 256u - h->count) {
		/* set and ring disagree (binds of one window raced on two
		 * threads, which the verbs do not allow): the set anew */
		memset(h->set, 0, sizeof(h->set));
		for (unsigned int i = 0; i < h->count; i++) {
			const uint8_t b = h->ring[(h->head + i) % MWP_KEY_HIST];

			h->set[b >> 6] |= UINT64_C(1) << (b & 63);
		}
		nfree = 256;
		for (int w = 0; w < 4; w++)
			nfree -= (unsigned int)__builtin_popcountll(h->set[w]);
	}
	/* at most MWP_KEY_HIST bytes are in h: nfree >= 192 */
	r = mwp_rand_below(nfree);
	/* the r-th byte (from 0) not in h */
	for (int w = 0; w < 4; w++) {
		uint64_t z = ~h->set[w];
		const unsigned int n = (unsigned int)__builtin_popcountll(z);

		if (r >= n) {
			r -= n;
			continue;
		}
		while (r-- != 0)
			z &= z - 1;
		return (uint8_t)(w * 64 + __builtin_ctzll(z));
	}
	return (uint8_t)(cur + 1);	/* not reached */
}
