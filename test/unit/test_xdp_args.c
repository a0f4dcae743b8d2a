/* SPDX-License-Identifier: BSD-3-Clause */
/* mwp_xdp.c without a kernel interface: the EAL arguments a net_af_xdp
 * vdev gets (mwpath's XDP program where it names none, both --vdev forms,
 * nothing else touched), and a port never started stopped without
 * closing anything. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "mwp_pmd.h"

TestSuite(xdp_args, .timeout = 30);

Test(xdp_args, a_net_af_xdp_vdev_without_a_program_gets_mwpaths_and_nothing_else_changes)
{
	char *argv[] = {
		"mwpath", "--no-huge",
		"--vdev=net_af_xdp0,iface=mwpnone0",
		"--vdev", "net_af_xdp1,iface=mwpnone1",
		"--vdev=net_af_xdp2,iface=mwpnone2,xdp_prog=/their.o",
		"--vdev=net_pcap0,rx_pcap=x.pcap",
		"-l", "0",
	};
	const int argc = (int)(sizeof(argv) / sizeof(argv[0]));
	char **out = NULL, err[256] = "", want[512];

	setenv("MWPATH_XDP_PROG", "/opt/mwp_xdp.bpf.o", 1);
	cr_assert_eq(mwp_xdp_eal_args(argc, argv, &out, err, sizeof(err)), 2, "%s", err);
	unsetenv("MWPATH_XDP_PROG");
	cr_expect_str_eq(out[2], "--vdev=net_af_xdp0,iface=mwpnone0,xdp_prog=/opt/mwp_xdp.bpf.o");
	cr_expect_str_eq(out[3], "--vdev");
	snprintf(want, sizeof(want), "net_af_xdp1,iface=mwpnone1,xdp_prog=%s",
		 "/opt/mwp_xdp.bpf.o");
	cr_expect_str_eq(out[4], want);
	/* a program of its own, another driver, other arguments: as given */
	for (int i = 0; i < argc; i++)
		if (i != 2 && i != 4)
			cr_expect_eq(out[i], argv[i], "argument %d changed", i);
	cr_expect_null(out[argc]);
	mwp_xdp_eal_args_free(argc, out);	/* ASan: nothing leaks */
}

Test(xdp_args, without_the_variable_the_program_is_the_build_trees_or_the_installed_one)
{
	unsetenv("MWPATH_XDP_PROG");
	cr_expect(strstr(mwp_xdp_prog(), "mwp_xdp.bpf.o") != NULL, "%s", mwp_xdp_prog());
}

Test(xdp_args, a_port_never_started_is_stopped_without_closing_anything)
{
	struct mwp_xdp x;
	int fd = open("/dev/null", O_RDONLY);

	cr_assert_geq(fd, 0);
	memset(&x, 0, sizeof(x));	/* as the app's and the device's start */
	mwp_xdp_stop(&x);
	mwp_xdp_stop(&x);
	cr_expect_neq(fcntl(0, F_GETFD), -1, "descriptor 0 closed");
	cr_expect_neq(fcntl(fd, F_GETFD), -1);
	cr_expect(!mwp_xdp_on(&x));
	close(fd);
}
