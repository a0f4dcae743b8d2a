/* SPDX-License-Identifier: BSD-3-Clause */
/* The refusals' syndromes and names (mwp_deny.h). */
#include <rte_common.h>

#include "mwp_deny.h"
#include "mwp_names.h"

static const uint8_t deny_syndrome[MWP_DENY__MAX] = {
#define _(sym, syn, str) [MWP_DENY_##sym] = syn,
	MWP_FOREACH_DENY(_)
#undef _
};

static const char *const deny_sym[MWP_DENY__MAX] = {
	[MWP_DENY_NONE] = "NONE",
#define _(sym, syn, str) [MWP_DENY_##sym] = #sym,
	MWP_FOREACH_DENY(_)
#undef _
};

MWP_NAMES_LOWER(deny_name, deny_sym, MWP_DENY__MAX, 16)

uint8_t
mwp_deny_syndrome(enum mwp_deny d)
{
	return (unsigned int)d < MWP_DENY__MAX ? deny_syndrome[d] : 0x62;
}

const char *
mwp_deny_name(enum mwp_deny d)
{
	return (unsigned int)d < MWP_DENY__MAX ? deny_name[d] : "invalid";
}
