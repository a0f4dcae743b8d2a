/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's verbs objects: made (PDs, regions, windows, CQs,
 * QPs taken to RTS and attached to their ports, receives posted), looked
 * up, and freed.  The work requests are workreqs.c's, the completions
 * completions.c's, the printing summary.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

const char *
app_qp_state_name(enum ibv_qp_state s)
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
	a.min_rnr_timer = (uint8_t)c->min_rnr_timer;
	ret = mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (c->uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	if (ret != 0)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	a.timeout = (uint8_t)c->timeout;
	a.retry_cnt = (uint8_t)c->retry_cnt;
	a.rnr_retry = (uint8_t)c->rnr_retry;
	a.max_rd_atomic = (uint8_t)c->max_rd_atomic;
	return mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (c->uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
}

/* The QP of [qp QPN], or NULL. */
struct ibv_qp *
app_objects_qp(const struct app_objects *o, uint32_t qpn)
{
	for (unsigned int i = 0; i < o->cfg->nb_qps; i++)
		if (o->cfg->qp[i].qpn == qpn)
			return o->qp[i];
	return NULL;
}

/* The SGE address of byte addr of [mr N] as the configuration names it:
 * verbs addresses a region registered with an iova in that space; without
 * one, the configuration's addr is an offset from its start. */
uint64_t
app_mr_sge_addr(const struct app_objects *o, unsigned int mr, uint64_t addr)
{
	return o->cfg->mr[mr].has_iova ? addr : (uintptr_t)o->mem[mr] + addr;
}

/* [kind i] could not be made: say so against its section; -1. */
static int
object_err(const struct app_config *cfg, const char *kind, unsigned int i)
{
	char sec[32];
	int err = errno;

	snprintf(sec, sizeof(sec), "%s %u", kind, i);
	app_conf_err(cfg->file, sec, NULL, "cannot make it: %s", strerror(err));
	return -1;
}

int
app_objects_create(const struct app_config *cfg, struct app_run *run,
		   struct app_objects *o)
{
	struct mwp_device_attr da = { .socket = SOCKET_ID_ANY };
	unsigned int need = 0;

	memset(o, 0, sizeof(*o));
	o->cfg = cfg;
	if (cfg->sequential_keys)
		da.flags |= MWP_DEVICE_F_SEQUENTIAL;
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
		if (cfg->pd_present[i] && (o->pd[i] = mwp_alloc_pd(o->ctx)) == NULL)
			return object_err(cfg, "pd", i);
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++) {
		const struct app_mr *c = &cfg->mr[i];

		if (!c->present)
			continue;
		o->mem[i] = aligned_alloc(64, RTE_ALIGN(c->length, 64));
		if (o->mem[i] == NULL)
			goto nomem;
		app_fill(c, o->mem[i]);
		o->mr[i] = c->has_rkey ?
			mwp_reg_mr_key(o->pd[c->pd], o->mem[i], c->length,
				       c->has_iova ? c->iova : (uintptr_t)o->mem[i],
				       (int)c->access, c->rkey) :
			mwp_reg_mr_iova(o->pd[c->pd], o->mem[i], c->length,
					c->has_iova ? c->iova : (uintptr_t)o->mem[i],
					(int)c->access);
		if (o->mr[i] == NULL)
			return object_err(cfg, "mr", i);
	}
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++) {
		if (cfg->mw[i].present &&
		    (o->mw[i] = ibv_alloc_mw(o->pd[cfg->mw[i].pd],
					     (enum ibv_mw_type)cfg->mw[i].type)) == NULL)
			return object_err(cfg, "mw", i);
		if (cfg->cq[i].present &&
		    (o->cq[i] = mwp_create_cq(o->ctx, (int)cfg->cq[i].depth)) == NULL)
			return object_err(cfg, "cq", i);
	}
	for (unsigned int i = 0; i < cfg->nb_qps; i++) {
		const struct app_qp *c = &cfg->qp[i];
		struct ibv_qp_init_attr ia = {
			.send_cq = o->cq[c->cq], .recv_cq = o->cq[c->cq],
			.qp_type = c->uc ? IBV_QPT_UC : IBV_QPT_RC,
			.cap = { .max_send_wr = 256, .max_send_sge = APP_WR_MAX_SGE,
				 .max_recv_sge = 4, .max_inline_data = 256 },
		};
		unsigned int recvs = c->recv_count;
		int ret;

		for (unsigned int r = 0; r < cfg->nb_recvs; r++)
			recvs += cfg->recv[r].qpn == c->qpn;
		ia.cap.max_recv_wr = RTE_MAX(recvs, 1u);

		if (c->port >= run->nb_ports) {
			app_conf_err(cfg->file, c->section, "port", "the EAL has %u port%s",
				     run->nb_ports, run->nb_ports == 1 ? "" : "s");
			return -1;
		}
		o->qp[i] = mwp_create_qp_num(o->pd[c->pd], &ia, c->qpn);
		if (o->qp[i] == NULL) {
			app_conf_err(cfg->file, c->section, NULL, "cannot create: %s",
				     strerror(errno));
			return -1;
		}
		o->nb_qps = i + 1;
		ret = qp_to_rts(o->qp[i], c, run->ports[c->port]->conf.mtu);
		if (ret == 0 && c->has_remote_mac)
			ret = mwp_qp_set_peer_mac(o->qp[i], &c->remote_mac);
		if (ret == 0)
			ret = mwp_port_attach_qp(run->ports[c->port], o->qp[i]);
		if (ret != 0) {
			app_conf_err(cfg->file, c->section, NULL,
				     "cannot take it to RTS on port %u: %s", c->port,
				     strerror(ret));
			return -1;
		}
		/* the peer needs them: say what was drawn */
		if (!cfg->sequential_keys && (!c->has_sq_psn || !c->has_rq_psn))
			printf("mwpath: [%s] starting PSNs: sq_psn 0x%06x, rq_psn 0x%06x (drawn at "
			       "random where the section gives none)\n", c->section,
			       c->sq_psn, c->rq_psn);
		if (c->recv_count != 0) {
			uint64_t len = (uint64_t)c->recv_count * c->recv_size;

			o->recv_mem[i] = calloc(1, len);
			if (o->recv_mem[i] == NULL)
				goto nomem;
			o->recv_mr[i] = mwp_reg_mr(o->pd[c->pd], o->recv_mem[i], len,
						   IBV_ACCESS_LOCAL_WRITE);
			if (o->recv_mr[i] == NULL) {
				app_conf_err(cfg->file, c->section, "recv",
					     "cannot register the receive buffers: %s",
					     strerror(errno));
				return -1;
			}
			for (unsigned int r = 0; r < c->recv_count; r++) {
				struct ibv_sge sge = {
					.addr = (uintptr_t)o->recv_mem[i] + (uint64_t)r * c->recv_size,
					.length = c->recv_size, .lkey = o->recv_mr[i]->lkey };
				struct ibv_recv_wr wr = { .wr_id = r, .sg_list = &sge, .num_sge = 1 };
				struct ibv_recv_wr *bad;

				if (ibv_post_recv(o->qp[i], &wr, &bad) != 0) {
					app_conf_err(cfg->file, c->section, "recv",
						     "cannot post receive %u", r);
					return -1;
				}
			}
		}
	}
	for (unsigned int i = 0; i < cfg->nb_recvs; i++) {
		const struct app_recv *r = &cfg->recv[i];
		struct ibv_sge sge[RTE_DIM(r->sge)];
		struct ibv_recv_wr wr = { .wr_id = r->wr_id, .sg_list = sge,
					  .num_sge = (int)r->nb_sge };
		struct ibv_recv_wr *bad;
		int ret;

		for (unsigned int g = 0; g < r->nb_sge; g++) {
			sge[g].addr = app_mr_sge_addr(o, r->sge[g].mr, r->sge[g].addr);
			sge[g].length = r->sge[g].length;
			sge[g].lkey = o->mr[r->sge[g].mr]->lkey;
		}
		ret = ibv_post_recv(app_objects_qp(o, r->qpn), &wr, &bad);
		if (ret != 0) {
			app_conf_err(cfg->file, r->section, NULL, "posting failed: %s",
				     strerror(ret));
			return -1;
		}
	}
	return app_workreqs_start(o);
nomem:
	fprintf(stderr, "mwpath: out of memory for the configuration's objects\n");
	return -1;
}

void
app_objects_destroy(struct app_objects *o)
{
	if (o->ctx == NULL)
		return;
	mwp_close_device(o->ctx);	/* frees every object */
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		free(o->log[i].wc);
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		free(o->mem[i]);
	for (unsigned int i = 0; i < APP_MAX_QP; i++)
		free(o->recv_mem[i]);
}
