/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_TELEMETRY_H
#define MWP_APP_TELEMETRY_H

#include "objects.h"
#include "summary.h"

/**
 * Register /mwpath/stats, /mwpath/qp and /mwpath/keys with rte_telemetry.
 * run and objs must outlive the EAL (they are read until rte_eal_cleanup).
 */
void app_telemetry_init(const struct app_run *run, const struct app_objects *objs);

#endif
