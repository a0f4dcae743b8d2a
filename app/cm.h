/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_CM_H
#define MWP_APP_CM_H

/*
 * The connection manager of each port with an address (mwp_cm.h): QP1
 * exists there, and a CM MAD gets the answer a kernel with no listener
 * gives (a REQ: REJ "invalid service ID"; a SIDR REQ: "no service"; a
 * DREQ: DREP).  The app has no listeners of its own.
 */

#include <stdio.h>

#include <rte_ethdev.h>

#include "mwp_cm.h"
#include "objects.h"
#include "summary.h"

struct app_cm {
	struct ibv_context *ctx;		/* the CM's own device, when the
						 * configuration made none */
	struct mwp_cm *cm[RTE_MAX_ETHPORTS];	/* by port; NULL: none */
};

/** A CM on each port with an IPv4 or IPv6 address and not cm = off, in
 *  the objects' device (after its objects: their keys and QPNs do not
 *  move).  A port where QP1 cannot be made is said so and runs without.
 *  0 or -1. */
int app_cm_start(struct app_cm *c, const struct app_config *cfg, const struct app_run *run,
		 struct app_objects *o);

/** Each CM's MADs and timers (the main lcore's housekeeping). */
void app_cm_tick(struct app_cm *c, const struct app_run *run);

/** One line per port whose CM saw a MAD. */
void app_cm_print(FILE *out, struct app_cm *c, const struct app_run *run);

/** Free the CMs (before the objects' device and the ports go). */
void app_cm_stop(struct app_cm *c, const struct app_run *run);

#endif
