/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "mwp_device.h"
#include "mwp_verbs.h"

struct ibv_pd *
mwp_alloc_pd(struct ibv_context *ctx)
{
	struct mwp_dev *d = to_mdev(ctx);
	struct mwp_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	pd->ibpd.context = ctx;
	pd->ibpd.handle = d->next_pd++;
	TAILQ_INSERT_TAIL(&d->pds, pd, next);
	d->nb_pds++;
	pthread_mutex_unlock(&d->lock);
	return &pd->ibpd;
}

int
mwp_dealloc_pd(struct ibv_pd *ibpd)
{
	struct mwp_pd *pd = to_mpd(ibpd);
	struct mwp_dev *d = to_mdev(ibpd->context);

	pthread_mutex_lock(&d->lock);
	if (pd->users != 0) {
		pthread_mutex_unlock(&d->lock);
		return EBUSY;
	}
	TAILQ_REMOVE(&d->pds, pd, next);
	d->nb_pds--;
	pthread_mutex_unlock(&d->lock);
	free(pd);
	return 0;
}
