/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_NAMES_H
#define MWP_NAMES_H

/* Lower-case names from X-macro symbols ("BAD_ICRC" -> "bad_icrc"), built
 * once at start-up for the reason tables.  Private. */

#include <ctype.h>
#include <stddef.h>

#include <rte_common.h>

static inline void
mwp_names_lower(const char *const *sym, char *out, size_t width, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		char *o = out + i * width;
		size_t j;

		for (j = 0; sym[i][j] != '\0' && j < width - 1; j++)
			o[j] = (char)tolower((unsigned char)sym[i][j]);
		o[j] = '\0';
	}
}

/* Defines table, n names of width - 1 characters at most: the symbols of
 * sym in lower case, filled by a constructor before main(). */
#define MWP_NAMES_LOWER(table, sym, n, width)				\
	static char table[n][width];					\
	RTE_INIT(table##_init)						\
	{								\
		mwp_names_lower(sym, &table[0][0], width, n);		\
	}

#endif
