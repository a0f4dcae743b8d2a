/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "mwp_device.h"
#include "mwp_errno.h"
#include "mwp_verbs.h"

static void
pd_release(struct mwp_dev_obj *o)
{
	free(container_of(o, struct mwp_pd, obj));
}

struct ibv_pd *
mwp_alloc_pd(struct ibv_context *ctx)
{
	struct mwp_dev *d = to_mdev(ctx);
	struct mwp_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return mwp_null_errno(ENOMEM);
	pd->ibpd.context = ctx;
	pd->ibpd.handle = __atomic_fetch_add(&d->next_pd, 1, __ATOMIC_RELAXED);
	mwp_dev_obj_add(d, &d->pds, &pd->obj, pd_release);
	return &pd->ibpd;
}

int
mwp_dealloc_pd(struct ibv_pd *ibpd)
{
	return mwp_dev_obj_del(&to_mpd(ibpd)->obj);
}
