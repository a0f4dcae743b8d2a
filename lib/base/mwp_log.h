/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_LOG_H
#define MWP_LOG_H

/**
 * @file
 * mwpath's rte_log type ("mwpath", default level INFO) and its macro.
 * Never used on the per-packet path.
 */

#include <rte_log.h>

/** The rte_log type of libmwpath and the mwpath program. */
extern int mwp_logtype;

/** Log a line: MWP_LOG(ERR, "bad thing %d", x); a newline is added. */
#define MWP_LOG(level, fmt, ...)					\
	rte_log(RTE_LOG_##level, mwp_logtype, "mwpath: " fmt "\n",	\
		##__VA_ARGS__)

#endif /* MWP_LOG_H */
