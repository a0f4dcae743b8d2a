/* SPDX-License-Identifier: BSD-3-Clause */
/* A tx batch's ICRCs (roce_tx.h). */
#include "roce_icrc.h"
#include "roce_tx.h"

void
mwp_tx_finish(struct mwp_tx *t)
{
	struct rte_mbuf *m[MWP_TX_MAX];
	struct mwp_pkt p[MWP_TX_MAX];
	uint16_t k = 0;
	bool all = true;

	for (uint16_t i = 0; i < t->n; i++)
		all &= t->icrc_todo[i];
	if (all) {
		mwp_icrc_fill_burst(t->m, t->pkt, t->n);
		return;
	}
	for (uint16_t i = 0; i < t->n; i++)
		if (t->icrc_todo[i]) {
			m[k] = t->m[i];
			p[k++] = t->pkt[i];
		}
	mwp_icrc_fill_burst(m, p, k);
}
