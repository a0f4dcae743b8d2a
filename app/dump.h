/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_DUMP_H
#define MWP_APP_DUMP_H

#include "objects.h"
#include "summary.h"

/**
 * Write objects.json, completions.json and mr-N.bin into dir (made if
 * missing).  Call after the lcores have stopped.
 *
 * objects.json holds the run ("run": seconds, why it stopped), each port's
 * counters ("ports": the numbers the summary prints) and the verbs objects;
 * keys, QPNs, PSNs and addresses are hex strings, counts integers
 * (docs/configuration.md).
 *
 * @param dir
 *   The directory.
 * @param o
 *   The verbs objects.
 * @param run
 *   The run, for its ports' counters.
 * @return
 *   0, or -1 after printing why.
 */
int app_dump(const char *dir, const struct app_objects *o, const struct app_run *run);

#endif
