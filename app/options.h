/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_OPTIONS_H
#define MWP_APP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

/** The program's own options (those after "--"). */
struct app_options {
	const char *config;		/**< configuration file */
	uint32_t idle_exit_ms;		/**< 0: run until a signal */
	uint32_t stats_interval_s;	/**< 0: no periodic stats */
	uint32_t lcores_per_port;	/**< queues (and lcores) per port */
	const char *dump_dir;		/**< write objects/completions/MRs here */
	bool default_eal;		/**< no EAL options were given */
};

/** What app_options_parse decided. */
enum app_parse_result {
	APP_PARSE_RUN,		/**< go on */
	APP_PARSE_EXIT_OK,	/**< --help or --version was printed */
	APP_PARSE_EXIT_USAGE,	/**< a bad option; the message was printed */
};

/**
 * Parse the program's options (argv[0] is the program name).
 */
enum app_parse_result app_options_parse(int argc, char **argv,
					struct app_options *o);

/** Print the usage text to stdout. */
void app_usage(void);

/** The EAL arguments used when the user gives none (NULL-terminated). */
/**
 * Check the EAL's part of the command line (argv[1] to argv[argc - 1])
 * before the EAL sees it: a program option put before "--" gets a one-line
 * hint instead of the EAL's usage; a net_pcap rx_pcap that cannot be read
 * is named.  Returns 0, or -1 after printing one line.
 */
int app_options_check_eal(int argc, char **argv);

int app_default_eal_args(char ***argv_out, const char *prog);

/** Directory holding the bundled configuration and traffic. */
const char *app_conf_dir(void);

#endif
