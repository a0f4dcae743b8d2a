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
	struct mwp_host *hosts;		/**< by ethdev port id: exception paths */
	struct mwp_xdp *xdps;		/**< by ethdev port id: net_af_xdp ports */
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

/** What the previous --stats-interval lines saw, for the next ones. */
struct app_interval {
	uint64_t tsc;			/**< when they were printed; 0: none yet */
	/** Each port's counters then. */
	struct {
		uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, accepted, dropped;
	} last[RTE_MAX_ETHPORTS];
};

/**
 * Print the end-of-run summary (one screen): first the run's time and its
 * average rates in and out, then each port's counters.
 */
void app_print_summary(FILE *out, const struct app_run *run);

/**
 * Print one line per port for --stats-interval: the time (UTC, ISO 8601
 * with milliseconds, and seconds since the lcores started), the packets,
 * bytes, accepted and dropped frames since the previous lines (since the
 * start, the first time), and the rates over that interval as testpmd
 * shows them: Rx-pps, Rx-bps, Tx-pps, Tx-bps (bits of the frames as
 * counted, without preamble, FCS or gap).
 *
 * @param out
 *   Where to print.
 * @param run
 *   The run.
 * @param iv
 *   Zeroed before the first call; updated.
 */
void app_print_interval(FILE *out, const struct app_run *run, struct app_interval *iv);

#endif
