/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_common.h>

#include "mwp_drop.h"
#include "mwp_names.h"

static const char *const drop_text[MWP_DROP__MAX] = {
	[MWP_DROP_NONE] = "accepted",
#define _(sym, str) [MWP_DROP_##sym] = str,
	MWP_FOREACH_DROP(_)
#undef _
};

/* Names are the symbols of the same list in lower case ("BAD_ICRC" ->
 * "bad_icrc"), made once before main(). */
static const char *const drop_sym[MWP_DROP__MAX] = {
	[MWP_DROP_NONE] = "NONE",
#define _(sym, str) [MWP_DROP_##sym] = #sym,
	MWP_FOREACH_DROP(_)
#undef _
};

MWP_NAMES_LOWER(drop_name, drop_sym, MWP_DROP__MAX, 24)

const char *
mwp_drop_name(enum mwp_drop d)
{
	if ((unsigned int)d >= MWP_DROP__MAX)
		return "invalid";
	return drop_name[d];
}

const char *
mwp_drop_text(enum mwp_drop d)
{
	if ((unsigned int)d >= MWP_DROP__MAX)
		return "invalid";
	return drop_text[d];
}
