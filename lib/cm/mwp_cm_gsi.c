/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1, the GSI, as the CM uses it: a UD QP numbered 1 with the well-known
 * Q_Key, on the port, its receives (40-byte GRH area + a 256-byte MAD
 * each) posted in one region and posted again as soon as a MAD is taken,
 * and a ring of send slots for the MADs going out.  Every MAD leaves with
 * a copy of its address handle (a UD send keeps one), so the handle is
 * destroyed as soon as the send is posted.  A MAD that finds every slot
 * taken (a burst of connects, an answer to each of a flood of REQs) waits
 * in a FIFO of its own, posted as sends complete; only when that is full
 * too is it dropped (counted: the peer's retry or ours brings it back).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mwp_cm_priv.h"
#include "mwp_errno.h"
#include "mwp_log.h"
#include "mwp_port.h"
#include "mwp_verbs.h"

#define GRH_BYTES 40
#define RECV_BYTES (GRH_BYTES + ROCE_MAD_BYTES)
/* wr_id of a send: this bit and the slot */
#define WR_SEND (UINT64_C(1) << 63)

/* A MAD waiting for a send slot. */
struct pending {
	struct ibv_ah_attr av;
	uint8_t mad[ROCE_MAD_BYTES];
};

struct mwp_cm_gsi {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* receives, then send slots */
	uint32_t recv_depth, send_depth;
	uint32_t *free_slots;	/* a stack of free send slots */
	uint32_t nb_free;
	struct pending *wait;	/* MADs waiting for a slot: a FIFO */
	uint32_t wait_size, wait_head, wait_count;
};

static uint8_t *
recv_buf(const struct mwp_cm_gsi *g, uint32_t i)
{
	return g->buf + (size_t)i * RECV_BYTES;
}

static uint8_t *
send_buf(const struct mwp_cm_gsi *g, uint32_t i)
{
	return g->buf + (size_t)g->recv_depth * RECV_BYTES + (size_t)i * ROCE_MAD_BYTES;
}

static int
post_recv(struct mwp_cm_gsi *g, uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)recv_buf(g, i), .length = RECV_BYTES,
			       .lkey = g->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(g->qp, &wr, &bad);
}

/* QP1 through INIT (the GSI Q_Key), RTR and RTS. */
static int
qp_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = ROCE_GSI_QKEY };
	int ret;

	ret = mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_QKEY);
	if (ret != 0)
		return ret;
	a.qp_state = IBV_QPS_RTR;
	ret = mwp_modify_qp(qp, &a, IBV_QP_STATE);
	if (ret != 0)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

struct ibv_cq *
cm_gsi_cq(const struct mwp_cm_gsi *g)
{
	return g->cq;
}

void
cm_gsi_destroy(struct mwp_cm_gsi *g)
{
	if (g == NULL)
		return;
	if (g->qp != NULL)
		mwp_destroy_qp(g->qp);
	if (g->mr != NULL)
		mwp_dereg_mr(g->mr);
	if (g->cq != NULL)
		mwp_destroy_cq(g->cq);
	if (g->pd != NULL)
		mwp_dealloc_pd(g->pd);
	free(g->buf);
	free(g->free_slots);
	free(g->wait);
	free(g);
}

struct mwp_cm_gsi *
cm_gsi_create(struct ibv_context *ctx, struct mwp_port *port, uint32_t recv_depth,
	      uint32_t send_depth)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = send_depth, .max_recv_wr = recv_depth,
			 .max_send_sge = 1, .max_recv_sge = 1 } };
	const size_t len = (size_t)recv_depth * RECV_BYTES + (size_t)send_depth * ROCE_MAD_BYTES;
	struct mwp_cm_gsi *g = calloc(1, sizeof(*g));
	int err = ENOMEM;

	if (g == NULL)
		return mwp_null_errno(ENOMEM);
	g->recv_depth = recv_depth;
	g->send_depth = send_depth;
	g->buf = aligned_alloc(64, RTE_ALIGN(len, 64));
	g->free_slots = calloc(send_depth, sizeof(*g->free_slots));
	g->wait_size = 4 * send_depth;
	g->wait = calloc(g->wait_size, sizeof(*g->wait));
	if (g->buf == NULL || g->free_slots == NULL || g->wait == NULL)
		goto fail;
	memset(g->buf, 0, len);
	for (uint32_t i = 0; i < send_depth; i++)
		g->free_slots[g->nb_free++] = send_depth - 1 - i;
	g->pd = mwp_alloc_pd(ctx);
	g->cq = g->pd != NULL ? mwp_create_cq(ctx, (int)(recv_depth + send_depth)) : NULL;
	g->mr = g->cq != NULL ? mwp_reg_mr(g->pd, g->buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (g->mr == NULL) {
		err = errno;
		goto fail;
	}
	ia.send_cq = ia.recv_cq = g->cq;
	g->qp = mwp_create_qp_num(g->pd, &ia, ROCE_GSI_QPN);
	if (g->qp == NULL) {
		err = errno == EEXIST ? EBUSY : errno;
		goto fail;
	}
	err = qp_ready(g->qp);
	if (err == 0)
		err = mwp_port_attach_qp(port, g->qp);
	if (err == EEXIST)
		err = EBUSY;	/* the port's slot of QP1 is another QP's */
	for (uint32_t i = 0; err == 0 && i < recv_depth; i++)
		err = post_recv(g, i);
	if (err != 0)
		goto fail;
	return g;
fail:
	cm_gsi_destroy(g);
	return mwp_null_errno(err);
}

/* Post one MAD in a free slot: 0 or the errno. */
static int
post_mad(struct mwp_cm_gsi *g, const struct ibv_ah_attr *av, const uint8_t *mad)
{
	struct ibv_ah_attr a = *av;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				  .num_sge = 1 }, *bad;
	struct ibv_sge sge;
	struct ibv_ah *ah;
	uint32_t slot;
	int ret;

	ah = mwp_create_ah(g->pd, &a);
	if (ah == NULL)
		return errno;
	slot = g->free_slots[--g->nb_free];
	memcpy(send_buf(g, slot), mad, ROCE_MAD_BYTES);
	sge = (struct ibv_sge){ .addr = (uintptr_t)send_buf(g, slot), .length = ROCE_MAD_BYTES,
				.lkey = g->mr->lkey };
	wr.wr_id = WR_SEND | slot;
	wr.sg_list = &sge;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ROCE_GSI_QPN;
	wr.wr.ud.remote_qkey = ROCE_GSI_QKEY;
	ret = ibv_post_send(g->qp, &wr, &bad);
	if (ret != 0)
		g->free_slots[g->nb_free++] = slot;
	/* the send keeps its own copy of the address */
	mwp_destroy_ah(ah);
	return ret;
}

/* The MADs waiting, into the slots sends freed. */
static void
flush_waiting(struct mwp_cm_gsi *g)
{
	while (g->wait_count != 0 && g->nb_free != 0) {
		struct pending *p = &g->wait[g->wait_head];

		if (post_mad(g, &p->av, p->mad) != 0)
			MWP_LOG(ERR, "CM: a waiting MAD could not be sent");
		g->wait_head = (g->wait_head + 1) % g->wait_size;
		g->wait_count--;
	}
}

/* A receive's sender from its GRH area: the address QP1 answers. */
static bool
rx_from(struct mwp_cm_gsi *g, const struct ibv_wc *wc, struct cm_rx *rx)
{
	const uint8_t *b = recv_buf(g, (uint32_t)wc->wr_id);
	union ibv_gid local;

	if (wc->status != IBV_WC_SUCCESS || wc->byte_len < GRH_BYTES)
		return false;
	rx->mad = b + GRH_BYTES;
	rx->len = wc->byte_len - GRH_BYTES;
	rx->src_qp = wc->src_qp;
	return mwp_ah_attr_from_grh(wc, (const struct ibv_grh *)b, &rx->av, &local) == 0;
}

unsigned int
cm_gsi_poll(struct mwp_cm_gsi *g, unsigned int max,
	    void (*fn)(struct mwp_cm *cm, const struct cm_rx *rx), struct mwp_cm *cm)
{
	unsigned int mads = 0;
	struct ibv_wc wc[16];
	int n;

	while (mads < max && (n = ibv_poll_cq(g->cq, 16, wc)) > 0) {
		flush_waiting(g);
		for (int i = 0; i < n; i++) {
			struct cm_rx rx;

			if (wc[i].wr_id & WR_SEND) {
				g->free_slots[g->nb_free++] = (uint32_t)(wc[i].wr_id & ~WR_SEND);
				continue;
			}
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				continue;	/* QP1 going away */
			if (rx_from(g, &wc[i], &rx)) {
				fn(cm, &rx);
				mads++;
			} else {
				cm->st.bad_mads++;
			}
			if (post_recv(g, (uint32_t)wc[i].wr_id) != 0)
				MWP_LOG(ERR, "CM: QP1 receive %u not posted again",
					(unsigned int)wc[i].wr_id);
		}
	}
	flush_waiting(g);
	return mads;
}

void
cm_gsi_path_av(const struct mwp_cm_path *path, struct ibv_ah_attr *av)
{
	memset(av, 0, sizeof(*av));
	av->is_global = 1;
	av->port_num = 1;
	av->sl = path->sl;
	av->grh.dgid = path->dgid;
	av->grh.flow_label = path->flow_label;
	av->grh.traffic_class = path->traffic_class;
	av->grh.hop_limit = path->hop_limit != 0 ? path->hop_limit : 64;
}

int
cm_gsi_send(struct mwp_cm_gsi *g, const struct ibv_ah_attr *av, const uint8_t *mad)
{
	struct pending *p;

	if (g->nb_free != 0 && g->wait_count == 0)
		return post_mad(g, av, mad);
	if (g->wait_count == g->wait_size)
		return ENOBUFS;
	p = &g->wait[(g->wait_head + g->wait_count) % g->wait_size];
	p->av = *av;
	memcpy(p->mad, mad, ROCE_MAD_BYTES);
	g->wait_count++;
	return 0;
}

uint32_t
cm_gsi_pending(const struct mwp_cm_gsi *g)
{
	return g->send_depth - g->nb_free + g->wait_count;
}
