/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWPATH_H
#define MWPATH_H

/**
 * @file
 * libmwpath: a RoCEv2 datapath for DPDK, built around memory windows.
 *
 * This umbrella header pulls in the public API, which is every installed
 * header and nothing else (lib/version.map exports what they declare):
 *  - roce_hdr.h, roce_opcode.h: the wire format and the opcode table;
 *  - roce_parse.h, roce_icrc.h: classifying frames, the invariant CRC;
 *  - roce_build.h: building frames (requests and responses);
 *  - mwp_stats.h, mwp_drop.h, mwp_deny.h: counters, drop reasons, refusals;
 *  - mwp_port.h: ports;
 *  - mwp_engine.h: engines and queues, who runs each QP, and a queue's rx
 *    and tx (mwp_queue_rx, mwp_queue_tx): the datapath's entry points;
 *  - mwp_ctrl.h, mwp_neigh.h, mwp_guard.h: the counters of the control
 *    path (ARP, neighbour discovery, ICMP echo), the neighbour table, the
 *    guessing defence;
 *  - mwp_verbs.h: the verbs face (devices, PDs, MRs, MWs, CQs, QPs);
 *  - mwp_query.h: a QP's datapath state and counters, a region's and a
 *    window's description;
 *  - mwp_keys.h: the R_Key table as its readers see it;
 *  - mwp_log.h: the library's rte_log type.
 *
 * The library never initialises the EAL and never opens a port: the caller
 * (the mwpath program, a test, an embedding application) does.
 *
 * Errors, one convention per layer:
 *  - the wire and the keys (roce_*.h, mwp_keys.h): 0 or a negative errno
 *    (-EINVAL, -ENOSPC, -EEXIST, -ENOENT), as DPDK's datapath calls; a
 *    frame the parser refuses is an enum mwp_drop, never an errno;
 *  - ports, engines, queues, the control path (mwp_port.h, mwp_engine.h,
 *    mwp_neigh.h): constructors return NULL with rte_errno set, as DPDK's
 *    do; other calls 0 or a positive errno;
 *  - the verbs face (mwp_verbs.h, mwp_query.h): as libibverbs, NULL with
 *    errno set, or 0 or a positive errno value.
 * Functions that count (bursts, work done) return counts and cannot fail.
 */

#include "mwp_ctrl.h"
#include "mwp_deny.h"
#include "mwp_drop.h"
#include "mwp_engine.h"
#include "mwp_guard.h"
#include "mwp_keys.h"
#include "mwp_log.h"
#include "mwp_neigh.h"
#include "mwp_port.h"
#include "mwp_query.h"
#include "mwp_stats.h"
#include "roce_build.h"
#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "roce_parse.h"

#include "mwp_verbs.h"

/**
 * The library's version, "MAJOR.MINOR.PATCH".
 *
 * @return
 *   A static string.
 */
const char *mwp_version(void);

#endif /* MWPATH_H */
