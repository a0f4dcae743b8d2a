/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_flow.h>

#include "mwp_pmd.h"

#define RX_DESC 1024
#define TX_DESC 1024

int
mwp_ethdev_start(uint16_t port_id, uint16_t nb_queues, struct rte_mempool *mp,
		 const struct rte_ether_addr *mac, uint32_t ip_mtu)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = RX_DESC, nb_txd = TX_DESC;
	int socket = rte_eth_dev_socket_id(port_id);
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0) {
		MWP_LOG(ERR, "port %u: cannot get device info: %s", port_id,
			strerror(-ret));
		return ret;
	}
	if (nb_queues > info.max_rx_queues || nb_queues > info.max_tx_queues) {
		MWP_LOG(ERR, "port %u (%s): %u queues asked, device has %u rx/%u tx",
			port_id, info.driver_name, nb_queues,
			info.max_rx_queues, info.max_tx_queues);
		return -EINVAL;
	}
	/* A path MTU of 2048 or 4096 needs jumbo frames, as on a RoCE NIC;
	 * frames must also fit the pool's mbufs (the builders write one
	 * frame into one mbuf) */
	if (ip_mtu > RTE_ETHER_MTU) {
		const uint32_t frame = ip_mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN;

		if (frame + RTE_PKTMBUF_HEADROOM > rte_pktmbuf_data_room_size(mp)) {
			MWP_LOG(ERR, "port %u (%s): the RoCE path MTU needs frames of %u bytes; the pool's mbufs hold %u",
				port_id, info.driver_name, frame,
				rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM);
			return -EINVAL;
		}
		if (ip_mtu <= info.max_mtu && frame <= info.max_rx_pktlen) {
			conf.rxmode.mtu = ip_mtu;
		} else if (rte_eth_dev_set_mtu(port_id, (uint16_t)ip_mtu) == -ENOTSUP) {
			/* a device with no MTU of its own (memif, ring, null,
			 * pcap) carries what it is given, whatever its
			 * nominal largest frame */
			MWP_LOG(DEBUG, "port %u (%s): no MTU to set; frames of %u bytes go as they are",
				port_id, info.driver_name, frame);
		} else {
			MWP_LOG(ERR, "port %u (%s): the RoCE path MTU needs a link MTU of %u bytes; the device carries up to %u",
				port_id, info.driver_name, ip_mtu,
				RTE_MIN((uint32_t)info.max_mtu,
					info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN));
			return -EINVAL;
		}
	}
	/* Several queues: spread by UDP ports.  A RoCE NIC keeps one UDP
	 * source port per QP, so each QP stays on one queue (its responder
	 * state has one writer).  Devices without RSS (pcap: one file per
	 * queue) spread frames themselves. */
	if (nb_queues > 1 && (info.flow_type_rss_offloads & RTE_ETH_RSS_UDP) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			info.flow_type_rss_offloads & RTE_ETH_RSS_UDP;
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	ret = rte_eth_dev_configure(port_id, nb_queues, nb_queues, &conf);
	if (ret == 0)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	for (uint16_t q = 0; ret == 0 && q < nb_queues; q++) {
		ret = rte_eth_rx_queue_setup(port_id, q, nb_rxd,
			socket < 0 ? 0 : socket, NULL, mp);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(port_id, q, nb_txd,
				socket < 0 ? 0 : socket, NULL);
	}
	if (ret == 0 && mac != NULL && !rte_is_zero_ether_addr(mac)) {
		ret = rte_eth_dev_default_mac_addr_set(port_id,
			(struct rte_ether_addr *)(uintptr_t)mac);
		/* pcap/null vdevs cannot change their MAC; the responder
		 * filters on the configured one, so carry on. */
		if (ret == -ENOTSUP) {
			MWP_LOG(DEBUG, "port %u (%s): MAC cannot be set; filtering in software",
				port_id, info.driver_name);
			ret = 0;
		}
	}
	if (ret == 0)
		ret = rte_eth_dev_start(port_id);
	if (ret != 0) {
		MWP_LOG(ERR, "port %u (%s): set-up failed: %s", port_id,
			info.driver_name, strerror(-ret));
		return ret;
	}
	/* Peers address us by our MAC; pcap and null vdevs do not filter. */
	rte_eth_promiscuous_enable(port_id);
	return 0;
}

void
mwp_ethdev_close(uint16_t port_id)
{
	struct rte_flow_error err;
	int ret;

	/* mwp_flow_setup's rules, if the PMD has rte_flow */
	rte_flow_flush(port_id, &err);
	ret = rte_eth_dev_stop(port_id);

	if (ret != 0)
		MWP_LOG(WARNING, "port %u: stop: %s", port_id, strerror(-ret));
	rte_eth_dev_close(port_id);
}
