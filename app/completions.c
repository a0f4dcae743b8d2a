/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completions: every CQ's taken into its log (in order), counted by kind,
 * failures named by their [wr N] section; what the send queues still hold.
 */
#include <stdlib.h>

#include "objects.h"

const char *
app_wc_status_name(enum ibv_wc_status s)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "loc_len_err",
		[IBV_WC_LOC_QP_OP_ERR] = "loc_qp_op_err",
		[IBV_WC_LOC_EEC_OP_ERR] = "loc_eec_op_err",
		[IBV_WC_LOC_PROT_ERR] = "loc_prot_err",
		[IBV_WC_WR_FLUSH_ERR] = "wr_flush_err",
		[IBV_WC_MW_BIND_ERR] = "mw_bind_err",
		[IBV_WC_BAD_RESP_ERR] = "bad_resp_err",
		[IBV_WC_LOC_ACCESS_ERR] = "loc_access_err",
		[IBV_WC_REM_INV_REQ_ERR] = "rem_inv_req_err",
		[IBV_WC_REM_ACCESS_ERR] = "rem_access_err",
		[IBV_WC_REM_OP_ERR] = "rem_op_err",
		[IBV_WC_RETRY_EXC_ERR] = "retry_exc_err",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "rnr_retry_exc_err",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "loc_rdd_viol_err",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "rem_inv_rd_req_err",
		[IBV_WC_REM_ABORT_ERR] = "rem_abort_err",
		[IBV_WC_INV_EECN_ERR] = "inv_eecn_err",
		[IBV_WC_INV_EEC_STATE_ERR] = "inv_eec_state_err",
		[IBV_WC_FATAL_ERR] = "fatal_err",
		[IBV_WC_RESP_TIMEOUT_ERR] = "resp_timeout_err",
		[IBV_WC_GENERAL_ERR] = "general_err",
	};

	return (unsigned int)s < RTE_DIM(names) && names[s] ? names[s] : "unknown";
}

const char *
app_wc_opcode_name(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "send";
	case IBV_WC_RDMA_WRITE: return "rdma_write";
	case IBV_WC_RDMA_READ: return "rdma_read";
	case IBV_WC_COMP_SWAP: return "comp_swap";
	case IBV_WC_FETCH_ADD: return "fetch_add";
	case IBV_WC_BIND_MW: return "bind_mw";
	case IBV_WC_LOCAL_INV: return "local_inv";
	case IBV_WC_RECV: return "recv";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "recv_rdma_with_imm";
	default: return "other";
	}
}

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
					const struct app_wr *w =
						app_config_wr(o->cfg, wc[k].wr_id);

					/* also counted by an lcore's gate (posting) */
					__atomic_fetch_add(&o->wr_failed, 1, __ATOMIC_RELAXED);
					/* at start, app_workreqs_start says it */
					if (!o->starting && w != NULL)
						app_conf_err(o->cfg->file, w->section, NULL,
							     "%s", ibv_wc_status_str(wc[k].status));
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
