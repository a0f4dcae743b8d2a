/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_EAL_H
#define MWP_TEST_EAL_H

/* Start a minimal EAL (no hugepages, no PCI, no shared files) once per test
 * process, and a small mbuf pool. */

#include <rte_eal.h>
#include <rte_mbuf.h>

/* Set-up checks: Criterion's assert, or abort() in plain programs (the
 * TSan harness: Criterion's runner does not survive ThreadSanitizer). */
#ifndef MWP_NO_CRITERION
#include <criterion/criterion.h>
#define FIX_ASSERT(c) cr_assert(c)
#else
#include <stdio.h>
#include <stdlib.h>
#define FIX_ASSERT(c) do {						\
		if (!(c)) {						\
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();					\
		}							\
	} while (0)
#endif

static struct rte_mempool *test_mp;

static inline void
test_eal_init(void)
{
	static bool done;
	char *args[] = {
		"mwp-test", "--no-huge", "--no-pci", "--no-shconf", "-m", "128",
		"-l", "0", "--log-level=lib.eal:error",
		"--log-level=lib.telemetry:error", NULL,
	};

	if (done)
		return;
	FIX_ASSERT(rte_eal_init(RTE_DIM(args) - 1, args) >= 0);
	test_mp = rte_pktmbuf_pool_create("test_mp", 1023, 0, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	FIX_ASSERT(test_mp != NULL);
	done = true;
}

#endif
