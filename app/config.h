/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_CONFIG_H
#define MWP_APP_CONFIG_H

#include <stdbool.h>

#include <rte_config.h>

#include "mwpath.h"

/** Default RoCE path MTU of a port. */
#define APP_DEFAULT_MTU 1024

/** The configuration file, as far as this version reads it. */
struct app_config {
	const char *file;			/**< where it came from */
	bool port_present[RTE_MAX_ETHPORTS];	/**< [port N] exists */
	struct mwp_port_conf port[RTE_MAX_ETHPORTS]; /**< its settings */
};

/**
 * Read and check a configuration file.  On error, prints one line naming
 * the file, line, section and key to stderr.
 *
 * @return
 *   0, or -1 after printing the error.
 */
int app_config_load(const char *file, struct app_config *cfg);

/**
 * The settings for ethdev port N: its section, or the defaults
 * (the device's own MAC, no IP address, path MTU 1024).
 */
void app_config_port(const struct app_config *cfg, unsigned int port,
		     struct mwp_port_conf *out);

#endif
