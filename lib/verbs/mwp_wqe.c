/* SPDX-License-Identifier: BSD-3-Clause */
/* A send work request's local buffers (mwp_wqe.h). */
#include <rte_memcpy.h>

#include "mwp_access.h"
#include "mwp_place.h"
#include "mwp_wqe.h"

const uint8_t *
mwp_wqe_span(const struct mwp_qp *qp, const struct mwp_swqe *e, uint64_t off, uint32_t len,
	     bool write, uint32_t *span)
{
	const struct mwp_wqe *w = &e->w;
	const uint32_t pd = qp->ibqp.pd->handle;

	if (w->flags & MWP_WQE_F_INLINE) {
		*span = (uint32_t)RTE_MIN((uint64_t)len, w->inline_len - off);
		return w->inline_data + off;
	}
	for (uint32_t i = 0; i < w->num_sge; i++) {
		const struct ibv_sge *s = &w->sge[i];
		const struct mwp_binding *b;

		if (off >= s->length) {
			off -= s->length;
			continue;
		}
		*span = (uint32_t)RTE_MIN((uint64_t)len, s->length - off);
		/* the first SGE's region, found when the WQE was prepared,
		 * while no key has left the table since; else look again (a
		 * region deregistered meanwhile is gone: NULL) */
		if (i == 0 && e->b0 != NULL && e->keys_gen == mwp_keys_gen(qp->dev->keys))
			b = e->b0;
		else
			b = mwp_keys_lookup(qp->dev->keys, s->lkey);
		return mwp_local_addr(b, pd, s->addr + off, *span, write);
	}
	return NULL;
}

bool
mwp_wqe_copy(const struct mwp_qp *qp, const struct mwp_swqe *e, uint64_t off, uint8_t *buf,
	     uint32_t len, bool into_wqe)
{
	while (len != 0) {
		uint32_t n;
		uint8_t *sge = (uint8_t *)(uintptr_t)mwp_wqe_span(qp, e, off, len, into_wqe, &n);

		if (sge == NULL || n == 0)
			return false;
		if (into_wqe)
			mwp_place(sge, buf, n);	/* a READ's response */
		else
			rte_memcpy(buf, sge, n);
		buf += n;
		off += n;
		len -= n;
	}
	return true;
}

enum ibv_wc_status
mwp_wqe_prepare(struct mwp_qp *qp, struct mwp_swqe *e)
{
	const struct mwp_wqe *w = &e->w;
	const bool result = w->opcode == IBV_WR_RDMA_READ ||
			    w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			    w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	const uint32_t mtu = mwp_qp_mtu_bytes(qp);
	uint64_t total = 0;

	/* read before the lookups: a key leaving after it changes it */
	e->keys_gen = mwp_keys_gen(qp->dev->keys);
	e->b0 = NULL;
	if (w->flags & MWP_WQE_F_INLINE) {
		total = w->inline_len;
	} else {
		for (uint32_t i = 0; i < w->num_sge; i++) {
			const struct ibv_sge *s = &w->sge[i];
			const struct mwp_binding *b;

			if (s->length == 0)
				continue;
			/* the region found for this key last time while no
			 * descriptor has left the table since: programs post
			 * from one buffer or a few */
			b = mwp_keys_lookup_memo(qp->dev->keys, &qp->lkey, s->lkey, e->keys_gen);
			if (mwp_local_addr(b, qp->ibqp.pd->handle, s->addr, s->length,
					   result) == NULL)
				return IBV_WC_LOC_PROT_ERR;
			/* kept if no descriptor was leaving when the
			 * generation was read (it was even) */
			if (i == 0 && !(e->keys_gen & 1))
				e->b0 = b;
			total += s->length;
		}
	}
	/* C9-94: no message longer than 2^31 bytes */
	if (total > MWP_DMA_LEN_MAX)
		return IBV_WC_LOC_LEN_ERR;
	e->total = (uint32_t)total;
	if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		e->npsn = 1;
	else
		e->npsn = total == 0 ? 1 : (uint32_t)((total + mtu - 1) / mtu);
	e->started = 0;
	return IBV_WC_SUCCESS;
}
