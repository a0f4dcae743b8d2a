/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mwp_port.h"

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
