/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_BENCH_UTIL_H
#define MWP_BENCH_UTIL_H

/* Timing and medians shared by the benchmarks. */

#include <stdlib.h>
#include <time.h>

static inline double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n figures (sorts them). */
static inline double
median(double *r, int n)
{
	qsort(r, (size_t)n, sizeof(r[0]), cmp_double);
	return r[n / 2];
}

#endif
