/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "mwp_port.h"
#include "mwp_priv.h"
#include "roce_req.h"

/* Frames the requesters may have waiting for a port's lcore. */
#define REQ_RING_SIZE 1024

bool
mwp_mtu_valid(unsigned int mtu)
{
	return mtu >= 256 && mtu <= 4096 && rte_is_power_of_2(mtu);
}

struct mwp_port *
mwp_port_create(const struct mwp_port_conf *conf, uint16_t index, int socket)
{
	struct mwp_port *port;

	if (conf == NULL || !mwp_mtu_valid(conf->mtu)) {
		rte_errno = EINVAL;
		return NULL;
	}
	port = rte_zmalloc_socket("mwp_port", sizeof(*port),
				  RTE_CACHE_LINE_SIZE, socket);
	if (port == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	port->conf = *conf;
	if (!rte_is_zero_ether_addr(&conf->mac)) {
		uint8_t mask[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0 };
		uint8_t mac[8] = { 0 };

		memcpy(mac, &conf->mac, RTE_ETHER_ADDR_LEN);
		memcpy(&port->dest_mac, mac, sizeof(mac));
		memcpy(&port->dest_mac_mask, mask, sizeof(mask));
	}
	port->dest_any_ip = !conf->has_ipv4 && !conf->has_ipv6;
	port->index = index;
	{
		static uint32_t seq;
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "mwp_req_%u",
			 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		port->req_tx = rte_ring_create(name, REQ_RING_SIZE, socket,
					       RING_F_SC_DEQ);
	}
	if (port->req_tx == NULL) {
		rte_free(port);
		rte_errno = ENOMEM;
		return NULL;
	}
	return port;
}

void
mwp_port_free(struct mwp_port *port)
{
	struct rte_mbuf *m[32];
	unsigned int n;

	if (port == NULL)
		return;
	while ((n = rte_ring_dequeue_burst(port->req_tx, (void **)m, RTE_DIM(m),
					   NULL)) != 0)
		rte_pktmbuf_free_bulk(m, n);
	rte_ring_free(port->req_tx);
	rte_free(port);
}

uint16_t
mwp_port_req_drain(struct mwp_port *port, struct rte_mbuf **tx, uint16_t room)
{
	if (room == 0 || rte_ring_empty(port->req_tx))
		return 0;
	return (uint16_t)rte_ring_sc_dequeue_burst(port->req_tx, (void **)tx,
						   room, NULL);
}

void
mwp_port_set_mempool(struct mwp_port *port, struct rte_mempool *mp)
{
	port->mp = mp;
}

int
mwp_port_attach_qp(struct mwp_port *port, struct ibv_qp *ibqp)
{
	struct mwp_port_qp_slot *s = &port->qp[ibqp->qp_num & (MWP_PORT_QP_SLOTS - 1)];
	struct mwp_qp *qp = to_mqp(ibqp);

	if (port->ctx != NULL && port->ctx != ibqp->context)
		return EINVAL;
	if (s->qp != NULL && s->qp != qp)
		return EEXIST;
	port->ctx = ibqp->context;
	port->keys = mwp_device_keys(ibqp->context);
	qp->port = port;
	s->qpn = ibqp->qp_num;
	s->qp = qp;
	/* data WQEs now leave as packets, unless a test hooked the ring */
	pthread_mutex_lock(&qp->dev->lock);
	if (qp->tx == NULL)
		qp->tx = mwp_req_tx;
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}
