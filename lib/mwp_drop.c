/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>

#include <rte_common.h>

#include "mwp_drop.h"

static const char *const drop_text[MWP_DROP__MAX] = {
	[MWP_DROP_NONE] = "accepted",
#define _(sym, str) [MWP_DROP_##sym] = str,
	MWP_FOREACH_DROP(_)
#undef _
};

/* Names are the symbols in lower case, built at compile time from the same
 * list: "BAD_ICRC" -> "bad_icrc". */
static const char *const drop_sym[MWP_DROP__MAX] = {
	[MWP_DROP_NONE] = "NONE",
#define _(sym, str) [MWP_DROP_##sym] = #sym,
	MWP_FOREACH_DROP(_)
#undef _
};

static char drop_name[MWP_DROP__MAX][24];

RTE_INIT(mwp_drop_names_init)
{
	for (unsigned int i = 0; i < MWP_DROP__MAX; i++) {
		unsigned int j;

		for (j = 0; drop_sym[i][j] != '\0' &&
		     j < sizeof(drop_name[i]) - 1; j++)
			drop_name[i][j] = (char)tolower((unsigned char)drop_sym[i][j]);
		drop_name[i][j] = '\0';
	}
}

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
