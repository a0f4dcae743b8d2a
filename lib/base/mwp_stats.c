/* SPDX-License-Identifier: BSD-3-Clause */
#include "mwp_stats.h"

void
mwp_stats_add(struct mwp_stats *sum, const struct mwp_stats *s)
{
	sum->rx_pkts += s->rx_pkts;
	sum->rx_bytes += s->rx_bytes;
	sum->accepted += s->accepted;
	sum->ctrl += s->ctrl;
	sum->host += s->host;
	sum->host_out += s->host_out;
	sum->host_lost += s->host_lost;
	sum->tx_pkts += s->tx_pkts;
	sum->tx_bytes += s->tx_bytes;
	for (unsigned int i = 0; i < MWP_DROP__MAX; i++)
		sum->drop[i] += s->drop[i];
	sum->acks += s->acks;
	for (unsigned int i = 0; i < 4; i++)
		sum->naks[i] += s->naks[i];
	sum->rnr_naks += s->rnr_naks;
	sum->duplicates += s->duplicates;
	sum->ce += s->ce;
	sum->cnp_tx += s->cnp_tx;
	sum->cnp_rx += s->cnp_rx;
	sum->retrans += s->retrans;
	for (unsigned int i = 0; i < MWP_DENY__MAX; i++)
		sum->denied[i] += s->denied[i];
}

uint64_t
mwp_stats_dropped(const struct mwp_stats *s)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < MWP_DROP__MAX; i++)
		n += s->drop[i];
	return n;
}
