/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM's ids: a table of max_ids slots (a power of two) where an id's
 * local communication ID is a random number in its high bits and the
 * slot in its low bits, so that a message finds its id in one step and a
 * stale or forged ID finds none; the MADs an id sends, kept for the
 * retries and duplicates; timewait; the listeners.
 */
#include <errno.h>
#include <string.h>

#include <rte_random.h>

#include "mwp_cm_priv.h"

struct mwp_cm_id *
cm_id_new(struct mwp_cm *cm, enum cm_state state, void *context)
{
	const uint32_t slots = 1u << cm->id_bits;
	struct mwp_cm_id *id = NULL;
	uint32_t hi;

	if (cm->nb_ids >= cm->max_ids)
		return NULL;
	/* a random free slot: IDs of a busy CM do not come in order */
	for (uint32_t i = 0, s = (uint32_t)rte_rand() & (slots - 1); i < slots;
	     i++, s = (s + 1) & (slots - 1))
		if (cm->ids[s].state == CM_FREE) {
			id = &cm->ids[s];
			break;
		}
	if (id == NULL)
		return NULL;
	/* shared (mwp_cm_share): the top bits are our part */
	do {
		hi = (uint32_t)rte_rand() >> cm->id_bits;
		if (cm->part_bits != 0)
			hi = (hi & (UINT32_MAX >> (cm->part_bits + cm->id_bits))) |
			     cm->part << (32 - cm->part_bits - cm->id_bits);
	} while (hi == 0);
	memset(id, 0, sizeof(*id));
	id->cm = cm;
	id->state = state;
	id->user = true;
	id->context = context;
	id->local_id = hi << cm->id_bits | (uint32_t)(id - cm->ids);
	cm->nb_ids++;
	return id;
}

struct mwp_cm_id *
cm_id_find(struct mwp_cm *cm, uint32_t local_id)
{
	struct mwp_cm_id *id = &cm->ids[local_id & ((1u << cm->id_bits) - 1)];

	if (id->state == CM_FREE || id->state == CM_LISTEN || id->local_id != local_id)
		return NULL;
	return id;
}

void
cm_id_free(struct mwp_cm_id *id)
{
	struct mwp_cm *cm = id->cm;

	cm_event_forget(cm, id);
	memset(id, 0, sizeof(*id));
	id->state = CM_FREE;
	cm->nb_ids--;
}

uint64_t
cm_timeout_tsc(const struct mwp_cm *cm, uint8_t t)
{
	/* 4.096 us * 2^t, the exponent a peer gives capped at
	 * CM_PEER_TIMEOUT_MAX: what it sends must not keep an id for days */
	const uint64_t ns = UINT64_C(4096) << RTE_MIN(t, (uint8_t)CM_PEER_TIMEOUT_MAX);

	return 2 * (ns / 1000) * (cm->hz / 1000000);
}

uint64_t
cm_new_tid(struct mwp_cm *cm)
{
	return (uint64_t)cm->tid_hi << 32 | ++cm->tid_seq;
}

/* A timer set at deadline: the scan must not wait past it. */
static void
due(struct mwp_cm *cm, uint64_t deadline)
{
	if (deadline < cm->next_due)
		cm->next_due = deadline;
	cm_wake(cm, deadline);
}

void
cm_send_to(struct mwp_cm *cm, const struct ibv_ah_attr *av, const uint8_t *mad)
{
	int ret = cm_gsi_send(cm->gsi, av, mad);

	if (ret == 0)
		cm->st.tx_mads++;
	else
		cm->st.send_full++;	/* the peer's retry brings it back */
}

void
cm_id_send(struct mwp_cm_id *id, const uint8_t *mad, bool retry)
{
	struct mwp_cm *cm = id->cm;

	memcpy(id->last_mad, mad, ROCE_MAD_BYTES);
	id->last_attr = mad_attr(mad);
	cm_send_to(cm, &id->av, mad);
	if (!retry) {
		id->rt.deadline = 0;
		return;
	}
	memcpy(id->rt.mad, mad, ROCE_MAD_BYTES);
	id->rt.interval = cm_timeout_tsc(cm, id->peer_timeout);
	id->rt.deadline = cm->now + id->rt.interval;
	id->rt.left = id->max_retries;
	due(cm, id->rt.deadline);
}

void
cm_id_resend(struct mwp_cm_id *id)
{
	struct mwp_cm *cm = id->cm;

	id->rt.left--;
	id->rt.deadline = cm->now + id->rt.interval;
	due(cm, id->rt.deadline);
	if (cm_gsi_send(cm->gsi, &id->av, id->rt.mad) == 0)
		cm->st.retries++;
	else
		cm->st.send_full++;
}

void
cm_id_wait(struct mwp_cm_id *id, uint64_t interval)
{
	id->rt.interval = interval;
	id->rt.deadline = id->cm->now + interval;
	due(id->cm, id->rt.deadline);
}

void
cm_id_stop(struct mwp_cm_id *id)
{
	id->rt.deadline = 0;
}

void
cm_id_close(struct mwp_cm_id *id)
{
	cm_id_stop(id);
	id->state = CM_TIMEWAIT;
	id->rt.deadline = id->cm->now + id->cm->timewait;
	due(id->cm, id->rt.deadline);
}

struct mwp_cm_id *
cm_listener(struct mwp_cm *cm, uint64_t service_id)
{
	const uint32_t slots = 1u << cm->id_bits;

	for (uint32_t i = 0; i < slots; i++) {
		struct mwp_cm_id *l = &cm->ids[i];

		if (l->state == CM_LISTEN && ((service_id ^ l->service_id) & l->mask) == 0)
			return l;
	}
	return NULL;
}
