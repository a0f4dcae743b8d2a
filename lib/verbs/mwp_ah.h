/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_AH_H
#define MWP_AH_H

/* An address handle: where a UD send goes (mwp_ah.c).  Private. */

#include <stdint.h>

#include "mwp_device.h"

/* Where a UD send goes, as its address handle says.  A work request
 * carries a copy: the handle may be destroyed while it waits. */
struct mwp_ud_dest {
	uint8_t gid[16];	/* IPv6, or IPv4-mapped (::ffff:a.b.c.d) */
	uint32_t flow_label;	/* IPv6 only */
	uint8_t ipv4;		/* gid is IPv4-mapped */
	uint8_t tclass;		/* DSCP and ECN: the IP header's TOS byte */
	uint8_t hop_limit;	/* TTL */
	uint8_t sl;
};

struct mwp_ah {
	struct ibv_ah ibah;
	struct mwp_dev_obj obj;		/* in the device's list of handles */
	struct mwp_ud_dest dest;
};

#define to_mah(a)	container_of(a, struct mwp_ah, ibah)

#endif /* MWP_AH_H */
