/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_BENCH_JSON_H
#define MWP_BENCH_JSON_H

/**
 * @file
 * One JSON document per benchmark run (`--json FILE`), written with jansson:
 *
 *     {"bench": NAME,
 *      "meta": {"commit", "build": {...}, "cpu_model", "cores", "date", "argv"},
 *      "results": [{"name": ..., figures with their units in their keys}, ...]}
 *
 * The commit and the build options are baked in at build time (see
 * bench/meson.build); the CPU, the core count, the date and the command
 * line are read when the run starts.  bench/benchjson.py writes the same
 * document for the Python benchmarks; bench/compare.py and bench/plot.py
 * read both.
 */

#include <jansson.h>

/**
 * A new result document for the benchmark @p bench, its meta filled in.
 *
 * @param bench  the program's name ("bench_resp")
 * @param argc   main()'s argc
 * @param argv   main()'s argv (recorded as the meta's "argv")
 * @return the document (exits with a message if memory runs out)
 */
json_t *bench_json_new(const char *bench, int argc, char *const argv[]);

/**
 * Append a result named @p name to @p doc's "results".
 *
 * @return the result object, owned by @p doc, to set figures on
 */
json_t *bench_json_result(json_t *doc, const char *name);

/** Set figure @p key of result @p res to @p v (null if not finite). */
void bench_json_num(json_t *res, const char *key, double v);

/** Set integer @p key of result @p res to @p v. */
void bench_json_int(json_t *res, const char *key, long long v);

/** Set string @p key of result @p res to @p v. */
void bench_json_str(json_t *res, const char *key, const char *v);

/**
 * Write @p doc to @p path (nothing if @p path is NULL) and free it.
 *
 * @return 0, or -1 with a message on stderr naming the file
 */
int bench_json_write(json_t *doc, const char *path);

#endif
