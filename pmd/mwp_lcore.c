/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "mwp_pmd.h"

/* Returns the frames received plus the frames sent: 0 means idle. */
static inline unsigned int
poll_queue(struct mwp_lcore_queue *q, unsigned int lcore_id)
{
	struct rte_mbuf *rx[MWP_RX_BURST];
	struct rte_mbuf *tx[MWP_TX_ROOM];
	struct mwp_rx_gate *g = q->gate;
	uint16_t want = MWP_RX_BURST, nb_rx, nb_tx, sent;

	RTE_BUILD_BUG_ON(MWP_TX_ROOM < 2 * MWP_RX_BURST);

	if (unlikely(g != NULL)) {
		if (g->rx == g->next)
			g->fn(g, lcore_id);
		if (g->next - g->rx < want)
			want = (uint16_t)(g->next - g->rx);
	}
	/* our own requests (SEND, WRITE...), made before these frames came
	 * (at the gate, say): one lcore per port sends them, first */
	nb_tx = q->queue_id == 0 ?
		mwp_port_req_drain(q->port, tx, MWP_TX_ROOM - MWP_RX_BURST) : 0;
	nb_rx = want != 0 ? rte_eth_rx_burst(q->port_id, q->queue_id, rx, want) : 0;
	if (nb_rx != 0) {
		if (g != NULL)
			g->rx += nb_rx;
		nb_tx += mwp_resp_burst(q->port, rx, nb_rx, &tx[nb_tx],
					MWP_TX_ROOM - nb_tx, &q->stats);
	} else {
		/* READ responses that did not fit earlier */
		nb_tx += mwp_resp_poll(q->port, &tx[nb_tx], MWP_TX_ROOM - nb_tx,
				       &q->stats);
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

int
mwp_lcore_main(void *arg)
{
	struct mwp_lcore *lc = arg;
	const uint64_t tick = (uint64_t)lc->tick_us * (rte_get_tsc_hz() / 1000000);
	uint64_t now = rte_rdtsc();
	uint64_t next_tick = now + tick;

	__atomic_store_n(&lc->last_busy_tsc, now, __ATOMIC_RELAXED);
	/* A reader of each device's key table whose QPs it answers. */
	for (uint16_t i = 0; i < lc->nb_queues; i++)
		if (lc->q[i].port->ctx != NULL)
			mwp_reader_register(lc->q[i].port->ctx, lc->lcore_id);
	while (!__atomic_load_n(lc->stop, __ATOMIC_RELAXED)) {
		unsigned int work = 0;

		now = rte_rdtsc();
		for (uint16_t i = 0; i < lc->nb_queues; i++)
			work += poll_queue(&lc->q[i], lc->lcore_id);
		/*
		 * Idle time is what this lcore itself saw: an lcore that the
		 * OS does not schedule does not grow idle, so a loaded
		 * machine cannot end a replay before it was read.
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
		if (unlikely(lc->tick != NULL && now >= next_tick)) {
			lc->tick(lc->tick_arg);
			next_tick = now + tick;
		}
	}
	for (uint16_t i = 0; i < lc->nb_queues; i++)
		if (lc->q[i].port->ctx != NULL)
			mwp_reader_unregister(lc->q[i].port->ctx, lc->lcore_id);
	return 0;
}

uint64_t
mwp_lcore_idle_us(const struct mwp_lcore *lc)
{
	uint64_t busy = __atomic_load_n(&lc->last_busy_tsc, __ATOMIC_RELAXED);
	uint64_t idle = __atomic_load_n(&lc->last_idle_tsc, __ATOMIC_RELAXED);

	return idle > busy ? (idle - busy) / (rte_get_tsc_hz() / 1000000) : 0;
}
