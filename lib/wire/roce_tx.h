/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_TX_H
#define ROCE_TX_H

/*
 * The frames one pass of a queue sends (the tx batch), in the order they
 * leave: each built into an mbuf of the port's pool, those still without
 * their ICRC filled all at once at the end by the multi-buffer CRC
 * (mwp_tx_finish).  The responder's answers, the requester's requests and
 * the control path's replies and probes all go here: each protocol engine
 * takes a batch, none reaches it through another's headers.  Private.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "mwp_stats.h"
#include "roce_parse.h"

/** Frames one batch holds at most. */
#define MWP_TX_MAX 64

/** A tx batch. */
struct mwp_tx {
	struct rte_mbuf **m;		/* the frames (the caller's array) */
	uint16_t n;			/* placed so far */
	uint16_t room;			/* room in m, at most MWP_TX_MAX */
	struct rte_mempool *mp;		/* where their mbufs come from */
	struct mwp_stats *st;		/* a full batch, no mbuf: counted here */
	/* each frame's parsed view, and whether its ICRC is still to do */
	struct mwp_pkt pkt[MWP_TX_MAX];
	uint8_t icrc_todo[MWP_TX_MAX];
};

/* A batch of room frames (at most MWP_TX_MAX are used) into m, built in
 * mbufs of mp; what cannot be sent is counted in st. */
static inline void
mwp_tx_init(struct mwp_tx *t, struct rte_mbuf **m, uint16_t room, struct rte_mempool *mp,
	    struct mwp_stats *st)
{
	t->m = m;
	t->n = 0;
	t->room = RTE_MIN(room, (uint16_t)MWP_TX_MAX);
	t->mp = mp;
	t->st = st;
}

/* Has the batch room for another frame? */
static inline bool
mwp_tx_room(const struct mwp_tx *t)
{
	return t->n < t->room;
}

/* An mbuf for the next frame, or NULL: no room (counted TX_FULL) or no
 * mbuf (counted NO_MBUF). */
static inline struct rte_mbuf *
mwp_tx_slot(struct mwp_tx *t)
{
	struct rte_mbuf *m;

	if (unlikely(t->n == t->room)) {
		t->st->drop[MWP_DROP_TX_FULL]++;
		return NULL;
	}
	m = rte_pktmbuf_alloc(t->mp);
	if (unlikely(m == NULL))
		t->st->drop[MWP_DROP_NO_MBUF]++;
	return m;
}

/* The parsed view the next frame's builder fills (for its ICRC). */
static inline struct mwp_pkt *
mwp_tx_next_pkt(struct mwp_tx *t)
{
	return &t->pkt[t->n];
}

/* Queue the frame built into m (from mwp_tx_slot), its view in
 * mwp_tx_next_pkt(t); icrc: its ICRC is still to do (a deferred build's),
 * or not (done, or not RoCE). */
static inline void
mwp_tx_queue(struct mwp_tx *t, struct rte_mbuf *m, bool icrc)
{
	t->icrc_todo[t->n] = icrc;
	t->m[t->n++] = m;
}

/* Queue a frame made elsewhere (a control path reply, no ICRC), or free
 * it if the batch is full (counted TX_FULL). */
static inline void
mwp_tx_queue_made(struct mwp_tx *t, struct rte_mbuf *m)
{
	if (likely(mwp_tx_room(t))) {
		mwp_tx_queue(t, m, false);
		return;
	}
	rte_pktmbuf_free(m);
	t->st->drop[MWP_DROP_TX_FULL]++;
}

/* The ICRCs still to do, all at once: call before the frames leave. */
void mwp_tx_finish(struct mwp_tx *t);

#endif /* ROCE_TX_H */
