/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

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

static struct ibv_qp *
find_qp(const struct app_config *cfg, const struct app_objects *o, uint32_t qpn)
{
	for (unsigned int i = 0; i < cfg->nb_qps; i++)
		if (cfg->qp[i].qpn == qpn)
			return o->qp[i];
	return NULL;
}

/* The SGE address of byte addr of [mr N] as the configuration names it:
 * verbs addresses a region registered with an iova in that space; without
 * one, the configuration's addr is an offset from its start. */
static uint64_t
mr_sge_addr(const struct app_config *cfg, const struct app_objects *o, unsigned int mr,
	    uint64_t addr)
{
	return cfg->mr[mr].has_iova ? addr : (uintptr_t)o->mem[mr] + addr;
}

/* The host address of byte addr of [mr N] as the configuration names it. */
static uint64_t
mr_host_addr(const struct app_config *cfg, const struct app_objects *o, unsigned int mr,
	     uint64_t addr)
{
	return (uintptr_t)o->mem[mr] + (cfg->mr[mr].has_iova ? addr - cfg->mr[mr].iova : addr);
}

static int
post_wr(const struct app_config *cfg, struct app_objects *o, const struct app_wr *w,
	uint64_t wr_id)
{
	struct ibv_qp *qp = find_qp(cfg, o, w->qpn);
	struct ibv_send_wr wr = { .wr_id = wr_id }, *bad;
	struct ibv_sge sge[APP_WR_MAX_SGE];

	wr.send_flags = (w->signaled ? IBV_SEND_SIGNALED : 0) |
			(w->fence ? IBV_SEND_FENCE : 0) |
			(w->inline_data ? IBV_SEND_INLINE : 0);
	wr.opcode = (enum ibv_wr_opcode)app_wr_ops[w->op].ibv;
	switch (w->op) {
	case APP_WR_LOCAL_INV:
		wr.invalidate_rkey = w->rkey;
		return ibv_post_send(qp, &wr, &bad);
	case APP_WR_BIND_MW:
		break;
	default:
		/* a data work request: its buffers, then what it names */
		for (unsigned int g = 0; g < w->nb_sge; g++) {
			/* inline data is copied from the process's own address
			 * (no lkey): the host address, not the region's iova */
			sge[g].addr = w->inline_data ?
				      mr_host_addr(cfg, o, w->sge[g].mr, w->sge[g].addr) :
				      mr_sge_addr(cfg, o, w->sge[g].mr, w->sge[g].addr);
			sge[g].length = w->sge[g].length;
			sge[g].lkey = o->mr[w->sge[g].mr]->lkey;
		}
		wr.sg_list = w->nb_sge != 0 ? sge : NULL;
		wr.num_sge = (int)w->nb_sge;
		wr.invalidate_rkey = w->rkey;
		if (w->op == APP_WR_SEND_WITH_IMM || w->op == APP_WR_WRITE_WITH_IMM)
			wr.imm_data = htonl(w->imm);
		if (w->op == APP_WR_FETCH_ADD || w->op == APP_WR_CMP_SWAP) {
			wr.wr.atomic.remote_addr = w->remote_addr;
			wr.wr.atomic.rkey = w->remote_rkey;
			wr.wr.atomic.compare_add = w->op == APP_WR_FETCH_ADD ? w->add : w->compare;
			wr.wr.atomic.swap = w->swap;
		} else {
			wr.wr.rdma.remote_addr = w->remote_addr;
			wr.wr.rdma.rkey = w->remote_rkey;
		}
		return ibv_post_send(qp, &wr, &bad);
	}
	if (o->mw[w->mw]->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = wr_id, .send_flags = wr.send_flags,
			.bind_info = { .mr = w->length ? o->mr[w->mr] : NULL,
				       .addr = w->addr, .length = w->length,
				       .mw_access_flags = w->access } };

		return ibv_bind_mw(qp, o->mw[w->mw], &b);
	}
	wr.bind_mw.mw = o->mw[w->mw];
	wr.bind_mw.rkey = (o->mw[w->mw]->rkey & ~0xffu) | w->key;
	wr.bind_mw.bind_info.mr = o->mr[w->mr];
	wr.bind_mw.bind_info.addr = w->addr;
	wr.bind_mw.bind_info.length = w->length;
	wr.bind_mw.bind_info.mw_access_flags = w->access;
	return ibv_post_send(qp, &wr, &bad);
}

static unsigned int
qp_port(const struct app_config *cfg, uint32_t qpn)
{
	for (unsigned int i = 0; i < cfg->nb_qps; i++)
		if (cfg->qp[i].qpn == qpn)
			return cfg->qp[i].port;
	return UINT_MAX;
}

/* Post, in section order, every work request of port (or of every port,
 * if port is UINT_MAX) whose after_rx is rx. */
static void
post_due(struct app_objects *o, unsigned int port, uint64_t rx)
{
	const struct app_config *cfg = o->cfg;

	for (unsigned int i = 0; i < cfg->nb_wrs; i++) {
		const struct app_wr *w = &cfg->wr[i];
		int ret;

		if (o->posted[i] || w->after_rx != rx ||
		    (port != UINT_MAX && qp_port(cfg, w->qpn) != port))
			continue;
		o->posted[i] = true;
		ret = post_wr(cfg, o, w, i);
		if (ret != 0) {
			fprintf(stderr, "mwpath: %s: [%s]: posting failed: %s\n", cfg->file,
				w->section, strerror(ret));
			__atomic_fetch_add(&o->wr_failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_fetch_add(&o->wr_posted, 1, __ATOMIC_RELAXED);
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

unsigned int
app_objects_pending(const struct app_objects *o)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->nb_qps; i++)
		n += mwp_qp_sq_queued(o->qp[i]);
	return n;
}

unsigned int
app_objects_outstanding(const struct app_objects *o)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->nb_qps; i++)
		n += mwp_qp_sq_outstanding(o->qp[i]);
	return n;
}

/* The smallest after_rx above rx among port's work requests not posted. */
static uint64_t
next_due(const struct app_objects *o, unsigned int port, uint64_t rx)
{
	uint64_t next = UINT64_MAX;

	for (unsigned int i = 0; i < o->cfg->nb_wrs; i++) {
		const struct app_wr *w = &o->cfg->wr[i];

		if (!o->posted[i] && w->after_rx > rx && w->after_rx < next &&
		    qp_port(o->cfg, w->qpn) == port)
			next = w->after_rx;
	}
	return next;
}

/*
 * The lcore stopped receiving on the port after exactly g->rx frames: post
 * what is due there and run it on the lcore's engine until it has taken
 * effect (binds and invalidations are in the key table; data work requests
 * are with the requester, whose packets the lcore sends before it
 * receives again), then let the lcore go on.  The
 * lcore is at a quiescent point: it holds no key between bursts, so it may
 * report that while a LOCAL_INV waits for a grace period.
 */
static void
gate_fn(struct mwp_rx_gate *g, struct mwp_engine *eng, unsigned int lcore_id)
{
	struct app_gate *ag = container_of(g, struct app_gate, g);
	struct app_objects *o = ag->o;

	const uint64_t patience = rte_get_tsc_hz() / 100;	/* 10 ms */
	uint64_t deadline = rte_rdtsc() + patience;

	post_due(o, ag->port, g->rx);
	/* A WQE that waits on the peer (a LOCAL_INV behind an RC SEND not yet
	 * acknowledged) cannot finish here: the ACK is traffic this lcore has
	 * yet to receive.  Give up waiting once nothing moves for a while;
	 * the main lcore's housekeeping runs it later. */
	while (app_objects_pending(o) != 0 && rte_rdtsc() < deadline) {
		mwp_reader_quiescent(o->ctx, lcore_id);
		/* the QPs are this lcore's engine's: run it here */
		if (mwp_engine_run(eng, rte_rdtsc()) != 0)
			deadline = rte_rdtsc() + patience;
	}
	g->next = next_due(o, ag->port, g->rx);
}

struct mwp_rx_gate *
app_objects_gate(struct app_objects *o, uint16_t port)
{
	struct app_gate *ag = &o->gate[port];

	if (o->ctx == NULL || next_due(o, port, 0) == UINT64_MAX)
		return NULL;
	ag->o = o;
	ag->port = port;
	ag->g.rx = 0;
	ag->g.next = next_due(o, port, 0);
	ag->g.fn = gate_fn;
	return &ag->g;
}

/* Run the start-up work requests (after_rx 0) until they are complete. */
static int
run_wrs(struct app_objects *o)
{
	post_due(o, UINT_MAX, 0);
	for (int spin = 0; spin < 100000; spin++) {
		unsigned int done = o->wr_ok + o->wr_failed;

		app_objects_collect(o);
		/* unsignaled successes give no completion: stop when the
		 * device has nothing left to do */
		if (app_objects_pending(o) == 0 && mwp_poll(o->ctx) == 0 &&
		    o->wr_ok + o->wr_failed == done)
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
	o->cfg = cfg;
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
		app_fill(c, o->mem[i]);
		o->mr[i] = c->has_rkey ?
			mwp_reg_mr_key(o->pd[c->pd], o->mem[i], c->length,
				       c->has_iova ? c->iova : (uintptr_t)o->mem[i],
				       (int)c->access, c->rkey) :
			mwp_reg_mr_iova(o->pd[c->pd], o->mem[i], c->length,
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
			.cap = { .max_send_wr = 256, .max_send_sge = APP_WR_MAX_SGE,
				 .max_recv_sge = 4, .max_inline_data = 256 },
		};
		unsigned int recvs = c->recv_count;
		int ret;

		for (unsigned int r = 0; r < cfg->nb_recvs; r++)
			recvs += cfg->recv[r].qpn == c->qpn;
		ia.cap.max_recv_wr = RTE_MAX(recvs, 1u);

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
		if (ret == 0 && c->has_remote_mac)
			ret = mwp_qp_set_peer_mac(o->qp[i], &c->remote_mac);
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
	for (unsigned int i = 0; i < cfg->nb_recvs; i++) {
		const struct app_recv *r = &cfg->recv[i];
		struct ibv_sge sge[RTE_DIM(r->sge)];
		struct ibv_recv_wr wr = { .wr_id = r->wr_id, .sg_list = sge,
					  .num_sge = (int)r->nb_sge };
		struct ibv_recv_wr *bad;
		int ret;

		for (unsigned int g = 0; g < r->nb_sge; g++) {
			sge[g].addr = mr_sge_addr(cfg, o, r->sge[g].mr, r->sge[g].addr);
			sge[g].length = r->sge[g].length;
			sge[g].lkey = o->mr[r->sge[g].mr]->lkey;
		}
		ret = ibv_post_recv(find_qp(cfg, o, r->qpn), &wr, &bad);
		if (ret != 0) {
			fprintf(stderr, "mwpath: %s: [%s]: posting failed: %s\n", cfg->file,
				r->section, strerror(ret));
			return -1;
		}
	}
	return run_wrs(o);
nomem:
	fprintf(stderr, "mwpath: out of memory for the configuration's objects\n");
	return -1;
}

void
app_objects_print(FILE *out, const struct app_objects *o)
{
	if (o->ctx == NULL)
		return;
	unsigned int unposted = 0;

	for (unsigned int i = 0; i < o->cfg->nb_wrs; i++)
		unposted += !o->posted[i];
	fprintf(out, "verbs: %" PRIu32 " live keys; work requests: %u posted, %u ok, "
		"%u failed, %u never posted (after_rx not reached); receives: %u ok, "
		"%u failed, %u flushed\n",
		mwp_keys_count(mwp_device_keys(o->ctx)), o->wr_posted, o->wr_ok,
		o->wr_failed, unposted, o->recv_ok, o->recv_failed, o->recv_flushed);
	for (unsigned int i = 0; i < o->nb_qps; i++) {
		struct mwp_qp_info qi;
		const struct mwp_qp_stats *s = &qi.resp;

		if (mwp_qp_query_info(o->qp[i], &qi) != 0)
			continue;
		fprintf(out, "  qp %#x %s %s: in %" PRIu64 " acks %" PRIu64
			" naks %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64
			" (0x60/61/62/63) rnr %" PRIu64 " dups %" PRIu64
			" read-resps %" PRIu64 " atomics %" PRIu64 "\n",
			o->qp[i]->qp_num, o->qp[i]->qp_type == IBV_QPT_RC ? "rc" : "uc",
			app_qp_state_name(o->qp[i]->state), s->rx_pkts, s->acks,
			s->naks[0], s->naks[1], s->naks[2], s->naks[3], s->rnr_naks,
			s->duplicates, s->read_resps, s->atomics);
		if (qi.req.pkts != 0) {
			const struct mwp_req_stats *r = &qi.req;

			fprintf(out, "    requester: sent %" PRIu64 " (+%" PRIu64 " again), "
				"answers %" PRIu64 ", naks seq %" PRIu64 " rnr %" PRIu64
				" fatal %" PRIu64 ", timeouts %" PRIu64 ", implicit %" PRIu64
				", dup %" PRIu64 " ghost %" PRIu64 " bad %" PRIu64 "\n",
				r->pkts, r->retrans, r->acks, r->seq_naks, r->rnr_naks,
				r->fatal_naks, r->timeouts, r->implicit_naks, r->dup_resps,
				r->ghost_resps, r->bad_resps);
		}
	}
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
