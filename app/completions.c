/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completions: every CQ's taken into its log (in order), counted by kind,
 * failures named by their [wr N] section; what the send queues still hold.
 */
#include <stdlib.h>

#include "objects.h"

static void
log_wc(struct app_cqe_log *l, const struct ibv_wc *wc)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct ibv_wc *p = realloc(l->wc, cap * sizeof(*p));

		if (p == NULL)
			return;	/* counted below all the same */
		l->wc = p;
		l->cap = cap;
	}
	l->wc[l->n++] = *wc;
}

void
app_objects_collect(struct app_objects *o)
{
	if (o->ctx == NULL)
		return;
	mwp_poll(o->ctx);
	for (unsigned int c = 0; c < APP_MAX_OBJ; c++) {
		struct ibv_wc wc[16];
		int n;

		if (o->cq[c] == NULL)
			continue;
		while ((n = ibv_poll_cq(o->cq[c], RTE_DIM(wc), wc)) > 0) {
			for (int k = 0; k < n; k++) {
				const bool recv = wc[k].opcode & IBV_WC_RECV;

				log_wc(&o->log[c], &wc[k]);
				if (recv) {
					if (wc[k].status == IBV_WC_SUCCESS)
						o->recv_ok++;
					else if (wc[k].status == IBV_WC_WR_FLUSH_ERR)
						o->recv_flushed++;
					else
						o->recv_failed++;
				} else if (wc[k].status == IBV_WC_SUCCESS) {
					o->wr_ok++;
				} else {
					/* also counted by an lcore's gate (posting) */
					__atomic_fetch_add(&o->wr_failed, 1, __ATOMIC_RELAXED);
					fprintf(stderr, "mwpath: %s: [%s]: %s\n", o->cfg->file,
						o->cfg->wr[wc[k].wr_id].section,
						ibv_wc_status_str(wc[k].status));
				}
			}
		}
	}
}

/* One of the send queues' counts, summed over the QPs. */
static unsigned int
sum_over_qps(const struct app_objects *o, unsigned int (*count)(struct ibv_qp *qp))
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->nb_qps; i++)
		n += count(o->qp[i]);
	return n;
}

unsigned int
app_objects_pending(const struct app_objects *o)
{
	return sum_over_qps(o, mwp_qp_sq_queued);
}

unsigned int
app_objects_outstanding(const struct app_objects *o)
{
	return sum_over_qps(o, mwp_qp_sq_outstanding);
}
