/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mwp_priv.h"
#include "objects.h"

static enum ibv_mtu
to_ibv_mtu(unsigned int mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return IBV_MTU_1024;
	}
}

static const char *
qp_state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < RTE_DIM(names) && names[s] ? names[s] : "?";
}

static int
qp_to_rts(struct ibv_qp *qp, const struct app_qp *c, unsigned int mtu)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = c->access | IBV_ACCESS_LOCAL_WRITE };
	int ret;

	ret = mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret != 0)
		return ret;
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, c->remote_gid, 16);
	a.path_mtu = to_ibv_mtu(mtu);
	a.dest_qp_num = c->remote_qpn;
	a.rq_psn = c->rq_psn;
	a.max_dest_rd_atomic = (uint8_t)c->max_dest_rd_atomic;
	a.min_rnr_timer = 12;
	ret = mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (c->uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	if (ret != 0)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (c->uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
}

static struct ibv_qp *
find_qp(const struct app_config *cfg, const struct app_objects *o, uint32_t qpn)
{
	for (unsigned int i = 0; i < cfg->nb_qps; i++)
		if (cfg->qp[i].qpn == qpn)
			return o->qp[i];
	return NULL;
}

static int
post_wr(const struct app_config *cfg, struct app_objects *o, const struct app_wr *w,
	uint64_t wr_id)
{
	struct ibv_qp *qp = find_qp(cfg, o, w->qpn);
	struct ibv_send_wr wr = { .wr_id = wr_id }, *bad;

	wr.send_flags = w->signaled ? IBV_SEND_SIGNALED : 0;
	if (w->op == APP_WR_LOCAL_INV) {
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = w->rkey;
		return ibv_post_send(qp, &wr, &bad);
	}
	if (o->mw[w->mw]->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = wr_id, .send_flags = wr.send_flags,
			.bind_info = { .mr = w->length ? o->mr[w->mr] : NULL,
				       .addr = w->addr, .length = w->length,
				       .mw_access_flags = w->access } };

		return ibv_bind_mw(qp, o->mw[w->mw], &b);
	}
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = o->mw[w->mw];
	wr.bind_mw.rkey = (o->mw[w->mw]->rkey & ~0xffu) | w->key;
	wr.bind_mw.bind_info.mr = o->mr[w->mr];
	wr.bind_mw.bind_info.addr = w->addr;
	wr.bind_mw.bind_info.length = w->length;
	wr.bind_mw.bind_info.mw_access_flags = w->access;
	return ibv_post_send(qp, &wr, &bad);
}

/* Run the start-up work requests to completion, counting outcomes. */
static int
run_wrs(const struct app_config *cfg, struct app_objects *o)
{
	unsigned int want = 0;

	for (unsigned int i = 0; i < cfg->nb_wrs; i++) {
		int ret = post_wr(cfg, o, &cfg->wr[i], i);

		if (ret != 0) {
			fprintf(stderr, "mwpath: %s: [%s]: posting failed: %s\n", cfg->file,
				cfg->wr[i].section, strerror(ret));
			return -1;
		}
		want++;
	}
	/* completions: every signaled one and every error */
	for (int spin = 0; spin < 100000 && o->wr_ok + o->wr_failed < want; spin++) {
		struct ibv_wc wc[16];

		mwp_poll(o->ctx);
		for (unsigned int c = 0; c < APP_MAX_OBJ; c++) {
			int n = o->cq[c] ? ibv_poll_cq(o->cq[c], 16, wc) : 0;

			for (int k = 0; k < n; k++) {
				if (wc[k].status == IBV_WC_SUCCESS) {
					o->wr_ok++;
				} else {
					o->wr_failed++;
					fprintf(stderr, "mwpath: %s: [%s]: %s\n", cfg->file,
						cfg->wr[wc[k].wr_id].section,
						ibv_wc_status_str(wc[k].status));
				}
			}
		}
		/* unsignaled successes give no completion */
		if (mwp_poll(o->ctx) == 0 && o->wr_failed == 0)
			break;
	}
	return 0;
}

int
app_objects_create(const struct app_config *cfg, struct app_run *run,
		   struct app_objects *o)
{
	struct mwp_device_attr da = { .socket = SOCKET_ID_ANY };
	unsigned int need = 0;

	memset(o, 0, sizeof(*o));
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		need |= cfg->pd_present[i];
	if (!need)
		return 0;
	o->ctx = mwp_open_device(&da);
	if (o->ctx == NULL) {
		fprintf(stderr, "mwpath: cannot open the verbs device: %s\n", strerror(errno));
		return -1;
	}
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		if (cfg->pd_present[i])
			o->pd[i] = mwp_alloc_pd(o->ctx);
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++) {
		const struct app_mr *c = &cfg->mr[i];

		if (!c->present)
			continue;
		o->mem[i] = aligned_alloc(64, RTE_ALIGN(c->length, 64));
		if (o->mem[i] == NULL)
			goto nomem;
		for (uint64_t b = 0; b < c->length; b++)
			((uint8_t *)o->mem[i])[b] = c->pattern ? (uint8_t)b : 0;
		o->mr[i] = mwp_reg_mr_iova(o->pd[c->pd], o->mem[i], c->length,
					   c->has_iova ? c->iova : (uintptr_t)o->mem[i],
					   (int)c->access);
		if (o->mr[i] == NULL) {
			fprintf(stderr, "mwpath: %s: [mr %u]: cannot register: %s\n",
				cfg->file, i, strerror(errno));
			return -1;
		}
	}
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++) {
		if (cfg->mw[i].present)
			o->mw[i] = ibv_alloc_mw(o->pd[cfg->mw[i].pd],
						(enum ibv_mw_type)cfg->mw[i].type);
		if (cfg->cq[i].present)
			o->cq[i] = mwp_create_cq(o->ctx, (int)cfg->cq[i].depth);
	}
	for (unsigned int i = 0; i < cfg->nb_qps; i++) {
		const struct app_qp *c = &cfg->qp[i];
		struct ibv_qp_init_attr ia = {
			.send_cq = o->cq[c->cq], .recv_cq = o->cq[c->cq],
			.qp_type = c->uc ? IBV_QPT_UC : IBV_QPT_RC,
			.cap = { .max_send_wr = 256, .max_recv_wr = RTE_MAX(c->recv_count, 1u),
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		int ret;

		if (c->port >= run->nb_ports) {
			fprintf(stderr, "mwpath: %s: [%s] port: the EAL has %u port%s\n",
				cfg->file, c->section, run->nb_ports,
				run->nb_ports == 1 ? "" : "s");
			return -1;
		}
		o->qp[i] = mwp_create_qp_num(o->pd[c->pd], &ia, c->qpn);
		if (o->qp[i] == NULL) {
			fprintf(stderr, "mwpath: %s: [%s]: cannot create: %s\n", cfg->file,
				c->section, strerror(errno));
			return -1;
		}
		o->nb_qps = i + 1;
		ret = qp_to_rts(o->qp[i], c, run->ports[c->port]->conf.mtu);
		if (ret == 0)
			ret = mwp_port_attach_qp(run->ports[c->port], o->qp[i]);
		if (ret != 0) {
			fprintf(stderr, "mwpath: %s: [%s]: %s\n", cfg->file, c->section,
				strerror(ret));
			return -1;
		}
		if (c->recv_count != 0) {
			uint64_t len = (uint64_t)c->recv_count * c->recv_size;

			o->recv_mem[i] = calloc(1, len);
			if (o->recv_mem[i] == NULL)
				goto nomem;
			o->recv_mr[i] = mwp_reg_mr(o->pd[c->pd], o->recv_mem[i], len,
						   IBV_ACCESS_LOCAL_WRITE);
			for (unsigned int r = 0; r < c->recv_count; r++) {
				struct ibv_sge sge = {
					.addr = (uintptr_t)o->recv_mem[i] + (uint64_t)r * c->recv_size,
					.length = c->recv_size, .lkey = o->recv_mr[i]->lkey };
				struct ibv_recv_wr wr = { .wr_id = r, .sg_list = &sge, .num_sge = 1 };
				struct ibv_recv_wr *bad;

				if (ibv_post_recv(o->qp[i], &wr, &bad) != 0)
					goto nomem;
			}
		}
	}
	return run_wrs(cfg, o);
nomem:
	fprintf(stderr, "mwpath: out of memory for the configuration's objects\n");
	return -1;
}

void
app_objects_print(FILE *out, const struct app_objects *o)
{
	if (o->ctx == NULL)
		return;
	fprintf(out, "verbs: %" PRIu32 " live keys; start-up work requests: %u ok, %u failed\n",
		mwp_keys_count(mwp_device_keys(o->ctx)), o->wr_ok, o->wr_failed);
	for (unsigned int i = 0; i < o->nb_qps; i++) {
		const struct mwp_qp *qp = to_mqp(o->qp[i]);
		const struct mwp_qp_stats *s = &qp->resp.st;

		fprintf(out, "  qp %#x %s %s: in %" PRIu64 " acks %" PRIu64
			" naks %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64
			" (0x60/61/62/63) rnr %" PRIu64 " dups %" PRIu64
			" read-resps %" PRIu64 " atomics %" PRIu64 "\n",
			o->qp[i]->qp_num, o->qp[i]->qp_type == IBV_QPT_RC ? "rc" : "uc",
			qp_state_name(o->qp[i]->state), s->rx_pkts, s->acks,
			s->naks[0], s->naks[1], s->naks[2], s->naks[3], s->rnr_naks,
			s->duplicates, s->read_resps, s->atomics);
	}
}

void
app_objects_destroy(struct app_objects *o)
{
	if (o->ctx == NULL)
		return;
	mwp_close_device(o->ctx);	/* frees every object */
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		free(o->mem[i]);
	for (unsigned int i = 0; i < APP_MAX_QP; i++)
		free(o->recv_mem[i]);
}
