/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mwp_shim: a bad link between two DPDK ports, for the live tests.  Every
 * frame that arrives on one port leaves on the other, except that, counted
 * per direction (RoCE frames only with --only-roce), every Nth is dropped,
 * duplicated or held back behind the next one, or a seeded random share is
 * dropped.  Deterministic for a given input order and options.
 *
 *   mwp_shim [EAL options] -- [--drop-every N] [--dup-every N]
 *            [--reorder-every N] [--drop-pct P] [--seed S] [--only-roce]
 *            [--skip N] [--hold-us U] [--idle-exit MS] [--stats-file F]
 *
 * Stops on SIGINT/SIGTERM, or once no frame has come for --idle-exit ms
 * (from the start, too); then writes its counters as JSON:
 *   {"a_to_b": {"rx":, "tx":, "dropped":, "duplicated":, "reordered":,
 *               "held_flushed":, "passed_other":, "tx_failed":},
 *    "b_to_a": {...}}
 * Port 0 is a, port 1 is b.  Exit status 2 on a bad option.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define BURST		32
#define NB_DESC		1024
#define ROCE_PORT	4791

struct dir_stats {
	uint64_t rx, tx, dropped, duplicated, reordered, held_flushed, passed_other,
		 tx_failed;
};

static struct {
	uint32_t drop_every, dup_every, reorder_every, skip;
	double drop_pct;
	uint64_t seed;
	bool only_roce;
	uint64_t hold_us, idle_ms;
	const char *stats_file;
} opt = { .seed = 1, .hold_us = 200 };

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* One direction: what it counts, and the frame it holds back. */
struct dir {
	uint16_t from, to;
	uint64_t n;		/* frames considered (after --only-roce) */
	struct rte_mbuf *held;
	uint64_t held_tsc;
	struct dir_stats st;
};

static uint64_t rng;

/* xorshift64*: small, seeded, good enough to pick frames */
static uint64_t
next_rand(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(2685821657736338717);
}

/* UDP to port 4791 over IPv4 or IPv6, behind at most one VLAN tag. */
static bool
is_roce(const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l3 = 14, l4;
	uint16_t type;

	if (len < 14)
		return false;
	type = (uint16_t)(d[12] << 8 | d[13]);
	if (type == 0x8100 && len >= 18) {
		type = (uint16_t)(d[16] << 8 | d[17]);
		l3 = 18;
	}
	if (type == 0x0800) {
		if (len < l3 + 20 || d[l3 + 9] != 17)
			return false;
		l4 = l3 + (uint32_t)(d[l3] & 0xf) * 4;
	} else if (type == 0x86dd) {
		if (len < l3 + 40 || d[l3 + 6] != 17)
			return false;
		l4 = l3 + 40;
	} else {
		return false;
	}
	return len >= l4 + 4 && (uint16_t)(d[l4 + 2] << 8 | d[l4 + 3]) == ROCE_PORT;
}

static void
send_all(struct dir *dr, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0;
	unsigned int tries = 0;

	while (sent < n && tries++ < 1000) {
		sent += rte_eth_tx_burst(dr->to, 0, pkts + sent, (uint16_t)(n - sent));
		if (sent < n)
			rte_pause();
	}
	dr->st.tx += sent;
	if (sent < n) {
		dr->st.tx_failed += (uint64_t)(n - sent);
		rte_pktmbuf_free_bulk(pkts + sent, (unsigned int)(n - sent));
	}
}

/* Move one burst from dr->from to dr->to; returns frames received. */
static uint16_t
forward(struct dir *dr, struct rte_mempool *mp, uint64_t now, uint64_t hold_tsc)
{
	struct rte_mbuf *in[BURST], *out[BURST * 2 + 1];
	uint16_t nb, i, nout = 0;

	nb = rte_eth_rx_burst(dr->from, 0, in, BURST);
	dr->st.rx += nb;
	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = in[i];
		uint64_t k;

		if (opt.only_roce && !is_roce(m)) {
			dr->st.passed_other++;
			out[nout++] = m;
			continue;
		}
		k = ++dr->n;
		if (k <= opt.skip) {
			out[nout++] = m;
			continue;
		}
		if ((opt.drop_every != 0 && k % opt.drop_every == 0) ||
		    (opt.drop_pct > 0 && (double)(next_rand() % 1000000) < opt.drop_pct * 10000)) {
			dr->st.dropped++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (opt.dup_every != 0 && k % opt.dup_every == 0) {
			struct rte_mbuf *c = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);

			if (c != NULL) {
				out[nout++] = c;
				dr->st.duplicated++;
			}
		}
		if (opt.reorder_every != 0 && k % opt.reorder_every == 0 && dr->held == NULL) {
			dr->held = m;
			dr->held_tsc = now;
			continue;
		}
		out[nout++] = m;
		if (dr->held != NULL) {
			/* the held frame goes after this one */
			out[nout++] = dr->held;
			dr->held = NULL;
			dr->st.reordered++;
		}
	}
	if (dr->held != NULL && now - dr->held_tsc > hold_tsc) {
		out[nout++] = dr->held;
		dr->held = NULL;
		dr->st.held_flushed++;
	}
	if (nout != 0)
		send_all(dr, out, nout);
	return nb;
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [--drop-every N] [--dup-every N] "
	       "[--reorder-every N]\n"
	       "       [--drop-pct P] [--seed S] [--only-roce] [--skip N] [--hold-us U]\n"
	       "       [--idle-exit MS] [--stats-file FILE]\n"
	       "Forwards frames between ports 0 (a) and 1 (b), dropping, duplicating and\n"
	       "reordering them as told; counts per direction.\n", prog);
}

static bool
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno == 0 && *s != '\0' && *end == '\0' && *s != '-' && *out <= max;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "drop-every", required_argument, NULL, 'd' },
		{ "dup-every", required_argument, NULL, 'u' },
		{ "reorder-every", required_argument, NULL, 'r' },
		{ "drop-pct", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "only-roce", no_argument, NULL, 'o' },
		{ "skip", required_argument, NULL, 'k' },
		{ "hold-us", required_argument, NULL, 'H' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "stats-file", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		uint64_t v = 0;
		char *end;

		switch (c) {
		case 'd': case 'u': case 'r': case 'k':
			if (!parse_u64(optarg, UINT32_MAX, &v)) {
				fprintf(stderr, "mwp_shim: --%s: '%s' is not a count\n",
					c == 'd' ? "drop-every" : c == 'u' ? "dup-every" :
					c == 'r' ? "reorder-every" : "skip", optarg);
				return -1;
			}
			if (c == 'd')
				opt.drop_every = (uint32_t)v;
			else if (c == 'u')
				opt.dup_every = (uint32_t)v;
			else if (c == 'r')
				opt.reorder_every = (uint32_t)v;
			else
				opt.skip = (uint32_t)v;
			break;
		case 'p':
			opt.drop_pct = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || !(opt.drop_pct >= 0) ||
			    opt.drop_pct > 100) {
				fprintf(stderr, "mwp_shim: --drop-pct: '%s' is not 0 to 100\n", optarg);
				return -1;
			}
			break;
		case 's':
			if (!parse_u64(optarg, UINT64_MAX, &opt.seed)) {
				fprintf(stderr, "mwp_shim: --seed: '%s' is not a number\n", optarg);
				return -1;
			}
			break;
		case 'o':
			opt.only_roce = true;
			break;
		case 'H':
		case 'i':
			if (!parse_u64(optarg, 3600000000, &v)) {
				fprintf(stderr, "mwp_shim: --%s: '%s' is not a number\n",
					c == 'H' ? "hold-us" : "idle-exit", optarg);
				return -1;
			}
			if (c == 'H')
				opt.hold_us = v;
			else
				opt.idle_ms = v;
			break;
		case 'f':
			opt.stats_file = optarg;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			fprintf(stderr, "mwp_shim: unknown option or missing value: '%s' "
				"(--help lists them)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "mwp_shim: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int
port_init(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, NB_DESC, rte_eth_dev_socket_id(port), NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, NB_DESC, rte_eth_dev_socket_id(port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc == 0)
		rte_eth_promiscuous_enable(port);
	return rc;
}

static void
write_stats(FILE *f, const struct dir *d)
{
	fprintf(f, "{");
	for (int i = 0; i < 2; i++) {
		const struct dir_stats *s = &d[i].st;

		fprintf(f, "%s\"%s\": {\"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"dropped\": %" PRIu64 ", \"duplicated\": %" PRIu64
			", \"reordered\": %" PRIu64 ", \"held_flushed\": %" PRIu64
			", \"passed_other\": %" PRIu64 ", \"tx_failed\": %" PRIu64 "}",
			i == 0 ? "" : ", ", i == 0 ? "a_to_b" : "b_to_a", s->rx, s->tx,
			s->dropped, s->duplicated, s->reordered, s->held_flushed,
			s->passed_other, s->tx_failed);
	}
	fprintf(f, "}\n");
}

int
main(int argc, char **argv)
{
	struct dir d[2] = { { .from = 0, .to = 1 }, { .from = 1, .to = 0 } };
	struct rte_mempool *mp;
	uint64_t hz, hold_tsc, last_rx, started;
	int n;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(argv[0]);
			return 0;
		}
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "mwp_shim: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argv[n] = argv[0];
	if (parse_args(argc - n, argv + n) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	if (rte_eth_dev_count_avail() != 2) {
		fprintf(stderr, "mwp_shim: needs exactly two ports, has %u\n",
			rte_eth_dev_count_avail());
		rte_eal_cleanup();
		return 1;
	}
	rng = opt.seed != 0 ? opt.seed : 1;
	mp = rte_pktmbuf_pool_create("shim_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     (int)rte_socket_id());
	if (mp == NULL || port_init(0, mp) != 0 || port_init(1, mp) != 0) {
		fprintf(stderr, "mwp_shim: port set-up failed\n");
		rte_eal_cleanup();
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	hz = rte_get_tsc_hz();
	hold_tsc = opt.hold_us * hz / 1000000;
	started = last_rx = rte_rdtsc();
	while (!stop) {
		uint64_t now = rte_rdtsc();
		uint16_t got = forward(&d[0], mp, now, hold_tsc);

		got += forward(&d[1], mp, now, hold_tsc);
		if (got != 0)
			last_rx = now;
		else if (opt.idle_ms != 0 && now - last_rx > opt.idle_ms * hz / 1000)
			break;
	}
	for (int i = 0; i < 2; i++)
		if (d[i].held != NULL) {
			send_all(&d[i], &d[i].held, 1);
			d[i].st.held_flushed++;
		}
	write_stats(stdout, d);
	if (opt.stats_file != NULL) {
		FILE *f = fopen(opt.stats_file, "w");

		if (f == NULL) {
			fprintf(stderr, "mwp_shim: %s: %s\n", opt.stats_file, strerror(errno));
		} else {
			write_stats(f, d);
			fclose(f);
		}
	}
	printf("mwp_shim: ran %.3f s\n", (double)(rte_rdtsc() - started) / (double)hz);
	for (uint16_t p = 0; p < 2; p++) {
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
	rte_eal_cleanup();
	return 0;
}
