/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_BENCH_VERBS_H
#define MWP_BENCH_VERBS_H

/* What the benchmarks written against <infiniband/verbs.h> alone share
 * (mw_verbs_bench, loop_verbs_bench): an RC QP taken to RTS towards a
 * peer QP of the same device, through the port's own GID. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

/* The device named name (NULL: the first), opened, and its port's
 * attributes and GID gid_index; NULL with *what and *err saying why. */
static inline struct ibv_context *
bench_open_device(const char *name, uint8_t port, int gid_index, struct ibv_port_attr *pa,
		  union ibv_gid *gid, const char **what, int *err)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n;

	*what = "no RDMA device";
	*err = ENODEV;
	list = ibv_get_device_list(&n);
	if (list == NULL)
		return NULL;
	for (int i = 0; i < n && ctx == NULL; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (ctx == NULL) {
		*what = name != NULL ? name : "ibv_open_device";
		return NULL;
	}
	if (ibv_query_port(ctx, port, pa) != 0 || ibv_query_gid(ctx, port, gid_index, gid) != 0) {
		*what = "port or GID query";
		*err = EINVAL;
		ibv_close_device(ctx);
		return NULL;
	}
	return ctx;
}

/* qp to RTS towards peer at gid (GID index gid_index of port), with the
 * remote rights given, 16 READs and atomics each way, timeout 14 and 7
 * retries.  0, or the errno of the step that failed (*step: its name). */
static inline int
bench_connect_rc(struct ibv_qp *qp, uint8_t port, uint32_t peer, const union ibv_gid *gid,
		 int gid_index, enum ibv_mtu mtu, int access, const char **step)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = port, .pkey_index = 0,
		.qp_access_flags = access,
	};
	int ret;

	*step = "modify to INIT";
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = port;
	*step = "modify to RTR";
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	*step = "modify to RTS";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif
