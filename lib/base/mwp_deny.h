/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_DENY_H
#define MWP_DENY_H

/**
 * @file
 * Why the responder refused an access through an R_Key, with the AETH NAK
 * syndrome each refusal gets: declared once here and expanded into the
 * enum, the counters (mwp_stats.h) and the names, like the drop reasons
 * (mwp_drop.h).  The decision itself is the key layer's (mwp_access.h).
 */

#include <stdint.h>

/** Denials: _(SYM, NAK syndrome, text), in check order. */
#define MWP_FOREACH_DENY(_)						\
	_(QP_ACCESS,    0x61, "QP access flags do not allow the operation") \
	_(DMA_TOO_LONG, 0x61, "DMA length above 2^31 (C9-94)")		\
	_(UNKNOWN_KEY,  0x62, "no such R_Key (unknown, freed, or stale key byte)") \
	_(INVALID,      0x62, "key not valid (zero-length window)")	\
	_(PD_MISMATCH,  0x62, "key's PD is not the QP's PD")		\
	_(WRONG_QP,     0x62, "Type 2B window bound to another QP (o10-37.2.43)") \
	_(ACCESS,       0x62, "access not granted by the key")		\
	_(BOUNDS,       0x62, "outside the window or region")		\
	_(MR_BOUNDS,    0x62, "outside the memory region")		\
	_(WRITE_LENGTH, 0x61, "WRITE payload disagrees with the DMA length") \
	_(UNALIGNED,    0x61, "ATOMIC address not 8-byte aligned")

/** Why an access was denied; MWP_DENY_NONE: allowed. */
enum mwp_deny {
	MWP_DENY_NONE = 0,
#define _(sym, syn, str) MWP_DENY_##sym,
	MWP_FOREACH_DENY(_)
#undef _
	MWP_DENY__MAX
};

/** The AETH NAK syndrome of a denial (0x61 or 0x62); 0 for NONE. */
uint8_t mwp_deny_syndrome(enum mwp_deny d);

/** Lower-case name of a denial ("wrong_qp"). */
const char *mwp_deny_name(enum mwp_deny d);

#endif /* MWP_DENY_H */
