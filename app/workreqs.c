/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's [wr N] sections: posted at start (after_rx 0) and
 * run to completion, or posted by the lcore's rx gate when the port has
 * received exactly after_rx frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "objects.h"

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
	struct ibv_qp *qp = app_objects_qp(o, w->qpn);
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
				      app_mr_sge_addr(o, w->sge[g].mr, w->sge[g].addr);
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
	/* addr names a byte of the region as the configuration does (an
	 * iova, or an offset where the region has none), as for a data work
	 * request's buffer */
	if (o->mw[w->mw]->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = wr_id, .send_flags = wr.send_flags,
			.bind_info = { .mr = w->length ? o->mr[w->mr] : NULL,
				       .addr = w->length ? app_mr_sge_addr(o, w->mr, w->addr) : 0,
				       .length = w->length, .mw_access_flags = w->access } };

		return ibv_bind_mw(qp, o->mw[w->mw], &b);
	}
	wr.bind_mw.mw = o->mw[w->mw];
	wr.bind_mw.rkey = (o->mw[w->mw]->rkey & ~0xffu) | w->key;
	wr.bind_mw.bind_info.mr = o->mr[w->mr];
	wr.bind_mw.bind_info.addr = app_mr_sge_addr(o, w->mr, w->addr);
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
		ret = post_wr(cfg, o, w, w->wr_id);
		if (ret != 0) {
			app_conf_err(cfg->file, w->section, NULL, "posting failed: %s",
				     strerror(ret));
			__atomic_fetch_add(&o->wr_failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_fetch_add(&o->wr_posted, 1, __ATOMIC_RELAXED);
	}
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

/* Is qp one of port's, run by the engine eng_id (the gate's lcore)? */
static bool
gated_qp(const struct app_objects *o, unsigned int i, unsigned int port,
	 unsigned int eng_id)
{
	unsigned int owner;
	uint16_t q;

	return o->cfg->qp[i].port == port &&
	       mwp_qp_owner(o->qp[i], &owner, &q) == 0 && owner == eng_id;
}

/* Work requests posted to the gate's QPs and not yet executed. */
static unsigned int
gate_pending(const struct app_objects *o, unsigned int port, unsigned int eng_id)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->nb_qps; i++)
		if (gated_qp(o, i, port, eng_id))
			n += mwp_qp_sq_queued(o->qp[i]);
	return n;
}

/* Can none of the gate's queued work requests run before the peer
 * answers?  True when each of its QPs with work queued either waits behind
 * a data work request with the requester (on its way to the wire, or
 * awaiting the peer), or is in no state to run it. */
static bool
gate_waits_for_peer(const struct app_objects *o, unsigned int port, unsigned int eng_id)
{
	for (unsigned int i = 0; i < o->nb_qps; i++) {
		struct ibv_qp *qp = o->qp[i];
		enum ibv_qp_state st = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);

		if (!gated_qp(o, i, port, eng_id) || mwp_qp_sq_queued(qp) == 0)
			continue;
		if ((st == IBV_QPS_RTS || st == IBV_QPS_SQD || st == IBV_QPS_ERR) &&
		    mwp_qp_sq_with_requester(qp) == 0)
			return false;
	}
	return true;
}

/*
 * The lcore stopped receiving on the port after exactly g->rx frames: post
 * what is due there and run it on the lcore's engine until it has taken
 * effect (binds and invalidations are in the key table; data work requests
 * are with the requester, whose packets the lcore sends before it
 * receives again), then let the lcore go on.  The lcore is at a quiescent
 * point: it holds no key between bursts, so it may report that while a
 * LOCAL_INV waits for a grace period.
 *
 * There is no time limit: however long the lcore or the host is held up,
 * frame rx + 1 is not processed before the work due at rx has run.  The
 * one wait that ends without it is a work request fenced behind a data
 * work request awaiting the peer (a LOCAL_INV behind an RC SEND not yet
 * acknowledged): the answer is traffic this lcore has yet to receive, so
 * the gate lets the lcore go on once nothing moves and that is all that
 * is left, and the engine runs the rest when the answer comes.
 */
static void
gate_fn(struct mwp_rx_gate *g, struct mwp_engine *eng, unsigned int lcore_id)
{
	struct app_gate *ag = container_of(g, struct app_gate, g);
	struct app_objects *o = ag->o;

	const unsigned int eng_id = mwp_engine_id(eng);

	post_due(o, ag->port, g->rx);
	if (o->gate_delay_us != 0)
		rte_delay_us_sleep(o->gate_delay_us);
	while (gate_pending(o, ag->port, eng_id) != 0) {
		mwp_reader_quiescent(o->ctx, lcore_id);
		/* the port's QPs are this lcore's engine's: run it here */
		if (mwp_engine_run(eng, rte_rdtsc()) == 0 &&
		    gate_waits_for_peer(o, ag->port, eng_id))
			break;
	}
	g->next = next_due(o, ag->port, g->rx);
}

struct mwp_rx_gate *
app_objects_gate(struct app_objects *o, uint16_t port)
{
	struct app_gate *ag = &o->gate[port];

	const char *delay = getenv("MWPATH_DEBUG_GATE_DELAY_US");

	if (o->ctx == NULL || next_due(o, port, 0) == UINT64_MAX)
		return NULL;
	/* tests: hold the lcore up between posting and running the work */
	if (delay != NULL)
		o->gate_delay_us = (unsigned int)strtoul(delay, NULL, 10);
	ag->o = o;
	ag->port = port;
	ag->g.rx = 0;
	ag->g.next = next_due(o, port, 0);
	ag->g.fn = gate_fn;
	return &ag->g;
}

/* The first start-up work request that failed: its completion, or NULL. */
static const struct ibv_wc *
first_failure(const struct app_objects *o)
{
	for (unsigned int c = 0; c < APP_MAX_OBJ; c++)
		for (size_t k = 0; k < o->log[c].n; k++) {
			const struct ibv_wc *wc = &o->log[c].wc[k];

			if (!(wc->opcode & IBV_WC_RECV) && wc->status != IBV_WC_SUCCESS &&
			    wc->status != IBV_WC_WR_FLUSH_ERR)
				return wc;
		}
	return NULL;
}

/*
 * Run the start-up work requests (after_rx 0) until they have taken effect.
 * No lcore runs yet: one that cannot be posted, or completes in error (a
 * bind past its region or with rights the region does not give, an
 * invalidation of a key that is not there), is the configuration's error.
 */
int
app_workreqs_start(struct app_objects *o)
{
	const struct app_config *cfg = o->cfg;
	const struct app_wr *w;
	const struct ibv_wc *wc;

	o->starting = true;
	post_due(o, UINT_MAX, 0);
	for (int spin = 0; spin < 100000 && o->wr_failed == 0; spin++) {
		unsigned int done = o->wr_ok + o->wr_failed;

		app_objects_collect(o);
		/* unsignaled successes give no completion: stop when the
		 * device has nothing left to do */
		if (app_objects_pending(o) == 0 && mwp_poll(o->ctx) == 0 &&
		    o->wr_ok + o->wr_failed == done)
			break;
	}
	o->starting = false;
	if (o->wr_failed == 0)
		return 0;
	/* posting failed (said by post_due), or a completion says why */
	wc = first_failure(o);
	w = wc != NULL ? app_config_wr(cfg, wc->wr_id) : NULL;
	if (w != NULL)
		app_conf_err(cfg->file, w->section, NULL,
			     "%s failed at start: %s (%s)%s", app_wr_ops[w->op].name,
			     ibv_wc_status_str(wc->status), app_wc_status_name(wc->status),
			     wc->status == IBV_WC_MW_BIND_ERR ?
			     ": the window must lie inside its region, which must have "
			     "mw_bind and the rights it gives (local_write for remote_write "
			     "or remote_atomic), in the window's PD" : "");
	return -1;
}
