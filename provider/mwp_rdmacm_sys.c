/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The system's librdmacm, for the addresses that are not mwpath's
 * (docs/cm.md): the host's own RDMA devices stay usable beside mwpath's
 * in a program run under mwpath-run.
 *
 * It is loaded only where the kernel's RDMA CM is (/dev/infiniband/
 * rdma_cm), with RTLD_DEEPBIND for a program that did not link it (then
 * its calls of its own exports stay in it).
 * AddressSanitizer refuses RTLD_DEEPBIND: a sanitized build has no
 * fallback (only on a host with the kernel's RDMA CM does it matter).
 *
 * The program's own librdmacm (it linked it) is already loaded, in the
 * global scope, so dlopen returns that one and its calls of its own
 * exports (rdma_create_qp calls rdma_create_qp_ex, which calls
 * rdma_init_qp_attr...) reach mwpath's definitions: those hand an id that
 * is not theirs back to it (mwp_rdmacm.c, theirs()).  Never call into it
 * holding mwpath's lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mwp_rdmacm.h"

static struct mwp_sys_rdmacm sys;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool
sanitized(void)
{
	/* the sanitizers' runtimes define these */
	return dlsym(RTLD_DEFAULT, "__asan_init") != NULL ||
	       dlsym(RTLD_DEFAULT, "__tsan_init") != NULL;
}

static void
load(void)
{
	void *h;
	bool ok = true;

	if (access("/dev/infiniband/rdma_cm", R_OK | W_OK) != 0 || sanitized())
		return;
	h = dlopen("librdmacm.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (h == NULL) {
		fprintf(stderr, "mwpath-rdmacm: the system's librdmacm: %s\n", dlerror());
		return;
	}
#define S(field, name) \
	ok &= (*(void **)&sys.field = dlsym(h, name)) != NULL
	S(create_event_channel, "rdma_create_event_channel");
	S(destroy_event_channel, "rdma_destroy_event_channel");
	S(get_cm_event, "rdma_get_cm_event");
	S(ack_cm_event, "rdma_ack_cm_event");
	S(create_id, "rdma_create_id");
	S(destroy_id, "rdma_destroy_id");
	S(bind_addr, "rdma_bind_addr");
	S(resolve_addr, "rdma_resolve_addr");
	S(resolve_route, "rdma_resolve_route");
	S(listen, "rdma_listen");
	S(connect, "rdma_connect");
	S(accept, "rdma_accept");
	S(reject, "rdma_reject");
	S(disconnect, "rdma_disconnect");
	S(establish, "rdma_establish");
	S(notify, "rdma_notify");
	S(set_option, "rdma_set_option");
	S(init_qp_attr, "rdma_init_qp_attr");
	S(create_qp, "rdma_create_qp");
	S(create_qp_ex, "rdma_create_qp_ex");
	S(destroy_qp, "rdma_destroy_qp");
	S(create_srq, "rdma_create_srq");
	S(create_srq_ex, "rdma_create_srq_ex");
	S(destroy_srq, "rdma_destroy_srq");
	S(join_multicast, "rdma_join_multicast");
	S(join_multicast_ex, "rdma_join_multicast_ex");
	S(leave_multicast, "rdma_leave_multicast");
	S(set_local_ece, "rdma_set_local_ece");
	S(get_remote_ece, "rdma_get_remote_ece");
	S(reject_ece, "rdma_reject_ece");
	S(get_devices, "rdma_get_devices");
	S(free_devices, "rdma_free_devices");
#undef S
	if (!ok) {
		fprintf(stderr, "mwpath-rdmacm: the system's librdmacm lacks a function: "
			"its addresses are not reachable\n");
		return;
	}
	/* librdmacm's first channel initializes it, and its initialization
	 * probes AF_IB with an id of its own made through the global scope --
	 * mwpath's rdma_create_id and rdma_bind_addr, which answer EINVAL
	 * (IP only, as wanted).  Done here, where no lock of mwpath's is held. */
	{
		struct rdma_event_channel *ch = sys.create_event_channel();

		if (ch == NULL) {
			fprintf(stderr, "mwpath-rdmacm: the system's librdmacm: %s\n",
				strerror(errno));
			return;
		}
		sys.destroy_event_channel(ch);
	}
	loaded = true;
}

const struct mwp_sys_rdmacm *
mwp_rdmacm_sys(void)
{
	pthread_once(&once, load);
	return loaded ? &sys : NULL;
}
