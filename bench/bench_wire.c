/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_wire: cost per packet of the wire layer, on one core, no EAL.
 *
 *   - ICRC verify of 64-byte and 1024-byte payload frames, three ways:
 *     ISA-L crc32_gzip_refl continuing from a masked header copy into the
 *     payload in place (what libmwpath ships), DPDK rte_net_crc_calc over a
 *     masked copy of the whole region (it takes no seed, so it needs the
 *     copy), and a byte-at-a-time table (zlib's crc32) as the floor;
 *   - mwp_parse_burst, and parse + mwp_icrc_verify_burst together.
 *
 * Each figure is the median of RUNS runs of ITER bursts of 32 frames.  A
 * minimal EAL is started only so that rte_net_crc may pick its
 * SSE4.2/PCLMULQDQ or AVX-512 path (it reads the EAL's SIMD limit).
 * Usage: bench_wire [--quick] [--json FILE]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <rte_eal.h>
#include <rte_net_crc.h>
#include <zlib.h>

#include "bench_util.h"
#include "mwpath.h"

#define BURST 32
#define RUNS 7

static unsigned int iter = 20000;

struct frame {
	struct rte_mbuf m;
	uint8_t data[2048];
	struct mwp_pkt p;
};

static struct frame frames[BURST];
static struct rte_mbuf *pkts[BURST];
static volatile uint32_t sink;

static void
make_frames(uint32_t len)
{
	struct mwp_flow f = { .sport = 49152 };
	static uint8_t payload[2048];

	inet_pton(AF_INET, "192.0.2.2", &f.sip4);
	inet_pton(AF_INET, "192.0.2.1", &f.dip4);
	for (unsigned int i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)rand();
	for (int i = 0; i < BURST; i++) {
		struct mwp_hdrs h = { .opcode = ROCE_OP_RC_RDMA_WRITE_ONLY,
			.dqpn = 0x11, .psn = (uint32_t)i,
			.reth = { .va = 0x1000, .rkey = 0x101, .dmalen = len } };
		struct rte_mbuf *m = mwp_mbuf_wrap(&frames[i].m, frames[i].data,
						   sizeof(frames[i].data), 0);

		if (mwp_build(m, &f, &h, payload, len, &frames[i].p) != 0)
			abort();
		pkts[i] = m;
	}
}

/* The alternative: copy the whole region masked, then one CRC call. */
static uint32_t
icrc_copy(const struct frame *fr, int use_zlib)
{
	uint8_t buf[2048 + 8];
	const struct mwp_pkt *p = &fr->p;
	uint32_t n = p->icrc_off - p->l3_off, udp = p->l4_off - p->l3_off;

	memset(buf, 0xff, 8);
	memcpy(buf + 8, fr->data + p->l3_off, n);
	buf[8 + 1] = 0xff;
	buf[8 + 8] = 0xff;
	buf[8 + 10] = buf[8 + 11] = 0xff;
	buf[8 + udp + 6] = buf[8 + udp + 7] = 0xff;
	buf[8 + udp + 12] = 0xff;
	if (use_zlib)
		return (uint32_t)crc32(0, buf, n + 8);
	return rte_net_crc_calc(buf, n + 8, RTE_NET_CRC32_ETH);
}

enum what { MB, ISAL, NET_CRC, ZLIB, PARSE, PARSE_VERIFY, W__MAX };

static double
run_once(enum what w)
{
	struct mwp_pkt p[BURST];
	enum mwp_drop why[BURST];
	uint32_t acc = 0;
	double t0 = now_ns();

	for (unsigned int it = 0; it < iter; it++) {
		switch (w) {
		case MB:
			for (int i = 0; i < BURST; i++) {
				p[i] = frames[i].p;
				why[i] = MWP_DROP_NONE;
			}
			acc += BURST - mwp_icrc_verify_burst(pkts, p, why, BURST);
			break;
		case ISAL:
			for (int i = 0; i < BURST; i++)
				acc += mwp_icrc_compute(pkts[i], &frames[i].p) ==
				       mwp_icrc_read(pkts[i], &frames[i].p);
			break;
		case NET_CRC:
		case ZLIB:
			for (int i = 0; i < BURST; i++)
				acc += icrc_copy(&frames[i], w == ZLIB) ==
				       mwp_icrc_read(pkts[i], &frames[i].p);
			break;
		case PARSE:
			acc += mwp_parse_burst(pkts, BURST, p, why);
			break;
		case W__MAX:
			break;
		case PARSE_VERIFY:
			acc += mwp_parse_burst(pkts, BURST, p, why);
			acc += mwp_icrc_verify_burst(pkts, p, why, BURST);
			break;
		}
	}
	sink = acc;
	if (acc != iter * BURST && w != PARSE_VERIFY)
		fprintf(stderr, "bench_wire: a check failed (%u of %u)\n", acc,
			iter * BURST);
	return (now_ns() - t0) / ((double)iter * BURST);
}

static double
median_of_runs(enum what w)
{
	double r[RUNS];

	for (int i = 0; i < RUNS; i++)
		r[i] = run_once(w);
	return median(r, RUNS);
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 64, 256, 1024 };
	/* each measurement: its key in the JSON, its line in the table */
	static const struct {
		const char *key, *name;
	} measure[] = {
		[MB] = { "icrc_mb", "icrc verify burst, multi-buffer (shipped)" },
		[ISAL] = { "icrc_isal", "icrc verify, ISA-L, one frame at a time" },
		[NET_CRC] = { "icrc_net_crc", "icrc verify, rte_net_crc on a copy" },
		[ZLIB] = { "icrc_zlib", "icrc verify, zlib table on a copy" },
		[PARSE] = { "parse", "parse (mwp_parse_burst)" },
		[PARSE_VERIFY] = { "parse_icrc", "parse + icrc verify burst" },
	};

	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "64",
			"-l", "0", "--log-level=lib.eal:error",
			"--log-level=lib.telemetry:error", NULL };

	const char *json_path;
	json_t *doc = bench_json_new("bench_wire", argc, argv);

	if (bench_quick_option(argc, argv,
				"usage: %s [--quick] [--json FILE]\n"
				"The wire layer's cost, ns per packet at 64, 256 and 1024 bytes: the\n"
				"shipped multi-buffer ICRC verification against ISA-L, rte_net_crc and\n"
				"zlib one frame at a time, the burst parser, and both together.\n"
				"--quick: short runs (a smoke test, not a figure); --json FILE: the\n"
				"figures, with the build and the machine, as JSON.\n", &json_path))
		iter = 500;
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "bench_wire: EAL init failed\n");
		return 1;
	}
	/* The best this CPU has: AVX-512 VPCLMULQDQ, else SSE4.2 PCLMULQDQ. */
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
	printf("# bench_wire: ns per packet, median of %d runs of %u bursts of %d\n",
	       RUNS, iter, BURST);
	printf("%-42s %10s %10s %10s\n", "what", "64 B", "256 B", "1024 B");
	for (int w = MB; w < W__MAX; w++) {
		double r[RTE_DIM(sizes)];

		for (size_t s = 0; s < RTE_DIM(sizes); s++) {
			char name[64];
			json_t *res;

			make_frames(sizes[s]);
			r[s] = median_of_runs(w);
			snprintf(name, sizeof(name), "%s_%uB", measure[w].key, sizes[s]);
			res = bench_json_result(doc, name);
			bench_json_str(res, "series", measure[w].key);
			bench_json_str(res, "what", measure[w].name);
			bench_json_int(res, "payload", sizes[s]);
			bench_json_int(res, "lcores", 1);
			bench_json_num(res, "ns_per_pkt", r[s]);
			bench_json_num(res, "mpps", 1e3 / r[s]);
		}
		printf("%-42s %10.1f %10.1f %10.1f\n", measure[w].name, r[0], r[1], r[2]);
	}
	rte_eal_cleanup();
	return bench_json_write(doc, json_path) == 0 ? 0 : 1;
}
