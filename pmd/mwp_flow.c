/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_flow steering (mwp_pmd.h): RoCEv2 to the port's queues, and each
 * QP's frames to the queue whose lcore owns it, where the PMD can match
 * the BTH's destination QP (a RAW item 5 bytes into the UDP payload).
 * Every rule is validated before it is made; a PMD that refuses leaves
 * the work to RSS and to the hand-off rings, which work everywhere.
 */
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include "mwp_pmd.h"

#define ROCE_UDP_PORT	4791
#define BTH_DQPN_OFF	5	/* opcode, flags, P_Key, reserved: then DestQP */

static void
why(struct mwp_flow_report *rep, const char *what, const struct rte_flow_error *err)
{
	snprintf(rep->reason, sizeof(rep->reason), "%s: %s", what,
		 err->message != NULL ? err->message : rte_strerror(rte_errno));
}

/* pattern: ETH / IPV4 or IPV6 / UDP dst 4791 [/ RAW dqpn] / END */
static int
make(uint16_t port_id, bool v6, const uint8_t *dqpn, const struct rte_flow_action *act,
     struct rte_flow **out, struct rte_flow_error *err)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_udp udp_spec = { .hdr.dst_port = RTE_BE16(ROCE_UDP_PORT) };
	struct rte_flow_item_udp udp_mask = { .hdr.dst_port = RTE_BE16(0xffff) };
	struct {
		struct rte_flow_item_raw r;
		uint8_t b[3];
	} raw_spec, raw_mask;
	struct rte_flow_item pat[5] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = v6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4 },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp_spec, .mask = &udp_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	int rc;

	if (dqpn != NULL) {
		memset(&raw_spec, 0, sizeof(raw_spec));
		raw_spec.r.relative = 1;
		raw_spec.r.offset = BTH_DQPN_OFF;
		raw_spec.r.length = 3;
		raw_spec.r.pattern = dqpn;
		raw_mask.r = rte_flow_item_raw_mask;
		memset(raw_mask.b, 0xff, sizeof(raw_mask.b));
		raw_mask.r.pattern = raw_mask.b;
		pat[3] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_RAW,
						  .spec = &raw_spec.r, .mask = &raw_mask.r };
	}
	rc = rte_flow_validate(port_id, &attr, pat, act, err);
	if (rc != 0)
		return rc;
	*out = rte_flow_create(port_id, &attr, pat, act, err);
	return *out != NULL ? 0 : -rte_errno;
}

int
mwp_flow_setup(uint16_t port_id, uint16_t nb_queues, const uint32_t *qpns,
	       const uint16_t *owner, unsigned int nb_qps, struct mwp_flow_report *rep)
{
	uint16_t queues[RTE_MAX_QUEUES_PER_PORT];
	struct rte_flow_action_rss rss = {
		.types = RTE_ETH_RSS_UDP,
		.queue_num = nb_queues,
		.queue = queues,
	};
	struct rte_flow_action act[2] = {
		{ .type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error err;
	struct rte_flow *f;

	memset(rep, 0, sizeof(*rep));
	if (nb_queues < 2)
		return 0;
	rep->tried = true;
	for (uint16_t q = 0; q < nb_queues; q++)
		queues[q] = q;
	/* each QP to its owner's queue: the more specific rules first */
	for (unsigned int i = 0; i < nb_qps; i++) {
		struct rte_flow_action_queue to = { .index = owner[i] };
		const struct rte_flow_action qa[2] = {
			{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &to },
			{ .type = RTE_FLOW_ACTION_TYPE_END },
		};
		const uint8_t dqpn[3] = { (uint8_t)(qpns[i] >> 16), (uint8_t)(qpns[i] >> 8),
					  (uint8_t)qpns[i] };
		bool ok = true;

		for (int v6 = 0; v6 < 2 && ok; v6++) {
			memset(&err, 0, sizeof(err));
			if (make(port_id, v6, dqpn, qa, &f, &err) != 0) {
				why(rep, "per-QP steering", &err);
				ok = false;
			} else {
				rep->qp_rules++;
			}
		}
		if (!ok)
			break;
	}
	/* the rest of RoCEv2 spread over the queues */
	for (int v6 = 0; v6 < 2; v6++) {
		memset(&err, 0, sizeof(err));
		if (make(port_id, v6, NULL, act, &f, &err) != 0) {
			if (rep->reason[0] == '\0')
				why(rep, "RoCEv2 to the queues", &err);
			else if (rep->reason2[0] == '\0')
				snprintf(rep->reason2, sizeof(rep->reason2),
					 "RoCEv2 to the queues: %s", err.message != NULL ?
					 err.message : rte_strerror(rte_errno));
			continue;
		}
		rep->roce_rules++;
	}
	return 0;
}
