/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The guessing defence of one queue (mwp_guard.h).
 */
#include <string.h>

#include <rte_common.h>
#include <rte_hash_crc.h>

#include "mwp_guard_priv.h"

/* Entries a source may be found in: its hash's and the next ones. */
#define PROBES	8

void
mwp_guard_init(struct mwp_guard *g, uint32_t threshold, uint32_t block_ms, uint64_t tsc_hz)
{
	RTE_BUILD_BUG_ON(!RTE_IS_POWER_OF_2(MWP_GUARD_SOURCES));
	memset(g, 0, sizeof(*g));
	g->threshold = threshold;
	g->block_tsc = tsc_hz / 1000 * block_ms;
}

static inline uint32_t
home(const uint8_t ip[16])
{
	return rte_hash_crc(ip, 16, 0) & (MWP_GUARD_SOURCES - 1);
}

/* ip's entry, or NULL. */
static struct mwp_guard_source *
find(struct mwp_guard *g, const uint8_t ip[16])
{
	const uint32_t h = home(ip);

	for (uint32_t i = 0; i < PROBES; i++) {
		struct mwp_guard_source *s = &g->src[(h + i) & (MWP_GUARD_SOURCES - 1)];

		if (s->used && memcmp(s->ip, ip, 16) == 0)
			return s;
	}
	return NULL;
}

/* ip's entry, made if need be; NULL when every entry of its run is a
 * blocked source (the block stands, this refusal is not kept). */
static struct mwp_guard_source *
find_or_add(struct mwp_guard *g, const uint8_t ip[16], uint64_t now)
{
	const uint32_t h = home(ip);
	struct mwp_guard_source *s = find(g, ip), *victim = NULL;

	if (s != NULL)
		return s;
	for (uint32_t i = 0; i < PROBES; i++) {
		struct mwp_guard_source *e = &g->src[(h + i) & (MWP_GUARD_SOURCES - 1)];

		if (!e->used) {
			victim = e;
			break;
		}
		if (e->blocked_until > now)
			continue;
		if (victim == NULL || e->refused < victim->refused)
			victim = e;
	}
	if (victim == NULL)
		return NULL;
	if (victim->used) {
		g->evicted++;
		if (victim->blocked_until != 0)
			g->nb_blocked--;	/* its block was over */
	}
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->ip, ip, 16);
	victim->used = true;
	return victim;
}

void
mwp_guard_refused(struct mwp_guard *g, const uint8_t ip[16], uint64_t now)
{
	struct mwp_guard_source *s = find_or_add(g, ip, now);

	if (s == NULL)
		return;
	s->refused++;
	if (g->threshold == 0 || ++s->strikes < g->threshold)
		return;
	if (s->blocked_until == 0)
		g->nb_blocked++;
	s->blocked_until = now + g->block_tsc;
	s->strikes = 0;
	s->blocks++;
}

bool
mwp_guard_blocked(struct mwp_guard *g, const uint8_t ip[16], uint64_t now)
{
	struct mwp_guard_source *s = find(g, ip);

	if (s == NULL || s->blocked_until == 0)
		return false;
	if (now >= s->blocked_until) {
		/* served its time */
		s->blocked_until = 0;
		g->nb_blocked--;
		return false;
	}
	s->dropped++;
	return true;
}
