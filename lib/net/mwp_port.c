/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "mwp_errno.h"
#include "mwp_log.h"
#include "mwp_neigh_priv.h"
#include "mwp_port.h"
#include "roce_hdr.h"

/* Probes asked for by other threads and not yet sent (a few addresses
 * being resolved at once; more are asked again, see mwp_port_neigh_ask). */
#define PORT_ASKS	64

bool
mwp_mtu_valid(unsigned int mtu)
{
	return mtu >= 256 && mtu <= 4096 && rte_is_power_of_2(mtu);
}

void
mwp_port_free(struct mwp_port *port)
{
	if (port == NULL)
		return;
	mwp_neigh_free(port->neigh);
	rte_ring_free(port->asks);
	rte_free(port);
}

void
mwp_port_cc_defaults(struct mwp_port_cc *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->ecn = MWP_ECN_MODE_ECT0;
	cc->notify = true;
	cc->cnp_dscp = 48;
	cc->min_time_between_cnps = 4;
	cc->react = true;
	mwp_dcqcn_defaults(&cc->dcqcn);
}

struct mwp_port *
mwp_port_create(const struct mwp_port_conf *conf, uint16_t index, int socket)
{
	struct mwp_port *port;

	if (conf == NULL || !mwp_mtu_valid(conf->mtu))
		return mwp_null_rte_errno(EINVAL);
	port = rte_zmalloc_socket("mwp_port", sizeof(*port),
				  RTE_CACHE_LINE_SIZE, socket);
	if (port == NULL)
		return mwp_null_rte_errno(ENOMEM);
	port->conf = *conf;
	if (!rte_is_zero_ether_addr(&conf->mac)) {
		uint8_t mask[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0 };
		uint8_t mac[8] = { 0 };

		memcpy(mac, &conf->mac, RTE_ETHER_ADDR_LEN);
		memcpy(&port->dest_mac, mac, sizeof(mac));
		memcpy(&port->dest_mac_mask, mask, sizeof(mask));
	}
	port->dest_any_ip = !conf->has_ipv4 && !conf->has_ipv6;
	port->ecn = conf->cc.ecn == MWP_ECN_MODE_ECT1 ? ROCE_ECN_ECT1 :
		    conf->cc.ecn == MWP_ECN_MODE_OFF ? ROCE_ECN_NOT_ECT : ROCE_ECN_ECT0;
	port->cnp_gap = (uint64_t)conf->cc.min_time_between_cnps * rte_get_tsc_hz() / 1000000;
	if (conf->cc.react) {
		char err[128];

		if (mwp_dcqcn_params_check(&conf->cc.dcqcn, err, sizeof(err)) != 0) {
			MWP_LOG(ERR, "port %u: DCQCN: %s", index, err);
			mwp_port_free(port);
			return mwp_null_rte_errno(EINVAL);
		}
		mwp_dcqcn_cfg_init(&port->dcqcn, &conf->cc.dcqcn, rte_get_tsc_hz(),
				   conf->cc.line_rate);
	}
	port->index = index;
	port->neigh = mwp_neigh_create(conf->neigh_size, &conf->neigh, rte_get_tsc_hz(),
				       socket);
	if (port->neigh == NULL) {
		mwp_port_free(port);
		return mwp_null_rte_errno(ENOMEM);
	}
	{
		static uint32_t seq;
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "mwp_ask%u",
			 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		port->asks = rte_ring_create_elem(name, sizeof(struct mwp_port_ask), PORT_ASKS,
						  socket, 0);
	}
	if (port->asks == NULL) {
		mwp_port_free(port);
		return mwp_null_rte_errno(ENOMEM);
	}
	return port;
}

enum mwp_neigh_res
mwp_port_neigh_ask(struct mwp_port *port, const uint8_t ip[16], uint64_t now,
		   struct rte_ether_addr *mac)
{
	struct mwp_port_ask a = { .pad = 0 };
	enum mwp_neigh_res res;
	bool probe = false, unicast = false;

	if (mwp_port_is_own_ip(port, ip)) {
		if (mac != NULL)
			*mac = port->conf.mac;
		return MWP_NEIGH_OK;
	}
	res = mwp_neigh_resolve(port->neigh, ip, now, &a.mac, &probe, &unicast);
	if (res == MWP_NEIGH_OK && mac != NULL)
		*mac = a.mac;
	if (probe && res != MWP_NEIGH_UNREACH)
		mwp_port_neigh_queue(port, ip, unicast ? &a.mac : NULL);
	return res;
}

void
mwp_port_neigh_queue(struct mwp_port *port, const uint8_t ip[16],
		     const struct rte_ether_addr *unicast)
{
	struct mwp_port_ask a = { .unicast = unicast != NULL, .pad = 0 };

	memcpy(a.ip, ip, sizeof(a.ip));
	if (unicast != NULL)
		a.mac = *unicast;
	/* a full ring drops it: the table asks again after probe_ms */
	rte_ring_enqueue_elem(port->asks, &a, sizeof(a));
}

void
mwp_port_neigh_learn(struct mwp_port *port, const uint8_t ip[16],
		     const struct rte_ether_addr *mac, uint64_t now)
{
	if (!mwp_port_is_own_ip(port, ip))
		mwp_neigh_learn(port->neigh, ip, mac, true, true, now);
}

void
mwp_port_set_mempool(struct mwp_port *port, struct rte_mempool *mp)
{
	port->mp = mp;
}
