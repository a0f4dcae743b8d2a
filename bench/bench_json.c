/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The meta of a benchmark's JSON result: what was built (baked in by
 * bench/meson.build through bench_build.h), on what and when it ran.
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_build.h"
#include "bench_json.h"

static void
oom(void)
{
	fprintf(stderr, "bench_json: out of memory\n");
	exit(1);
}

static json_t *
checked(json_t *v)
{
	if (v == NULL)
		oom();
	return v;
}

static void
set(json_t *obj, const char *key, json_t *v)
{
	if (json_object_set_new(obj, key, checked(v)) != 0)
		oom();
}

/* /proc/cpuinfo's first "model name", or "unknown". */
static json_t *
cpu_model(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	json_t *v = NULL;

	while (f != NULL && v == NULL && fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');
		size_t n;

		if (strncmp(line, "model name", 10) != 0 || colon == NULL)
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		n = strcspn(colon, "\n");
		v = json_stringn(colon, n);
	}
	if (f != NULL)
		fclose(f);
	return v != NULL ? v : json_string("unknown");
}

static json_t *
build_options(void)
{
	json_t *b = checked(json_object());

	set(b, "buildtype", json_string(BENCH_BUILDTYPE));
	set(b, "optimization", json_string(BENCH_OPTIMIZATION));
	set(b, "debug", json_boolean(BENCH_DEBUG));
	set(b, "b_lto", json_boolean(BENCH_LTO));
	set(b, "b_sanitize", json_string(BENCH_SANITIZE));
	set(b, "cpu_instruction_set", json_string(BENCH_CPU_ISA));
	set(b, "c_args", json_string(BENCH_C_ARGS));
	set(b, "compiler", json_string(BENCH_COMPILER));
	set(b, "dpdk", json_string(BENCH_DPDK_VERSION));
	return b;
}

json_t *
bench_json_new(const char *bench, int argc, char *const argv[])
{
	json_t *doc = checked(json_object()), *meta = checked(json_object());
	json_t *av = checked(json_array());
	time_t now = time(NULL);
	struct tm tm;
	char date[32];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (int i = 0; i < argc; i++)
		if (json_array_append_new(av, checked(json_string(argv[i]))) != 0)
			oom();
	set(meta, "commit", json_string(strlen(BENCH_COMMIT) > 0 ? BENCH_COMMIT : "unknown"));
	set(meta, "build", build_options());
	set(meta, "cpu_model", cpu_model());
	set(meta, "cores", json_integer(cores > 0 ? cores : 0));
	set(meta, "date", json_string(date));
	set(meta, "argv", av);
	set(doc, "bench", json_string(bench));
	set(doc, "meta", meta);
	set(doc, "results", json_array());
	return doc;
}

json_t *
bench_json_result(json_t *doc, const char *name)
{
	json_t *r = checked(json_object());

	set(r, "name", json_string(name));
	if (json_array_append_new(json_object_get(doc, "results"), r) != 0)
		oom();
	return r;
}

void
bench_json_num(json_t *res, const char *key, double v)
{
	set(res, key, isfinite(v) ? json_real(v) : json_null());
}

void
bench_json_int(json_t *res, const char *key, long long v)
{
	set(res, key, json_integer(v));
}

void
bench_json_str(json_t *res, const char *key, const char *v)
{
	set(res, key, json_string(v));
}

int
bench_json_write(json_t *doc, const char *path)
{
	int ret = 0;

	if (path != NULL &&
	    json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) != 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n",
			json_string_value(json_object_get(doc, "bench")), path,
			errno != 0 ? strerror(errno) : "jansson failed");
		ret = -1;
	}
	json_decref(doc);
	return ret;
}
