/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's first stage, for a burst the queue's sorter has parsed
 * (engine/mwp_rx.c): every R_Key its requests name, noted in the sorter's
 * pass (mwp_resp_note), looked up in one bulk lookup (habit 7), and the
 * memory each request names on its way in before the checks reach it.
 * And the state a queue's bursts share, and each burst's context.
 */
#include <rte_hash.h>
#include <rte_prefetch.h>

#include "roce_resp_priv.h"

/* Start loading the memory a request will touch, once its key b is
 * found (habit: prefetch across the burst).  The address is not checked
 * here: a prefetch of a bad one does nothing, and the access decision
 * comes later; it is computed in integers, as a pointer past its object
 * would be undefined (UBSan's pointer-overflow).  (A zero-based binding's va is 0.) */
static inline void
prefetch_target(const struct mwp_binding *b, uint64_t va, uint32_t mask)
{
	const void *host = (const void *)((uintptr_t)b->host + (uintptr_t)(va - b->va));

	if (mask & (ROCE_M_WRITE | ROCE_M_ATOMIC))
		rte_prefetch0_write(host);
	else
		rte_prefetch0(host);
}

void
mwp_resp_keys(struct mwp_resp_ctx *c, struct mwp_resp_keys *k, struct mwp_resp_noted nt,
	      const struct mwp_pkt *p, struct mwp_resp_req *rq, uint16_t n)
{
	const struct mwp_binding *keyd[MWP_RESP_BURST_MAX];
	uint64_t hits;

	RTE_BUILD_BUG_ON(MWP_RESP_BURST_MAX > RTE_HASH_LOOKUP_BULK_MAX);
	if (nt.n == 0 || c->port->keys == NULL)
		return;
	hits = mwp_keys_lookup_bulk(c->port->keys, k->key, k->sig, nt.n, keyd);
	if (likely(!nt.shared)) {
		/* one lookup slot per request */
		for (uint16_t i = 0, j = 0; i < n; i++)
			if (rq[i].has_key) {
				if ((hits >> j) & 1) {
					rq[i].b = keyd[j];
					prefetch_target(rq[i].b, rq[i].va, p[i].mask);
				}
				j++;
			}
	} else {
		/* runs of one key share a slot, as they were noted */
		for (uint16_t i = 0, j = 0; i < n; i++)
			if (rq[i].has_key) {
				if (k->key[j] != &rq[i].rkey &&
				    rq[i].rkey != *(const uint32_t *)k->key[j])
					j++;
				if ((hits >> j) & 1) {
					rq[i].b = keyd[j];
					prefetch_target(rq[i].b, rq[i].va, p[i].mask);
				}
			}
	}
}

void
mwp_resp_queue_init(struct mwp_resp_queue *rq, const struct mwp_owner *self,
		    struct mwp_port *port, struct mwp_stats *st, struct mwp_guard *guard)
{
	memset(rq, 0, sizeof(*rq));
	rq->self = self;
	rq->port = port;
	rq->st = st;
	rq->guard = guard;
}
