/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mwpath: EAL start-up, options, configuration, launching the polling
 * lcores, signals, and the summary.  The datapath itself is in lib/ and
 * pmd/.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "config.h"
#include "dump.h"
#include "telemetry.h"
#include "cm.h"
#include "objects.h"
#include "mwp_pmd.h"
#include "options.h"
#include "summary.h"

#define EXIT_USAGE 2
#define MONITOR_TICK_US 1000
#define MBUF_CACHE 256

static bool stop_flag;
static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	got_signal = sig;
	__atomic_store_n(&stop_flag, true, __ATOMIC_RELAXED);
}

/* Housekeeping done by the main lcore about once a millisecond. */
struct monitor {
	struct app_run *run;
	const struct app_options *opt;
	struct app_objects *objs;
	struct app_cm *cm;
	uint64_t next_stats;
	struct app_interval iv;		/* --stats-interval: the last lines */
};

static void
monitor_tick(void *arg)
{
	struct monitor *m = arg;
	struct app_run *run = m->run;

	/* completions, and the send rings' deferred work */
	app_objects_collect(m->objs);
	app_cm_tick(m->cm, run);
	if (m->opt->idle_exit_ms != 0) {
		bool idle = app_objects_outstanding(m->objs) == 0;

		for (unsigned int l = 0; l < run->nb_lcores && idle; l++)
			idle = mwp_lcore_idle_us(&run->lcores[l]) >=
			       (uint64_t)m->opt->idle_exit_ms * 1000;
		if (idle) {
			run->stop_reason = "idle (--idle-exit)";
			__atomic_store_n(&stop_flag, true, __ATOMIC_RELAXED);
			return;
		}
	}
	if (m->opt->stats_interval_s != 0 && rte_rdtsc() >= m->next_stats) {
		app_print_interval(stdout, run, &m->iv);
		m->next_stats = rte_rdtsc() +
			(uint64_t)m->opt->stats_interval_s * rte_get_tsc_hz();
	}
}

/* Give each port lcores_per_port queue pairs, spread over the polling
 * lcores: queue q of port p goes to lcore (p * lcores_per_port + q) mod n. */
static int
assign_queues(struct app_run *run, unsigned int *poll_ids, unsigned int lpp)
{
	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		for (uint16_t qid = 0; qid < lpp; qid++) {
			unsigned int slot = pid * lpp + qid;
			struct mwp_lcore *lc = &run->lcores[slot % run->nb_lcores];
			struct mwp_lcore_queue *q;

			if (lc->nb_queues == MWP_MAX_QUEUES_PER_LCORE) {
				fprintf(stderr, "mwpath: %u queues need more than %u lcores\n",
					run->nb_ports * lpp, run->nb_lcores);
				return -1;
			}
			q = &lc->q[lc->nb_queues++];
			q->port_id = pid;
			q->queue_id = qid;
			q->port = run->ports[pid];
			if (mwp_host_on(&run->hosts[pid]))
				q->host = &run->hosts[pid];
		}
	}
	for (unsigned int l = 0; l < run->nb_lcores; l++) {
		run->lcores[l].lcore_id = poll_ids[l];
		run->lcores[l].stop = &stop_flag;
		/* its engine, and the library's queues (queue 0 of a port
		 * owns the port's QPs) */
		if (mwp_lcore_init(&run->lcores[l],
				   (int)rte_lcore_to_socket_id(poll_ids[l])) != 0)
			return -1;
	}
	return 0;
}

/* Work requests with after_rx: the lcore polling each port's first queue
 * runs them at their frame counts. */
static void
assign_gates(struct app_run *run, struct app_objects *objs)
{
	for (unsigned int l = 0; l < run->nb_lcores; l++)
		for (uint16_t i = 0; i < run->lcores[l].nb_queues; i++) {
			struct mwp_lcore_queue *q = &run->lcores[l].q[i];

			if (q->queue_id == 0)
				q->gate = app_objects_gate(objs, q->port_id);
		}
}

/* rte_flow: each port's QPs to the queues of their owners, the rest of
 * RoCEv2 over all its queues, where the PMD can (mwp_flow_setup). */
static void
steer(struct app_run *run, const struct app_objects *objs, unsigned int lpp)
{
	static uint32_t qpns[APP_MAX_QP];
	static uint16_t owner[APP_MAX_QP];

	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		unsigned int n = 0;

		for (unsigned int i = 0; i < objs->nb_qps; i++) {
			struct mwp_qp_info qi;
			unsigned int eng;
			uint16_t q;

			if (mwp_qp_query_info(objs->qp[i], &qi) != 0 ||
			    qi.port != run->ports[pid] ||
			    mwp_qp_owner(objs->qp[i], &eng, &q) != 0)
				continue;
			qpns[n] = objs->qp[i]->qp_num;
			owner[n++] = q;
		}
		mwp_flow_setup(pid, (uint16_t)lpp, qpns, owner, n, &run->flows[pid]);
	}
}

static int
start_ports(struct app_run *run, const struct app_config *cfg,
	    struct rte_mempool *mp, unsigned int lpp)
{
	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		const struct mwp_host_conf *hc = &cfg->port[pid].host;
		struct mwp_port_conf pc;

		app_config_port(cfg, pid, &pc);
		/* a tap holding the port's MAC needs to know it */
		if (hc->on && rte_is_zero_ether_addr(&pc.mac))
			rte_eth_macaddr_get(pid, &pc.mac);
		if (mwp_xdp_port(pid)) {
			char err[256];

			if (hc->on) {
				fprintf(stderr, "mwpath: %s: [port %u] exception = tap is for a port the kernel has not got; on net_af_xdp the interface stays the kernel's\n",
					cfg->file, pid);
				return -1;
			}
			if (mwp_xdp_port_conf(pid, &pc, err, sizeof(err)) != 0) {
				fprintf(stderr, "mwpath: %s: [port %u] %s\n", cfg->file, pid, err);
				return -1;
			}
		}
		/* the port's QPs are spread over its queues' lcores */
		pc.nb_queues = (uint16_t)lpp;
		run->ports[pid] = mwp_port_create(&pc, pid, rte_eth_dev_socket_id(pid));
		if (run->ports[pid] == NULL) {
			fprintf(stderr, "mwpath: port %u: %s\n", pid,
				rte_strerror(rte_errno));
			return -1;
		}
		mwp_port_set_mempool(run->ports[pid], mp);
		if (mwp_ethdev_start(pid, (uint16_t)lpp, mp, &pc.mac,
				     pc.mtu + MWP_IP_OVERHEAD) != 0) {
			fprintf(stderr, "mwpath: port %u: cannot start (see log above)\n",
				pid);
			return -1;
		}
		if (pc.kernel_neigh) {
			char err[256];

			if (mwp_xdp_start(&run->xdps[pid], pid, run->ports[pid], err,
					  sizeof(err)) != 0) {
				fprintf(stderr, "mwpath: port %u (net_af_xdp): %s\n", pid, err);
				return -1;
			}
		}
		if (hc->on) {
			char err[256];

			if (mwp_host_start(&run->hosts[pid], hc, &pc, pid, (uint16_t)lpp, mp, err,
					   sizeof(err)) != 0) {
				fprintf(stderr, "mwpath: %s: [port %u] exception: %s\n", cfg->file,
					pid, err);
				return -1;
			}
		}
	}
	return 0;
}

static int
run_lcores(struct app_run *run, const struct app_options *opt,
	   struct app_objects *objs, struct app_cm *cm)
{
	struct monitor mon = { .run = run, .opt = opt, .objs = objs, .cm = cm };
	unsigned int main_id = rte_get_main_lcore();
	struct mwp_lcore *main_lc = NULL;
	uint64_t t0 = rte_rdtsc();

	run->start_tsc = t0;

	mon.next_stats = t0 + (uint64_t)opt->stats_interval_s * rte_get_tsc_hz();
	for (unsigned int l = 0; l < run->nb_lcores; l++) {
		struct mwp_lcore *lc = &run->lcores[l];

		if (lc->lcore_id == main_id) {
			main_lc = lc;
			continue;
		}
		if (rte_eal_remote_launch(mwp_lcore_main, lc, lc->lcore_id) != 0) {
			fprintf(stderr, "mwpath: cannot launch lcore %u\n", lc->lcore_id);
			__atomic_store_n(&stop_flag, true, __ATOMIC_RELAXED);
			rte_eal_mp_wait_lcore();
			return -1;
		}
	}
	if (main_lc != NULL) {
		main_lc->tick = monitor_tick;
		main_lc->tick_arg = &mon;
		main_lc->tick_us = MONITOR_TICK_US;
		mwp_lcore_main(main_lc);
	} else {
		while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
			monitor_tick(&mon);
			rte_delay_us_sleep(MONITOR_TICK_US);
		}
	}
	rte_eal_mp_wait_lcore();
	run->seconds = (double)(rte_rdtsc() - t0) / rte_get_tsc_hz();
	/* The handler stops the lcores itself; say why here. */
	if (got_signal != 0)
		run->stop_reason = got_signal == SIGINT ? "SIGINT" : "SIGTERM";
	return 0;
}

int
main(int argc, char **argv)
{
	static struct app_config cfg;
	static struct app_objects objs;
	static struct app_cm cms;
	struct app_options opt = { 0 };
	struct app_run run = { .stop_reason = "error" };
	unsigned int poll_ids[RTE_MAX_LCORE];
	char **eal_argv, **app_argv, **xdp_argv;
	int eal_argc, app_argc, sep = -1, ret, status = EXIT_FAILURE;
	struct rte_mempool *mp;
	uint16_t room = RTE_MBUF_DEFAULT_BUF_SIZE;
	unsigned int nb_mbufs;
	bool any_xdp = false;
	unsigned int id;
	char conf_path[PATH_MAX];

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	/* Without "--" every argument is the program's own. */
	opt.default_eal = sep <= 1;
	app_argc = sep < 0 ? argc : argc - sep;
	app_argv = calloc(app_argc + 1, sizeof(char *));
	if (app_argv == NULL)
		return EXIT_FAILURE;
	app_argv[0] = argv[0];
	for (int i = 1; i < app_argc; i++)
		app_argv[i] = argv[(sep < 0 ? 0 : sep) + i];

	switch (app_options_parse(app_argc, app_argv, &opt)) {
	case APP_PARSE_EXIT_OK:
		free(app_argv);
		return EXIT_SUCCESS;
	case APP_PARSE_EXIT_USAGE:
		free(app_argv);
		return EXIT_USAGE;
	case APP_PARSE_RUN:
		break;
	}
	free(app_argv);
	if (opt.config == NULL) {
		snprintf(conf_path, sizeof(conf_path), "%s/default.ini", app_conf_dir());
		opt.config = conf_path;
	}
	/* A bad configuration stops us before the EAL touches any port. */
	if (app_config_load(opt.config, &cfg) != 0)
		return EXIT_USAGE;

	if (opt.default_eal) {
		eal_argc = app_default_eal_args(&eal_argv, argv[0]);
		printf("mwpath: no EAL options given; using:");
		for (int i = 1; i < eal_argc; i++)
			printf(" %s", eal_argv[i]);
		printf("\nmwpath: config %s\n", opt.config);
		fflush(stdout);
	} else {
		eal_argc = sep;
		eal_argv = argv;
	}
	if (app_options_check_eal(eal_argc, eal_argv) != 0)
		return EXIT_USAGE;
	/* a net_af_xdp vdev gets mwpath's XDP program unless it names one */
	{
		char err[256];

		if (mwp_xdp_eal_args(eal_argc, eal_argv, &xdp_argv, err, sizeof(err)) < 0) {
			fprintf(stderr, "mwpath: net_af_xdp: %s\n", err);
			return EXIT_FAILURE;
		}
	}
	ret = rte_eal_init(eal_argc, xdp_argv);
	mwp_xdp_eal_args_free(eal_argc, xdp_argv);
	if (ret < 0) {
		fprintf(stderr, "mwpath: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		return rte_errno == EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	run.nb_ports = rte_eth_dev_count_avail();
	if (run.nb_ports == 0) {
		fprintf(stderr, "mwpath: no DPDK port (add one with --vdev or -a)\n");
		goto out_eal;
	}
	for (unsigned int p = run.nb_ports; p < RTE_MAX_ETHPORTS; p++)
		if (cfg.port_present[p]) {
			fprintf(stderr, "mwpath: %s: [port %u] configured, but the EAL has only %u port%s\n",
				cfg.file, p, run.nb_ports, run.nb_ports == 1 ? "" : "s");
			status = EXIT_USAGE;
			goto out_eal;
		}

	/* Workers poll; with none, the main lcore polls too. */
	RTE_LCORE_FOREACH_WORKER(id)
		poll_ids[run.nb_lcores++] = id;
	if (run.nb_lcores == 0)
		poll_ids[run.nb_lcores++] = rte_get_main_lcore();
	if (run.nb_lcores > run.nb_ports * opt.lcores_per_port)
		run.nb_lcores = run.nb_ports * opt.lcores_per_port;
	run.lcores = rte_zmalloc("mwp_lcores", run.nb_lcores * sizeof(*run.lcores),
				 RTE_CACHE_LINE_SIZE);
	run.ports = rte_zmalloc("mwp_ports", run.nb_ports * sizeof(*run.ports), 0);
	run.flows = rte_zmalloc("mwp_flows", run.nb_ports * sizeof(*run.flows), 0);
	run.hosts = rte_zmalloc("mwp_hosts", run.nb_ports * sizeof(*run.hosts), 0);
	run.xdps = rte_zmalloc("mwp_xdps", run.nb_ports * sizeof(*run.xdps), 0);
	if (run.lcores == NULL || run.ports == NULL || run.flows == NULL || run.hosts == NULL ||
	    run.xdps == NULL) {
		fprintf(stderr, "mwpath: out of memory\n");
		goto out_free;
	}
	/* one pool for all ports: its mbufs hold the largest port's frames */
	for (uint16_t pid = 0; pid < run.nb_ports; pid++) {
		struct mwp_port_conf pc;

		app_config_port(&cfg, pid, &pc);
		room = RTE_MAX(room, mwp_port_mbuf_room(pc.mtu));
	}
	nb_mbufs = run.nb_ports * (opt.lcores_per_port * 2 * 1024 + 1024) +
		   run.nb_lcores * (MBUF_CACHE + 2 * MWP_RX_BURST) + 1023;
	for (uint16_t pid = 0; pid < run.nb_ports; pid++)
		any_xdp |= mwp_xdp_port(pid);
	/* net_af_xdp makes its umem of the pool: objects back to back */
	mp = any_xdp ? mwp_xdp_pool_create("mwp_mbuf", nb_mbufs, MBUF_CACHE, room,
					   rte_socket_id()) :
		       rte_pktmbuf_pool_create("mwp_mbuf", nb_mbufs, MBUF_CACHE, 0, room,
					       rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "mwpath: cannot create the mbuf pool: %s\n",
			rte_strerror(rte_errno));
		goto out_free;
	}
	mwp_warm_mempool(mp);
	if (start_ports(&run, &cfg, mp, opt.lcores_per_port) != 0 ||
	    assign_queues(&run, poll_ids, opt.lcores_per_port) != 0)
		goto out_ports;
	if (app_objects_create(&cfg, &run, &objs) != 0) {
		status = EXIT_USAGE;
		goto out_objects;
	}
	app_objects_print_keys(stdout, &objs);
	if (app_cm_start(&cms, &cfg, &run, &objs) != 0)
		goto out_objects;
	assign_gates(&run, &objs);
	steer(&run, &objs, opt.lcores_per_port);
	app_telemetry_init(&run, &objs);

	run.stop_reason = "stop";
	if (run_lcores(&run, &opt, &objs, &cms) == 0)
		status = EXIT_SUCCESS;
	/* the lcores are gone: grace periods end, completions arrive */
	for (int i = 0; i < 4; i++)
		app_objects_collect(&objs);
	app_print_summary(stdout, &run);
	app_objects_print(stdout, &objs);
	app_cm_print(stdout, &cms, &run);
	if (opt.dump_dir != NULL && app_dump(opt.dump_dir, &objs, &run) != 0)
		status = EXIT_FAILURE;
out_objects:
out_ports:
	for (uint16_t pid = 0; pid < run.nb_ports; pid++) {
		mwp_xdp_stop(&run.xdps[pid]);
		mwp_ethdev_close(pid);
		mwp_host_stop(&run.hosts[pid]);
	}
	/* QPs leave their ports' tables and engines: before those go */
	app_cm_stop(&cms, &run);
	app_objects_destroy(&objs);
	for (unsigned int l = 0; l < run.nb_lcores; l++)
		mwp_lcore_fini(&run.lcores[l]);
	for (uint16_t pid = 0; pid < run.nb_ports; pid++)
		mwp_port_free(run.ports[pid]);
	rte_mempool_free(mp);
out_free:
	rte_free(run.xdps);
	rte_free(run.hosts);
	rte_free(run.flows);
	rte_free(run.ports);
	rte_free(run.lcores);
out_eal:
	rte_eal_cleanup();
	return status;
}
