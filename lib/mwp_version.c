/* SPDX-License-Identifier: BSD-3-Clause */
#include "mwpath.h"

const char *
mwp_version(void)
{
	return MWP_VERSION;
}
