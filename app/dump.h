/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_DUMP_H
#define MWP_APP_DUMP_H

#include "objects.h"

/**
 * Write objects.json, completions.json and mr-N.bin into dir (made if
 * missing).  Call after the lcores have stopped.
 *
 * @return
 *   0, or -1 after printing why.
 */
int app_dump(const char *dir, const struct app_objects *o);

#endif
