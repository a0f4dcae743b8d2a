/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table (mwp_neigh.h): a small array searched linearly
 * under a spinlock (a requester asks at most about once a second per QP,
 * the control path once per ARP/ND frame).  States and timings follow
 * Linux's neighbour code, simplified: INCOMPLETE entries are probed by
 * broadcast, STALE ones by unicast, both every probe_ms, and fail after
 * max_probes unanswered probes.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "mwp_errno.h"
#include "mwp_neigh_priv.h"

#define DEFAULT_SIZE		256
#define DEFAULT_REACHABLE_MS	30000
#define DEFAULT_PROBE_MS	200
#define DEFAULT_MAX_PROBES	15
#define DEFAULT_FAILED_MS	1000
#define DEFAULT_GC_MS		60000

static uint64_t
ms(uint64_t hz, uint32_t v, uint32_t dflt)
{
	return hz * (v != 0 ? v : dflt) / 1000;
}

struct mwp_neigh_table *
mwp_neigh_create(uint32_t size, const struct mwp_neigh_params *p, uint64_t tsc_hz,
		 int socket)
{
	const struct mwp_neigh_params none = { 0 };
	struct mwp_neigh_table *t;

	if (p == NULL)
		p = &none;
	if (size == 0)
		size = DEFAULT_SIZE;
	t = rte_zmalloc_socket("mwp_neigh", sizeof(*t) + size * sizeof(t->e[0]),
			       RTE_CACHE_LINE_SIZE, socket);
	if (t == NULL)
		return mwp_null_rte_errno(ENOMEM);
	rte_spinlock_init(&t->lock);
	t->size = size;
	t->reachable = ms(tsc_hz, p->reachable_ms, DEFAULT_REACHABLE_MS);
	t->probe = ms(tsc_hz, p->probe_ms, DEFAULT_PROBE_MS);
	t->failed_for = ms(tsc_hz, p->failed_ms, DEFAULT_FAILED_MS);
	t->gc = ms(tsc_hz, p->gc_ms, DEFAULT_GC_MS);
	t->max_probes = p->max_probes != 0 ? RTE_MIN(p->max_probes, (uint32_t)UINT8_MAX) :
			DEFAULT_MAX_PROBES;	/* entries count them in a byte */
	t->per_ms = tsc_hz / 1000 != 0 ? tsc_hz / 1000 : 1;
	return t;
}

void
mwp_neigh_free(struct mwp_neigh_table *t)
{
	rte_free(t);
}

const char *
mwp_neigh_state_name(enum mwp_neigh_state s)
{
	static const char *const names[] = {
		[MWP_NEIGH_FREE] = "free", [MWP_NEIGH_INCOMPLETE] = "incomplete",
		[MWP_NEIGH_REACHABLE] = "reachable", [MWP_NEIGH_STALE] = "stale",
		[MWP_NEIGH_FAILED] = "failed",
	};

	return (unsigned int)s < RTE_DIM(names) ? names[s] : "?";
}

static struct mwp_neigh_entry *
find(struct mwp_neigh_table *t, const uint8_t ip[16])
{
	for (uint32_t i = 0; i < t->size; i++)
		if (t->e[i].state != MWP_NEIGH_FREE && memcmp(t->e[i].ip, ip, 16) == 0)
			return &t->e[i];
	return NULL;
}

/* A slot for a new address: a free one; or, if evict, the least recently
 * used STALE or FAILED entry unused for gc (never one being resolved or
 * confirmed recently). */
static struct mwp_neigh_entry *
room(struct mwp_neigh_table *t, uint64_t now, bool evict)
{
	struct mwp_neigh_entry *lru = NULL;

	for (uint32_t i = 0; i < t->size; i++) {
		struct mwp_neigh_entry *e = &t->e[i];

		if (e->state == MWP_NEIGH_FREE)
			return e;
		if (evict && (e->state == MWP_NEIGH_STALE || e->state == MWP_NEIGH_FAILED) &&
		    now - e->used >= t->gc && (lru == NULL || e->used < lru->used))
			lru = e;
	}
	if (lru != NULL)
		t->st.evicted++;
	return lru;
}

/* Time moves the state: REACHABLE goes STALE, FAILED may start over. */
static void
age(struct mwp_neigh_table *t, struct mwp_neigh_entry *e, uint64_t now)
{
	if (e->state == MWP_NEIGH_REACHABLE && now - e->confirmed >= t->reachable) {
		e->state = MWP_NEIGH_STALE;
		e->probes = 0;
	} else if (e->state == MWP_NEIGH_FAILED && now - e->failed >= t->failed_for) {
		e->state = MWP_NEIGH_INCOMPLETE;
		e->probes = 0;
	}
}

/* A probe is due: the first at once, then every probe interval; after
 * max_probes unanswered, the entry fails.  Returns false if it failed. */
static bool
pace(struct mwp_neigh_table *t, struct mwp_neigh_entry *e, uint64_t now, bool *probe)
{
	if (e->probes != 0 && now - e->probed < t->probe)
		return true;
	if (e->probes >= t->max_probes) {
		e->state = MWP_NEIGH_FAILED;
		e->failed = now;
		t->st.failed++;
		return false;
	}
	*probe = true;
	e->probes++;
	e->probed = now;
	t->st.probes++;
	return true;
}

enum mwp_neigh_res
mwp_neigh_resolve(struct mwp_neigh_table *t, const uint8_t ip[16], uint64_t now,
		  struct rte_ether_addr *mac, bool *probe, bool *unicast)
{
	enum mwp_neigh_res res = MWP_NEIGH_UNREACH;
	struct mwp_neigh_entry *e;

	*probe = false;
	*unicast = false;
	rte_spinlock_lock(&t->lock);
	t->st.lookups++;
	e = find(t, ip);
	if (e == NULL) {
		t->st.misses++;
		e = room(t, now, true);
		if (e == NULL) {
			t->st.full++;
			goto out;
		}
		memset(e, 0, sizeof(*e));
		memcpy(e->ip, ip, 16);
		e->state = MWP_NEIGH_INCOMPLETE;
	}
	e->used = now;
	age(t, e, now);
	switch (e->state) {
	case MWP_NEIGH_INCOMPLETE:
		if (pace(t, e, now, probe))
			res = MWP_NEIGH_WAIT;
		break;
	case MWP_NEIGH_STALE:
		/* still used while unicast probes confirm it */
		*mac = e->mac;
		if (pace(t, e, now, probe)) {
			*unicast = *probe;
			res = MWP_NEIGH_OK;
		}
		break;
	case MWP_NEIGH_REACHABLE:
		*mac = e->mac;
		res = MWP_NEIGH_OK;
		break;
	default:
		break;
	}
out:
	rte_spinlock_unlock(&t->lock);
	return res;
}

void
mwp_neigh_learn(struct mwp_neigh_table *t, const uint8_t ip[16],
		const struct rte_ether_addr *mac, bool solicited, bool override, uint64_t now)
{
	struct mwp_neigh_entry *e;

	if (!rte_is_unicast_ether_addr(mac) || rte_is_zero_ether_addr(mac))
		return;
	rte_spinlock_lock(&t->lock);
	e = find(t, ip);
	if (e == NULL) {
		/* news of an address nobody asked for: only into a free slot
		 * (an ARP storm from spoofed senders must not flush entries
		 * in use), and never from an answer we did not ask for */
		e = solicited ? NULL : room(t, now, false);
		if (e == NULL) {
			t->st.ignored++;
			goto out;
		}
		memset(e, 0, sizeof(*e));
		memcpy(e->ip, ip, 16);
		e->mac = *mac;
		e->state = MWP_NEIGH_STALE;
		e->used = now;
		t->st.learned++;
		goto out;
	}
	age(t, e, now);
	if (solicited || e->state == MWP_NEIGH_INCOMPLETE) {
		e->mac = *mac;
		e->state = MWP_NEIGH_REACHABLE;
		e->confirmed = now;
		e->probes = 0;
		t->st.updated++;
	} else if (e->state == MWP_NEIGH_FAILED ||
		   (override && !rte_is_same_ether_addr(&e->mac, mac))) {
		/* alive after all, or moved: usable, to be confirmed */
		e->mac = *mac;
		e->state = MWP_NEIGH_STALE;
		e->probes = 0;
		t->st.updated++;
	}
out:
	rte_spinlock_unlock(&t->lock);
}

unsigned int
mwp_neigh_walk(struct mwp_neigh_table *t, uint64_t now, mwp_neigh_walk_fn fn, void *arg)
{
	unsigned int n = 0;

	rte_spinlock_lock(&t->lock);
	for (uint32_t i = 0; i < t->size; i++) {
		struct mwp_neigh_entry *e = &t->e[i];

		if (e->state == MWP_NEIGH_FREE)
			continue;
		age(t, e, now);
		fn(e, e->confirmed != 0 ? (now - e->confirmed) / t->per_ms : 0, arg);
		n++;
	}
	rte_spinlock_unlock(&t->lock);
	return n;
}
