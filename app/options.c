/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_version.h>

#include "mwpath.h"
#include "mwp_pmd.h"
#include "options.h"

#define DEFAULT_IDLE_EXIT_MS 100
#define DEFAULT_TX_PCAP "mwpath-out.pcap"

enum { OPT_IDLE_EXIT = 256, OPT_STATS_INTERVAL, OPT_LCORES_PER_PORT, OPT_DUMP_DIR };

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "idle-exit", required_argument, NULL, OPT_IDLE_EXIT },
	{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
	{ "lcores-per-port", required_argument, NULL, OPT_LCORES_PER_PORT },
	{ "dump-dir", required_argument, NULL, OPT_DUMP_DIR },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

const char *
app_conf_dir(void)
{
	/* Running from a build tree: the source's conf/; installed: datadir. */
	if (access(MWP_CONF_SRC_DIR "/default.ini", R_OK) == 0)
		return MWP_CONF_SRC_DIR;
	return MWP_CONF_INST_DIR;
}

void
app_usage(void)
{
	printf(
"Usage: mwpath [EAL options] -- [options]\n"
"       mwpath [options]        (default EAL options, see below)\n"
"\n"
"A DPDK poll-mode RoCEv2 responder: receives RoCEv2 on every DPDK port,\n"
"checks and answers it, and prints what it did when it stops (SIGINT,\n"
"SIGTERM, or --idle-exit).\n"
"\n"
"Options:\n"
"  -c, --config FILE       configuration file (INI, see docs/configuration.md)\n"
"                          default: %s/default.ini\n"
"      --idle-exit MS      stop once no port has received a frame for MS\n"
"                          milliseconds (how a pcap replay ends);\n"
"                          default: %u with the default EAL options, else off\n"
"      --stats-interval S  every S seconds, one line per port: the time (UTC,\n"
"                          and seconds since start), packets and bytes in and\n"
"                          out, accepted and dropped since the last line, and\n"
"                          Rx-pps, Rx-bps, Tx-pps, Tx-bps over it (default off)\n"
"      --lcores-per-port N rx/tx queues per port, each polled by its own lcore\n"
"                          where there are enough (default 1; RSS spreads\n"
"                          frames by UDP ports, so a QP stays on one queue)\n"
"      --dump-dir DIR      at exit, write objects.json (the run, each port's\n"
"                          counters, the verbs objects), completions.json\n"
"                          and mr-N.bin (each region's final bytes) to DIR\n"
"  -h, --help              print this text and exit\n"
"  -V, --version           print the version and exit\n"
"\n"
"Default EAL options, used when none are given before \"--\":\n"
"  -l 0-1 (-l 0 on one CPU) --no-huge --no-pci --no-shconf -m 256 --log-level=lib.eal:warning\n"
"  --log-level=lib.telemetry:warning --log-level=pmd.net.pcap:warning\n"
"  --vdev net_pcap0,rx_pcap=%s/default-traffic.pcap,tx_pcap=%s\n"
"\n"
"Exit status: 0 after a clean stop, 1 on a run-time error, 2 on a bad\n"
"option or configuration.\n",
	app_conf_dir(), DEFAULT_IDLE_EXIT_MS, app_conf_dir(), DEFAULT_TX_PCAP);
}

static int
parse_u32(const char *opt, const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > max) {
		fprintf(stderr, "mwpath: --%s: '%s' is not a number from 0 to %u\n",
			opt, s, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

enum app_parse_result
app_options_parse(int argc, char **argv, struct app_options *o)
{
	int c;

	o->config = NULL;
	o->idle_exit_ms = o->default_eal ? DEFAULT_IDLE_EXIT_MS : 0;
	o->stats_interval_s = 0;
	o->lcores_per_port = 1;
	o->dump_dir = NULL;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case OPT_IDLE_EXIT:
			if (parse_u32("idle-exit", optarg, 86400000, &o->idle_exit_ms))
				return APP_PARSE_EXIT_USAGE;
			break;
		case OPT_STATS_INTERVAL:
			if (parse_u32("stats-interval", optarg, 86400, &o->stats_interval_s))
				return APP_PARSE_EXIT_USAGE;
			break;
		case OPT_LCORES_PER_PORT:
			if (parse_u32("lcores-per-port", optarg, MWP_MAX_QUEUES_PER_LCORE,
				      &o->lcores_per_port))
				return APP_PARSE_EXIT_USAGE;
			if (o->lcores_per_port == 0) {
				fprintf(stderr, "mwpath: --lcores-per-port: 0 lcores cannot poll a port\n");
				return APP_PARSE_EXIT_USAGE;
			}
			break;
		case OPT_DUMP_DIR:
			o->dump_dir = optarg;
			break;
		case 'h':
			app_usage();
			return APP_PARSE_EXIT_OK;
		case 'V':
			printf("mwpath %s (%s)\n", mwp_version(), rte_version());
			return APP_PARSE_EXIT_OK;
		case ':':
			fprintf(stderr, "mwpath: option '%s' needs a value (see mwpath --help)\n",
				argv[optind - 1]);
			return APP_PARSE_EXIT_USAGE;
		default:
			fprintf(stderr, "mwpath: unknown option '%s'%s (see mwpath --help)\n",
				argv[optind - 1],
				o->default_eal && argv[optind - 1][0] == '-' ?
				"; EAL options go before \"--\"" : "");
			return APP_PARSE_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mwpath: unexpected argument '%s' (see mwpath --help)\n",
			argv[optind]);
		return APP_PARSE_EXIT_USAGE;
	}
	return APP_PARSE_RUN;
}

/* Is arg one of the program's long options (--name or --name=value)? */
static const char *
program_option(const char *arg)
{
	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	for (const struct option *lo = long_opts; lo->name != NULL; lo++) {
		size_t n = strlen(lo->name);

		/* --help and --version are EAL's too (-h, -v) */
		if (lo->has_arg == no_argument)
			continue;
		if (strncmp(arg + 2, lo->name, n) == 0 &&
		    (arg[2 + n] == '\0' || arg[2 + n] == '='))
			return lo->name;
	}
	return NULL;
}

/* A pcap file libpcap reads: pcap (either byte order, us or ns) or pcapng. */
static int
check_pcap(const char *vdev, const char *path, size_t len)
{
	static const uint32_t magic[] = { 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d,
					  0x4d3cb2a1, 0x0a0d0d0a };
	char file[PATH_MAX];
	uint32_t m = 0;
	FILE *f;

	if (len >= sizeof(file)) {
		fprintf(stderr, "mwpath: --vdev %s: rx_pcap: path too long\n", vdev);
		return -1;
	}
	memcpy(file, path, len);
	file[len] = '\0';
	f = fopen(file, "rb");
	if (f == NULL) {
		fprintf(stderr, "mwpath: --vdev %s: rx_pcap %s: %s\n", vdev, file,
			strerror(errno));
		return -1;
	}
	if (fread(&m, sizeof(m), 1, f) != 1)
		m = 0;
	fclose(f);
	for (size_t i = 0; i < RTE_DIM(magic); i++)
		if (m == magic[i])
			return 0;
	fprintf(stderr, "mwpath: --vdev %s: rx_pcap %s: not a pcap or pcapng file\n",
		vdev, file);
	return -1;
}

/* Every rx_pcap=FILE of one --vdev's argument. */
static int
check_vdev(const char *v)
{
	size_t name_len = strcspn(v, ",");
	char name[64];

	snprintf(name, sizeof(name), "%.*s", (int)name_len, v);
	for (const char *p = v + name_len; *p == ','; ) {
		size_t n;

		p++;
		n = strcspn(p, ",");
		if (strncmp(p, "rx_pcap=", 8) == 0 && check_pcap(name, p + 8, n - 8) != 0)
			return -1;
		p += n;
	}
	return 0;
}

int
app_options_check_eal(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *name = program_option(argv[i]);

		if (name != NULL) {
			fprintf(stderr, "mwpath: --%s is mwpath's option, not EAL's: put it "
				"after \"--\" (mwpath [EAL options] -- [options])\n", name);
			return -1;
		}
		if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc) {
			if (check_vdev(argv[++i]) != 0)
				return -1;
		} else if (strncmp(argv[i], "--vdev=", 7) == 0 &&
			   check_vdev(argv[i] + 7) != 0) {
			return -1;
		}
	}
	return 0;
}

int
app_default_eal_args(char ***argv_out, const char *prog)
{
	static char vdev[PATH_MAX + 128];
	static char *args[] = {
		NULL, "-l", NULL, "--no-huge", "--no-pci", "--no-shconf",
		"-m", "256", "--log-level=lib.eal:warning",
		"--log-level=lib.telemetry:warning",
		"--log-level=pmd.net.pcap:warning",
		"--vdev", vdev, NULL,
	};

	args[0] = (char *)(uintptr_t)prog;
	/* a worker lcore to poll when there is a second CPU; else the main
	 * lcore polls */
	args[2] = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? "0-1" : "0";
	snprintf(vdev, sizeof(vdev),
		 "net_pcap0,rx_pcap=%s/default-traffic.pcap,tx_pcap=%s",
		 app_conf_dir(), DEFAULT_TX_PCAP);
	*argv_out = args;
	return (int)RTE_DIM(args) - 1;
}
