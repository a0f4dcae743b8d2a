/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef BENCH_CC_H
#define BENCH_CC_H

/* The --cc option of the benchmarks that make a port of their own
 * (bench_resp, bench_req): congestion control on or off, to set the two
 * side by side (bench/cc_cost.py). */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mwp_port.h"

/* --cc on|off: the port's congestion control as the configuration
 * gives it by default (ECT(0) on what it sends, CNPs for CE marks, DCQCN),
 * or none at all (not ECN-capable, no CNPs, no rate control). */
static bool bench_cc_on = true;

static inline int
bench_cc_option(const char *arg)
{
	if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0) {
		fprintf(stderr, "--cc: on or off\n");
		return -1;
	}
	bench_cc_on = strcmp(arg, "on") == 0;
	return 0;
}

static inline void
bench_cc_conf(struct mwp_port_cc *cc)
{
	if (bench_cc_on) {
		mwp_port_cc_defaults(cc);
	} else {
		memset(cc, 0, sizeof(*cc));
		cc->ecn = MWP_ECN_MODE_OFF;
	}
}

#endif /* BENCH_CC_H */
