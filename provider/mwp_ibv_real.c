/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The real libibverbs: every device that is not mwpath's is its.  Found
 * with dlopen of the library the program already has and dlvsym at the
 * version a program binds to (RTLD_NEXT would miss a libibverbs loaded
 * RTLD_LOCAL, as pyverbs loads it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mwp_ibv.h"

struct mwp_ibv_real mwp_ibv_real;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int status = ENOENT;

/* A function of the real library at its version; a private one (its
 * version names rdma-core's private ABI, which changes) at its default. */
static void *
real(void *h, const char *name, const char *version)
{
	void *f = version != NULL ? dlvsym(h, name, version) : dlsym(h, name);

	if (f == NULL)
		fprintf(stderr, "mwpath-ibverbs: libibverbs has no %s@%s\n", name,
			version != NULL ? version : "default");
	return f;
}

static void
load(void)
{
	struct mwp_ibv_real *r = &mwp_ibv_real;
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	bool ok = true;

	if (h == NULL) {
		fprintf(stderr, "mwpath-ibverbs: %s\n", dlerror());
		return;
	}
#define R(field, name, version) \
	ok &= (*(void **)&r->field = real(h, name, version)) != NULL
	R(get_device_list, "ibv_get_device_list", "IBVERBS_1.1");
	R(free_device_list, "ibv_free_device_list", "IBVERBS_1.1");
	R(get_device_name, "ibv_get_device_name", "IBVERBS_1.1");
	R(get_device_guid, "ibv_get_device_guid", "IBVERBS_1.1");
	R(get_device_index, "ibv_get_device_index", "IBVERBS_1.9");
	R(open_device, "ibv_open_device", "IBVERBS_1.1");
	R(close_device, "ibv_close_device", "IBVERBS_1.1");
	R(query_device, "ibv_query_device", "IBVERBS_1.1");
	R(query_port, "ibv_query_port", "IBVERBS_1.1");
	R(query_gid, "ibv_query_gid", "IBVERBS_1.1");
	R(query_gid_ex, "_ibv_query_gid_ex", "IBVERBS_1.11");
	R(query_gid_table, "_ibv_query_gid_table", "IBVERBS_1.11");
	R(query_gid_type, "ibv_query_gid_type", NULL);
	R(query_pkey, "ibv_query_pkey", "IBVERBS_1.1");
	R(get_pkey_index, "ibv_get_pkey_index", "IBVERBS_1.5");
	R(alloc_pd, "ibv_alloc_pd", "IBVERBS_1.1");
	R(dealloc_pd, "ibv_dealloc_pd", "IBVERBS_1.1");
	R(reg_mr, "ibv_reg_mr", "IBVERBS_1.1");
	R(reg_mr_iova, "ibv_reg_mr_iova", "IBVERBS_1.7");
	R(reg_mr_iova2, "ibv_reg_mr_iova2", "IBVERBS_1.8");
	R(dereg_mr, "ibv_dereg_mr", "IBVERBS_1.1");
	R(create_cq, "ibv_create_cq", "IBVERBS_1.1");
	R(destroy_cq, "ibv_destroy_cq", "IBVERBS_1.1");
	R(create_qp, "ibv_create_qp", "IBVERBS_1.1");
	R(modify_qp, "ibv_modify_qp", "IBVERBS_1.1");
	R(query_qp, "ibv_query_qp", "IBVERBS_1.1");
	R(destroy_qp, "ibv_destroy_qp", "IBVERBS_1.1");
#undef R
	status = ok ? 0 : ENOENT;
}

int
mwp_ibv_real_init(void)
{
	pthread_once(&once, load);
	return status;
}

void *
mwp_ibv_real_sym(const char *name, const char *version)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	void *f = h != NULL ? real(h, name, version) : NULL;

	if (f == NULL) {
		fprintf(stderr, "mwpath-ibverbs: %s@%s is missing: cannot go on\n", name,
			version != NULL ? version : "default");
		abort();
	}
	return f;
}
