/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdio.h>

#include "hex.h"

char *
app_hex(char buf[APP_HEX_LEN], enum app_hex_kind kind, uint64_t v)
{
	/* the digits each kind shows at least */
	static const int width[] = {
		[APP_HEX_KEY] = 8, [APP_HEX_QPN] = 0, [APP_HEX_PSN] = 6,
		[APP_HEX_ADDR] = 0, [APP_HEX_SYNDROME] = 2, [APP_HEX_PKEY] = 4,
	};

	snprintf(buf, APP_HEX_LEN, "0x%0*" PRIx64, width[kind], v);
	return buf;
}
