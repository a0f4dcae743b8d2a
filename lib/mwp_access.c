/* SPDX-License-Identifier: BSD-3-Clause */
#include <infiniband/verbs.h>
#include <rte_common.h>

#include "mwp_access.h"
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

static char deny_name[MWP_DENY__MAX][16];

RTE_INIT(mwp_deny_names_init)
{
	mwp_names_lower(deny_sym, &deny_name[0][0], sizeof(deny_name[0]), MWP_DENY__MAX);
}

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

enum mwp_deny
mwp_access_check(const struct mwp_binding *b, const struct mwp_access_req *r,
		 uint8_t **addr)
{
	return mwp_access_decide(b, r, addr);
}
