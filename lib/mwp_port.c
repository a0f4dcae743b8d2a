/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mwp_port.h"
#include "mwp_priv.h"

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
	port->index = index;
	return port;
}

void
mwp_port_free(struct mwp_port *port)
{
	rte_free(port);
}

struct mwp_qp *
mwp_port_qp(const struct mwp_port *port, uint32_t qpn)
{
	const struct mwp_port_qp_slot *s = &port->qp[qpn & (MWP_PORT_QP_SLOTS - 1)];

	return s->qpn == qpn ? s->qp : NULL;
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
	return 0;
}
