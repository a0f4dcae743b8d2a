/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_SUMMARY_H
#define MWP_APP_SUMMARY_H

#include <stdio.h>

#include "mwp_pmd.h"

/** Everything the program runs, for reporting. */
struct app_run {
	unsigned int nb_lcores;		/**< polling lcores */
	struct mwp_lcore *lcores;	/**< their contexts */
	unsigned int nb_ports;		/**< ethdev ports in use */
	struct mwp_port **ports;	/**< by ethdev port id */
	struct mwp_flow_report *flows;	/**< by ethdev port id: rte_flow rules */
	uint64_t start_tsc;		/**< when the lcores started */
	double seconds;			/**< how long it ran */
	const char *stop_reason;	/**< why it stopped */
};

/** Sum the lcores' counters for one port. */
void app_port_stats(const struct app_run *run, uint16_t port_id,
		    struct mwp_stats *sum);

/** Sum the lcores' control path counters for one port. */
void app_port_ctrl_stats(const struct app_run *run, uint16_t port_id,
			 struct mwp_ctrl_stats *sum);

/** Print the end-of-run summary (one screen). */
void app_print_summary(FILE *out, const struct app_run *run);

/** Print one line of counters per port (for --stats-interval). */
void app_print_interval(FILE *out, const struct app_run *run);

#endif
