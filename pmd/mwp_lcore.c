/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

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
		q->loop = NULL;
		if (q->port->dest_mac_mask != 0) {
			char name[RTE_RING_NAMESIZE];

			snprintf(name, sizeof(name), "mwp_loop%u_%u_%u", lc->lcore_id,
				 q->port_id, q->queue_id);
			/* this lcore alone puts in and takes out */
			q->loop = rte_ring_create(name, MWP_LOOP_RING, socket,
						  RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (q->loop == NULL) {
				MWP_LOG(ERR, "lcore %u: port %u queue %u: loop ring: %s",
					lc->lcore_id, q->port_id, q->queue_id,
					rte_strerror(rte_errno));
				return -rte_errno;
			}
		}
	}
	return 0;
}

void
mwp_lcore_fini(struct mwp_lcore *lc)
{
	for (uint16_t i = 0; i < lc->nb_queues; i++) {
		struct rte_mbuf *m;

		mwp_queue_free(lc->q[i].mq);
		lc->q[i].mq = NULL;
		while (lc->q[i].loop != NULL && rte_ring_sc_dequeue(lc->q[i].loop, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(lc->q[i].loop);
		lc->q[i].loop = NULL;
	}
	if (lc->eng != NULL && mwp_engine_free(lc->eng) != 0)
		MWP_LOG(WARNING, "lcore %u: its engine still owns QPs", lc->lcore_id);
	lc->eng = NULL;
}

/* Where a frame the port sent goes. */
enum dest {
	DEST_WIRE,	/* out */
	DEST_SELF,	/* back in (the loop) */
	DEST_BOTH,	/* back in, and a copy out */
};

/* Is m addressed to the port itself: its own MAC and one of its own IP
 * addresses (one QP of the port to another)?  A frame to the port's MAC
 * for another IP goes out: a kernel tap, say, shares the port's MAC.
 * Where other processes share the address (q->own_qpn_hi != 0) the
 * destination QP decides: ours loop, another process's go out for its
 * socket, and QP1's MADs go both ways. */
static enum dest
to_self(const struct mwp_lcore_queue *q, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff };
	uint32_t bth, qpn;
	uint64_t dst;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr))
		return DEST_WIRE;
	memcpy(&dst, d, sizeof(dst));
	if (((dst ^ q->port->dest_mac) & q->port->dest_mac_mask) != 0)
		return DEST_WIRE;
	switch ((d[12] << 8) | d[13]) {
	case RTE_ETHER_TYPE_IPV4:
		memcpy(ip + 12, d + RTE_ETHER_HDR_LEN + 16, 4);
		bth = RTE_ETHER_HDR_LEN + (d[RTE_ETHER_HDR_LEN] & 0xf) * 4 +
		      sizeof(struct rte_udp_hdr);
		break;
	case RTE_ETHER_TYPE_IPV6:
		memcpy(ip, d + RTE_ETHER_HDR_LEN + 24, 16);
		bth = RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr) + sizeof(struct rte_udp_hdr);
		break;
	default:
		return DEST_WIRE;
	}
	if (!mwp_port_is_own_ip(q->port, ip))
		return DEST_WIRE;
	if (likely(q->own_qpn_hi == 0))
		return DEST_SELF;
	/* the BTH's destination QP (bytes 5-7); a frame too short for one
	 * is the receiver's to count */
	if (rte_pktmbuf_data_len(m) < bth + 8)
		return DEST_SELF;
	qpn = (uint32_t)d[bth + 5] << 16 | (uint32_t)d[bth + 6] << 8 | d[bth + 7];
	if (qpn == 1)
		return DEST_BOTH;
	return qpn >= q->own_qpn_lo && qpn <= q->own_qpn_hi ? DEST_SELF : DEST_WIRE;
}

/* Frames of tx[0..n) to the port itself go into the queue's loop (a full
 * loop drops them, counted); the others stay, in order, with a copy of
 * those that go both ways.  Returns how many stay. */
static uint16_t
loop_back(struct mwp_lcore_queue *q, struct rte_mbuf **tx, uint16_t n)
{
	uint16_t k = 0;

	for (uint16_t i = 0; i < n; i++) {
		const enum dest to = to_self(q, tx[i]);
		struct rte_mbuf *m = tx[i];

		if (to == DEST_WIRE) {
			tx[k++] = m;
			continue;
		}
		if (unlikely(to == DEST_BOTH)) {
			/* the copy goes out (k <= i: its place is free) */
			struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

			if (c != NULL)
				tx[k++] = c;
			else
				q->stats.drop[MWP_DROP_TX_FULL]++;
		}
		q->stats.tx_pkts++;
		q->stats.tx_bytes += rte_pktmbuf_pkt_len(m);
		if (rte_ring_sp_enqueue(q->loop, m) != 0) {
			q->stats.drop[MWP_DROP_TX_FULL]++;
			rte_pktmbuf_free(m);
		}
	}
	return k;
}

/* The exception path, once a pass: what the queue set aside for the
 * host's kernel to the tap (what it does not take is freed, counted),
 * and what the kernel sent (its reader thread's ring) into tx[0..room)
 * for the wire.  Returns the frames placed in tx. */
static __rte_noinline uint16_t
host_pass(struct mwp_lcore_queue *q, struct rte_mbuf **tx, uint16_t room)
{
	const struct mwp_host *h = q->host;
	struct rte_mbuf *up[MWP_BURST_MAX];
	uint16_t n, sent, got = 0;

	n = mwp_queue_host_take(q->mq, up, RTE_DIM(up));
	if (n != 0) {
		sent = mwp_host_tx(h, q->queue_id, up, n);
		q->stats.host_lost += n - sent;
	}
	if (room != 0) {
		got = mwp_host_rx(h, q->queue_id, tx, room);
		q->stats.host_out += got;
	}
	return got;
}

/* Returns the frames received plus the frames sent: 0 means idle. */
static inline unsigned int
poll_queue(struct mwp_lcore *lc, struct mwp_lcore_queue *q)
{
	struct rte_mbuf *rx[MWP_RX_BURST];
	struct rte_mbuf *tx[MWP_TX_ROOM];
	struct mwp_rx_gate *g = q->gate;
	uint16_t want = MWP_RX_BURST, nb_rx, nb_loop = 0, nb_tx, sent;
	uint64_t bytes = 0;

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
	/* what the port sent itself first (made here: their ICRCs are not
	 * checked again); a gate counts the wire's frames */
	if (q->loop != NULL && want != 0) {
		nb_loop = (uint16_t)rte_ring_sc_dequeue_burst(q->loop, (void **)rx, want, NULL);
		if (nb_loop != 0)
			nb_tx += mwp_queue_rx_own(q->mq, rx, nb_loop, &tx[nb_tx],
						  MWP_TX_ROOM - nb_tx);
	}
	nb_rx = want > nb_loop ? rte_eth_rx_burst(q->port_id, q->queue_id, rx,
						  want - nb_loop) : 0;
	if (g != NULL)
		g->rx += nb_rx;
	if (nb_rx != 0)
		nb_tx += mwp_queue_rx(q->mq, rx, nb_rx, &tx[nb_tx], MWP_TX_ROOM - nb_tx);
	nb_rx += nb_loop;
	/* the one branch the exception path costs the RoCE path */
	if (unlikely(q->host != NULL))
		nb_tx += host_pass(q, &tx[nb_tx], MWP_TX_ROOM - nb_tx);
	if (q->loop != NULL && nb_tx != 0) {
		const uint16_t all = nb_tx;

		nb_tx = loop_back(q, tx, nb_tx);
		if (nb_tx == 0)
			return nb_rx + all;
	}
	if (nb_tx == 0)
		return nb_rx;
	/* the bytes before the burst: a PMD that copies (af_xdp, af_packet)
	 * frees what it sent before it returns */
	for (uint16_t i = 0; i < nb_tx; i++)
		bytes += rte_pktmbuf_pkt_len(tx[i]);
	sent = rte_eth_tx_burst(q->port_id, q->queue_id, tx, nb_tx);
	q->stats.tx_pkts += sent;
	if (unlikely(sent < nb_tx)) {
		for (uint16_t i = sent; i < nb_tx; i++)
			bytes -= rte_pktmbuf_pkt_len(tx[i]);
		q->stats.drop[MWP_DROP_TX_FULL] += nb_tx - sent;
		rte_pktmbuf_free_bulk(&tx[sent], nb_tx - sent);
	}
	q->stats.tx_bytes += bytes;
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
	unsigned int work = mwp_engine_run_work(lc->eng, now);

	for (uint16_t i = 0; i < lc->nb_queues; i++)
		work += poll_queue(lc, &lc->q[i]);
	/* after the rx: a thread the OS did not run for an ACK timeout
	 * reads the ACKs that came meanwhile before its timers can send a
	 * window again (a congestion test's sender, 32 frames twice) */
	work += mwp_engine_run_timers(lc->eng, now);
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
