/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "mwp_pmd.h"

int
mwp_lcore_init(struct mwp_lcore *lc, int socket)
{
	lc->eng = mwp_engine_create(lc->lcore_id, socket);
	if (lc->eng == NULL) {
		MWP_LOG(ERR, "lcore %u: cannot create its engine: %s", lc->lcore_id,
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	for (uint16_t i = 0; i < lc->nb_queues; i++) {
		struct mwp_lcore_queue *q = &lc->q[i];

		q->mq = mwp_queue_create(lc->eng, q->port, q->queue_id, &q->stats);
		if (q->mq == NULL) {
			MWP_LOG(ERR, "lcore %u: port %u queue %u: %s", lc->lcore_id,
				q->port_id, q->queue_id, rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	return 0;
}

void
mwp_lcore_fini(struct mwp_lcore *lc)
{
	for (uint16_t i = 0; i < lc->nb_queues; i++) {
		mwp_queue_free(lc->q[i].mq);
		lc->q[i].mq = NULL;
	}
	if (lc->eng != NULL && mwp_engine_free(lc->eng) != 0)
		MWP_LOG(WARNING, "lcore %u: its engine still owns QPs", lc->lcore_id);
	lc->eng = NULL;
}

/* Returns the frames received plus the frames sent: 0 means idle. */
static inline unsigned int
poll_queue(struct mwp_lcore *lc, struct mwp_lcore_queue *q)
{
	struct rte_mbuf *rx[MWP_RX_BURST];
	struct rte_mbuf *tx[MWP_TX_ROOM];
	struct mwp_rx_gate *g = q->gate;
	uint16_t want = MWP_RX_BURST, nb_rx, nb_tx, sent;

	RTE_BUILD_BUG_ON(MWP_TX_ROOM < 2 * MWP_RX_BURST);

	if (unlikely(g != NULL)) {
		if (g->rx == g->next)
			g->fn(g, lc->eng, lc->lcore_id);
		if (g->next - g->rx < want)
			want = (uint16_t)(g->next - g->rx);
	}
	/* what we send unprompted (our requests, made before these frames
	 * came -- at the gate, say -- READ responses owed), leaving room
	 * for the answers to a burst */
	nb_tx = mwp_queue_tx(q->mq, tx, MWP_TX_ROOM - MWP_RX_BURST);
	nb_rx = want != 0 ? rte_eth_rx_burst(q->port_id, q->queue_id, rx, want) : 0;
	if (nb_rx != 0) {
		if (g != NULL)
			g->rx += nb_rx;
		nb_tx += mwp_resp_burst(q->mq, rx, nb_rx, &tx[nb_tx], MWP_TX_ROOM - nb_tx);
	}
	if (nb_tx == 0)
		return nb_rx;
	sent = rte_eth_tx_burst(q->port_id, q->queue_id, tx, nb_tx);
	for (uint16_t i = 0; i < sent; i++)
		q->stats.tx_bytes += rte_pktmbuf_pkt_len(tx[i]);
	q->stats.tx_pkts += sent;
	if (unlikely(sent < nb_tx)) {
		q->stats.drop[MWP_DROP_TX_FULL] += nb_tx - sent;
		rte_pktmbuf_free_bulk(&tx[sent], nb_tx - sent);
	}
	return nb_rx + nb_tx;
}

void
mwp_lcore_enter(struct mwp_lcore *lc)
{
	__atomic_store_n(&lc->last_busy_tsc, rte_rdtsc(), __ATOMIC_RELAXED);
	/* A reader of each device's key table whose QPs it answers. */
	for (uint16_t i = 0; i < lc->nb_queues; i++)
		if (lc->q[i].port->ctx != NULL)
			mwp_reader_register(lc->q[i].port->ctx, lc->lcore_id);
	mwp_engine_start(lc->eng);
}

unsigned int
mwp_lcore_poll(struct mwp_lcore *lc)
{
	const uint64_t now = rte_rdtsc();
	unsigned int work = mwp_engine_run(lc->eng, now);

	for (uint16_t i = 0; i < lc->nb_queues; i++)
		work += poll_queue(lc, &lc->q[i]);
	/*
	 * Idle time is what this lcore itself saw: an lcore that the OS
	 * does not schedule does not grow idle, so a loaded machine cannot
	 * end a replay before it was read.
	 */
	if (work == 0)
		__atomic_store_n(&lc->last_idle_tsc, now, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&lc->last_busy_tsc, now, __ATOMIC_RELAXED);
	/* holds no key-table pointer between iterations */
	for (uint16_t i = 0; i < lc->nb_queues; i++)
		if (lc->q[i].port->ctx != NULL)
			mwp_reader_quiescent(lc->q[i].port->ctx, lc->lcore_id);
	lc->iterations++;
	return work;
}

void
mwp_lcore_leave(struct mwp_lcore *lc)
{
	mwp_engine_stop(lc->eng);
	for (uint16_t i = 0; i < lc->nb_queues; i++)
		if (lc->q[i].port->ctx != NULL)
			mwp_reader_unregister(lc->q[i].port->ctx, lc->lcore_id);
}

int
mwp_lcore_main(void *arg)
{
	struct mwp_lcore *lc = arg;
	const uint64_t tick = (uint64_t)lc->tick_us * (rte_get_tsc_hz() / 1000000);
	uint64_t next_tick = rte_rdtsc() + tick;

	mwp_lcore_enter(lc);
	while (!__atomic_load_n(lc->stop, __ATOMIC_RELAXED)) {
		mwp_lcore_poll(lc);
		if (unlikely(lc->tick != NULL && rte_rdtsc() >= next_tick)) {
			lc->tick(lc->tick_arg);
			next_tick = rte_rdtsc() + tick;
		}
	}
	mwp_lcore_leave(lc);
	return 0;
}

uint64_t
mwp_lcore_idle_us(const struct mwp_lcore *lc)
{
	uint64_t busy = __atomic_load_n(&lc->last_busy_tsc, __ATOMIC_RELAXED);
	uint64_t idle = __atomic_load_n(&lc->last_idle_tsc, __ATOMIC_RELAXED);

	return idle > busy ? (idle - busy) / (rte_get_tsc_hz() / 1000000) : 0;
}
