/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_BENCH_UTIL_H
#define MWP_BENCH_UTIL_H

/* Timing, medians, options and result files shared by the benchmarks. */

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_json.h"

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

/* --help (c == 'h'): the usage (its %s: the program) on stdout, exit 0;
 * an option getopt_long did not know: the usage on stderr, exit 2. */
static inline void
bench_usage_exit(const char *usage, const char *prog, int c)
{
	fprintf(c == 'h' ? stdout : stderr, usage, prog);
	exit(c == 'h' ? 0 : 2);
}

/* The options of a benchmark that takes --quick and --json FILE alone:
 * whether --quick was given; *json: FILE, or NULL (--help and unknown
 * options as bench_usage_exit). */
static inline bool
bench_quick_option(int argc, char **argv, const char *usage, const char **json)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool quick = false;
	int c;

	*json = NULL;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'J')
			*json = optarg;
		else if (c == 'q')
			quick = true;
		else
			bench_usage_exit(usage, argv[0], c);
	}
	if (optind != argc)
		bench_usage_exit(usage, argv[0], '?');
	return quick;
}

/* A comma-separated list of at most max numbers in [lo, hi] into v; their
 * count, or 0 if the list is not one. */
static inline unsigned int
bench_parse_list(const char *arg, uint32_t *v, unsigned int max, unsigned long lo,
		 unsigned long hi)
{
	unsigned int n = 0;
	const char *p = arg;

	while (n < max) {
		char *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p || x < lo || x > hi || (*end != ',' && *end != '\0'))
			return 0;
		v[n++] = (uint32_t)x;
		if (*end == '\0')
			return n;
		p = end + 1;
	}
	return 0;
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

#ifdef MWPATH_H
#include <rte_ip.h>
#include <rte_memcpy.h>

/* n 64-byte RC WRITE ONLY requests to dqpn from the peer 192.0.2.2
 * (valid ICRCs), each naming a random key of keys[nkeys] and a random
 * 64-byte slot of [0x100000000, +buf_len); PSNs 0..n-1, AckReq on the
 * last.  Exits with who's name if the pool is empty. */
static inline void
bench_write_templates(struct rte_mempool *mp, uint32_t dqpn, const uint32_t *keys,
		      uint32_t nkeys, uint64_t buf_len, struct rte_mbuf **out, int n,
		      const char *who)
{
	struct mwp_flow f = { .sport = 49152 };
	static uint8_t payload[64];

	rte_ether_unformat_addr("02:00:00:00:00:02", &f.smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &f.dmac);
	f.sip4 = RTE_BE32(RTE_IPV4(192, 0, 2, 2));
	f.dip4 = RTE_BE32(RTE_IPV4(192, 0, 2, 1));
	for (int i = 0; i < n; i++) {
		struct mwp_hdrs h = {
			.opcode = ROCE_OP_RC_RDMA_WRITE_ONLY,
			.dqpn = dqpn, .psn = (uint32_t)i, .ackreq = i == n - 1,
		};

		h.reth.va = 0x100000000ull + (uint64_t)(rand() % (buf_len / 64)) * 64;
		h.reth.rkey = keys[(uint32_t)rand() % nkeys];
		h.reth.dmalen = 64;
		out[i] = rte_pktmbuf_alloc(mp);
		if (out[i] == NULL || mwp_build(out[i], &f, &h, payload, 64, NULL) != 0) {
			fprintf(stderr, "%s: building requests failed\n", who);
			exit(1);
		}
	}
}

/* A fresh copy of each of n template frames, as a NIC's rx would hand
 * over.  Exits with who's name if the pool is empty. */
static inline void
bench_refill(struct rte_mempool *mp, struct rte_mbuf *const *tmpl, struct rte_mbuf **pk,
	     int n, const char *who)
{
	if (rte_pktmbuf_alloc_bulk(mp, pk, (unsigned int)n) != 0) {
		fprintf(stderr, "%s: mempool empty\n", who);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		uint16_t len = rte_pktmbuf_data_len(tmpl[i]);

		rte_memcpy(rte_pktmbuf_mtod(pk[i], void *),
			   rte_pktmbuf_mtod(tmpl[i], const void *), len);
		pk[i]->data_len = len;
		pk[i]->pkt_len = len;
	}
}
#endif

#endif
