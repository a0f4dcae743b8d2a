/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_TEST_EAL_H
#define MWP_TEST_EAL_H

/* Start a minimal EAL (no hugepages, no PCI, no shared files) once per test
 * process, and a small mbuf pool. */

#include <criterion/criterion.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

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
	cr_assert_geq(rte_eal_init(RTE_DIM(args) - 1, args), 0, "EAL init");
	test_mp = rte_pktmbuf_pool_create("test_mp", 1023, 0, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	cr_assert_not_null(test_mp);
	done = true;
}

#endif
