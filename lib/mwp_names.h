/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_NAMES_H
#define MWP_NAMES_H

/* Lower-case names from X-macro symbols ("BAD_ICRC" -> "bad_icrc"), built
 * once at start-up for the reason tables.  Private. */

#include <ctype.h>
#include <stddef.h>

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

#endif
