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

#ifdef MWP_VERBS_H
/* A QP of the given type, taken to RTS with every remote right its
 * transport allows (benchmarks only: no error checks). */
static inline struct ibv_qp *
bench_rts_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 16 } };
	struct ibv_qp *qp = mwp_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			(type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC : 0) };

	mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		      IBV_QP_ACCESS_FLAGS);
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 1;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x99;
	a.max_dest_rd_atomic = 16;
	mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		      IBV_QP_MIN_RNR_TIMER);
	a.qp_state = IBV_QPS_RTS;
	mwp_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	return qp;
}
#endif

#endif
