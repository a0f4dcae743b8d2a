/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mwpath's devices: [device N] sections of the configuration that
 * $MWPATH_CONFIG names, each a DPDK port with its [port N] addresses.
 * Opening one starts DPDK in the program (once: the EAL cannot start
 * twice in a process) with the section's EAL arguments, then the port,
 * an engine and the library's device; the datapath runs in the program's
 * own verbs calls (ibv_poll_cq) until the process ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_random.h>

#include "mwp_ibv.h"

#define EAL_MAX_ARGS	64
#define NB_MBUFS	8191
#define MBUF_CACHE	256

static struct mwp_ibv_dev devs[APP_MAX_DEVICES];
static unsigned int nb_devs;
static pthread_once_t read_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t eal_lock = PTHREAD_MUTEX_INITIALIZER;
static bool eal_up;

static void end_aside(struct mwp_ibv_dev *d);
static void cm_thread_wake(void *arg);
static void kick_threads(struct mwp_ibv_dev *d);

/* EUI-64 from the MAC (RFC 4291, appendix A), as IB GUIDs are made. */
static uint64_t
guid_of(const struct rte_ether_addr *mac)
{
	const uint8_t *a = mac->addr_bytes;
	const uint8_t g[8] = { a[0] ^ 2, a[1], a[2], 0xff, 0xfe, a[3], a[4], a[5] };
	uint64_t v;

	memcpy(&v, g, sizeof(v));
	return v;
}

/* The GID table: RoCE v2 GIDs of the port's addresses. */
static void
make_gids(struct mwp_ibv_dev *d)
{
	d->nb_gids = 0;
	if (d->pc.has_ipv4) {
		union ibv_gid *g = &d->gid[d->nb_gids++];

		memset(g, 0, sizeof(*g));
		g->raw[10] = 0xff;
		g->raw[11] = 0xff;
		memcpy(&g->raw[12], &d->pc.ipv4, 4);
	}
	if (d->pc.has_ipv6)
		memcpy(d->gid[d->nb_gids++].raw, d->pc.ipv6, 16);
}

static void
read_config(void)
{
	static struct app_config cfg;
	const char *file = getenv("MWPATH_CONFIG");

	if (file == NULL || *file == '\0')
		return;
	if (app_config_load(file, &cfg) != 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: no mwpath device (see above)\n", file);
		return;
	}
	for (unsigned int i = 0; i < APP_MAX_DEVICES; i++) {
		struct mwp_ibv_dev *d = &devs[nb_devs];

		if (!cfg.device[i].present)
			continue;
		d->index = i;
		d->conf = cfg.device[i];
		d->sequential_keys = cfg.sequential_keys;
		app_config_port(&cfg, d->conf.port, &d->pc);
		d->hc = cfg.port[d->conf.port].host;
		if (d->conf.start == APP_START_DEFAULT)
			d->conf.start = d->hc.on ? APP_START_LOAD : APP_START_OPEN;
		d->cm_on = app_config_port_cm(&cfg, d->conf.port);
		d->share_part = -1;
		snprintf(d->dev.name, sizeof(d->dev.name), "mwpath%u", i);
		snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "mwpath%u", i);
		snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "%s", file);
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "%s", file);
		d->dev.node_type = IBV_NODE_CA;
		d->dev.transport_type = IBV_TRANSPORT_IB;
		d->guid = guid_of(&d->pc.mac);
		make_gids(d);
		pthread_mutex_init(&d->lock, NULL);
		__atomic_store_n(&d->poll, 0, __ATOMIC_RELAXED);
		nb_devs++;
	}
	if (nb_devs == 0)
		fprintf(stderr, "mwpath-ibverbs: %s: no [device N] section\n", file);
}

unsigned int
mwp_ibv_devices(struct mwp_ibv_dev **out)
{
	pthread_once(&read_once, read_config);
	*out = devs;
	return nb_devs;
}

struct mwp_ibv_dev *
mwp_ibv_dev_of(const struct ibv_device *dev)
{
	const struct mwp_ibv_dev *d = container_of(dev, const struct mwp_ibv_dev, dev);

	if (d < devs || d >= devs + nb_devs)
		return NULL;
	return (struct mwp_ibv_dev *)(uintptr_t)d;
}

struct mwp_ibv_dev *
mwp_ibv_fd_dev(int fd)
{
	struct stat st, mine;

	if (fd < 0 || fstat(fd, &st) != 0)
		return NULL;
	for (unsigned int i = 0; i < nb_devs; i++)
		if (devs[i].ctx != NULL && devs[i].ctx->cmd_fd >= 0 &&
		    fstat(devs[i].ctx->cmd_fd, &mine) == 0 &&
		    st.st_dev == mine.st_dev && st.st_ino == mine.st_ino)
			return &devs[i];
	return NULL;
}

/* Does args name an option (by any of its spellings)? */
static bool
has_option(char **argv, int argc, const char *const *names)
{
	for (int i = 0; i < argc; i++)
		for (const char *const *n = names; *n != NULL; n++)
			if (strncmp(argv[i], *n, strlen(*n)) == 0)
				return true;
	return false;
}

/* The EAL for the process, with d's arguments: split at spaces, and
 * unless they say otherwise, one lcore, this process's own file prefix
 * (two programs coexist), no telemetry socket and warnings only.  The
 * calling thread keeps its CPU affinity (the EAL would pin it). */
static int
start_eal(const struct mwp_ibv_dev *d)
{
	static const char *const lcores[] = { "-l", "-c", "--lcores", NULL };
	static const char *const prefix[] = { "--file-prefix", NULL };
	static const char *const telemetry[] = { "--telemetry", "--no-telemetry", NULL };
	static const char *const log[] = { "--log-level", NULL };
	static char buf[APP_DEVICE_EAL_LEN], pfx[64];
	char *argv[EAL_MAX_ARGS + 8], *save = NULL, **eal_argv, xerr[256];
	cpu_set_t cpus;
	int argc = 0, ret, user;

	argv[argc++] = (char *)"mwpath-ibverbs";
	/* $MWPATH_EAL, if set, instead of the section's eal */
	snprintf(buf, sizeof(buf), "%s", getenv("MWPATH_EAL") != NULL ? getenv("MWPATH_EAL") :
					   d->conf.eal);
	for (char *t = strtok_r(buf, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save)) {
		if (argc == EAL_MAX_ARGS) {
			fprintf(stderr, "mwpath-ibverbs: %s: more than %d EAL arguments\n",
				d->dev.name, EAL_MAX_ARGS - 1);
			return -EINVAL;
		}
		argv[argc++] = t;
	}
	user = argc;
	if (!has_option(argv + 1, user - 1, lcores))
		argv[argc++] = (char *)"-l0";
	if (!has_option(argv + 1, user - 1, prefix)) {
		snprintf(pfx, sizeof(pfx), "--file-prefix=mwpath-ibv-%d", (int)getpid());
		argv[argc++] = pfx;
	}
	if (!has_option(argv + 1, user - 1, telemetry))
		argv[argc++] = (char *)"--no-telemetry";
	if (!has_option(argv + 1, user - 1, log))
		argv[argc++] = (char *)"--log-level=warning";
	argv[argc] = NULL;
	/* a net_af_xdp vdev gets mwpath's XDP program unless it names one */
	ret = mwp_xdp_eal_args(argc, argv, &eal_argv, xerr, sizeof(xerr));
	if (ret < 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: net_af_xdp: %s\n", d->dev.name, xerr);
		return ret;
	}

	/* DPDK's own log stream writes to syslog too, and syslog opens
	 * /etc/localtime: a DPDK thread logging (memif's control thread
	 * when its peer goes) while the program exits then deadlocks with
	 * exit's flush of every stream, which holds the stream list and
	 * flushes that stream into syslog.  A library inside somebody
	 * else's program has no business in syslog anyway: stderr only. */
	rte_openlog_stream(stderr);
	pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	ret = rte_eal_init(argc, eal_argv);
	mwp_xdp_eal_args_free(argc, eal_argv);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	if (ret < 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: DPDK did not start (EAL arguments '%s'): %s\n",
			d->dev.name, getenv("MWPATH_EAL") != NULL ? getenv("MWPATH_EAL") :
			d->conf.eal, rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

/* Before a port goes down at exit: keep its datapath running until it
 * has been idle for LINGER_IDLE_MS (LINGER_MAX_MS at most), as a NIC keeps
 * answering after the program's last call.  Frames already sent stay
 * readable meanwhile: a memif peer, for one, drops what it had not read
 * when the link goes down, and the last ACK of a program that exits
 * right after its last completion would be lost with the link.  A port
 * whose host keeps its addresses lingers longer: the tap goes with the
 * process, and the kernel may still hold the program's last TCP segment
 * (Nagle waits for an ACK that a peer may delay up to 200 ms). */
#define LINGER_IDLE_MS	20
#define LINGER_MAX_MS	200
#define LINGER_HOST_IDLE_MS	250
#define LINGER_HOST_MAX_MS	1000

static void
linger(struct mwp_ibv_dev *d)
{
	const uint64_t ms = rte_get_tsc_hz() / 1000, start = rte_rdtsc();
	const bool host = mwp_host_on(&d->host);
	const uint64_t idle = (host ? LINGER_HOST_IDLE_MS : LINGER_IDLE_MS) * ms;
	const uint64_t most = (host ? LINGER_HOST_MAX_MS : LINGER_MAX_MS) * ms;
	uint64_t busy = start;

	while (rte_rdtsc() - start < most && rte_rdtsc() - busy < idle) {
		if (d->conf.progress == APP_PROGRESS_CALLS) {
			if (mwp_ibv_progress(d) != 0)
				busy = rte_rdtsc();
		} else {
			/* its thread or lcore polls: only the idle time counts */
			usleep(1000);
			if (mwp_lcore_idle_us(&d->lc) < 1000)
				busy = rte_rdtsc();
		}
	}
}

/* With $MWPATH_STATS set: the device's counters at exit -- and when the
 * program aborts, as UCX does on a fatal error -- in one line: what the
 * port received, accepted and sent, and every reason it dropped frames
 * for, to tell a peer that never answered from frames mwpath refused.
 * Written with one write(2), which a signal handler may call. */
static void
print_stats(const struct mwp_ibv_dev *d)
{
	const struct mwp_stats *st = &d->lc.q[0].stats;
	struct rte_eth_stats es = { 0 };
	char line[2048];
	int n;

	/* what the device itself missed (its ring full: the thread that
	 * polls it did not run) */
	rte_eth_stats_get(d->conf.port, &es);
	n = snprintf(line, sizeof(line), "mwpath-ibverbs: %s: rx %" PRIu64 " accepted %" PRIu64
		     " ctrl %" PRIu64 " tx %" PRIu64 " wr_api %" PRIu64 " retrans %" PRIu64
		     " ce %" PRIu64 " cnp_tx %" PRIu64 " cnp_rx %" PRIu64 " imissed %" PRIu64
		     " asides_long %" PRIu64 " asides_ended %" PRIu64,
		     d->dev.name, st->rx_pkts, st->accepted, st->ctrl, st->tx_pkts,
		     mwp_device_wr_api_posted(d->ctx), st->retrans, st->ce, st->cnp_tx, st->cnp_rx,
		     es.imissed, __atomic_load_n(&d->asides_long, __ATOMIC_RELAXED),
		     __atomic_load_n(&d->asides_ended, __ATOMIC_RELAXED));
	for (unsigned int r = 1; r < MWP_DROP__MAX && n < (int)sizeof(line) - 1; r++)
		if (st->drop[r] != 0)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %s %" PRIu64,
				      mwp_drop_name((enum mwp_drop)r), st->drop[r]);
	if (d->lc.q[0].host != NULL && n < (int)sizeof(line) - 1)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " to_host %" PRIu64
			      " from_host %" PRIu64 " host_lost %" PRIu64, st->host,
			      st->host_out, st->host_lost);
	if (mwp_xdp_on(&d->xdp) && n < (int)sizeof(line) - 1) {
		uint64_t c[MWP_XDP_NB_COUNTS];

		mwp_xdp_counts(&d->xdp, c);
		n += snprintf(line + n, sizeof(line) - (size_t)n, " xdp_to_mwpath %" PRIu64
			      " xdp_to_kernel %" PRIu64 " xdp_not_ours %" PRIu64
			      " xdp_no_socket %" PRIu64 " neigh_asked %" PRIu64
			      " neigh_reports %" PRIu64, c[MWP_XDP_TO_MWPATH],
			      c[MWP_XDP_TO_KERNEL], c[MWP_XDP_NOT_OURS], c[MWP_XDP_NO_SOCKET],
			      __atomic_load_n(&d->xdp.asked, __ATOMIC_RELAXED),
			      __atomic_load_n(&d->xdp.reports, __ATOMIC_RELAXED));
	}
	n = RTE_MIN(n, (int)sizeof(line) - 2);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/* The program's own SIGABRT handling, which abort_stats hands on to. */
static struct sigaction prev_abrt;

static void
abort_stats(int sig)
{
	for (unsigned int i = 0; i < nb_devs; i++)
		if (devs[i].ctx != NULL)
			print_stats(&devs[i]);
	sigaction(sig, &prev_abrt, NULL);
	raise(sig);
}

/* Is the port memif's?  Its link goes down with the process, and closing
 * it at exit raced the peer's own exit: the EAL's interrupt thread,
 * handling the peer's disconnect, used the port the close had freed
 * (ib_send_bw crashed so after its run, about once in 25).  Exit closes
 * its socket, which the peer sees as the link going down. */
static bool
is_memif(uint16_t pid)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(pid, &info) == 0 &&
	       strcmp(info.driver_name, "net_memif") == 0;
}

static void stop_engine(struct mwp_ibv_dev *d);

static void
stop_ports(void)
{
	for (unsigned int i = 0; i < nb_devs; i++) {
		struct mwp_ibv_dev *d = &devs[i];

		/* (a shared device a forked child could not take is the
		 * parent's: nothing of it is this process's to stop) */
		if (d->ctx == NULL || (d->share != NULL && d->share_part < 0))
			continue;
		if (!__atomic_load_n(&d->moved, __ATOMIC_RELAXED)) {
			/* what the program's ids still owe their peers (a DREP
			 * for a DREQ it heard, a DREQ for a connection up), as
			 * the kernel's rdma_cm does when a process's file
			 * closes; the linger sends it */
			if (d->cm != NULL)
				mwp_cm_release_all(d->cm);
			linger(d);
		}
		__atomic_store_n(&d->stop, true, __ATOMIC_RELAXED);
		end_aside(d);
		if (d->has_thread)
			pthread_join(d->thread, NULL);
		__atomic_store_n(&d->cm_stop, true, __ATOMIC_SEQ_CST);
		cm_thread_wake(d);
		if (d->has_cm_thread)
			pthread_join(d->cm_thread, NULL);
		if (d->conf.progress == APP_PROGRESS_LCORE)
			rte_eal_wait_lcore(d->lcore);
		else if (!__atomic_load_n(&d->moved, __ATOMIC_RELAXED))
			stop_engine(d);
		if (getenv("MWPATH_STATS") != NULL)
			print_stats(d);
		mwp_xdp_stop(&d->xdp);
		if (!is_memif(d->conf.port))
			mwp_ethdev_close(d->conf.port);
		mwp_host_stop(&d->host);
		mwp_ibv_share_leave(d);
	}
}

/* The poll lock: one poller of the port at a time.  A flag, not a mutex:
 * the datapath only tries it (once a poll_cq), and a mutex's unlock is a
 * locked instruction of its own (with the trylock, 15% of ib_send_bw's
 * server, 64 B between two devices).  Those that must have it (a pause,
 * a fork, the stop) sleep between tries. */
static inline bool
poll_trylock(struct mwp_ibv_dev *d)
{
	uint32_t free_ = 0;

	return __atomic_compare_exchange_n(&d->poll, &free_, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void
poll_lock(struct mwp_ibv_dev *d)
{
	while (!poll_trylock(d))
		usleep(10);
}

static inline void
poll_unlock(struct mwp_ibv_dev *d)
{
	__atomic_store_n(&d->poll, 0, __ATOMIC_RELEASE);
}

unsigned int
mwp_ibv_progress(struct mwp_ibv_dev *d)
{
	unsigned int work;

	if (d->conf.progress == APP_PROGRESS_LCORE)
		return 0;	/* its lcore polls, alone */
	if (__atomic_load_n(&d->moved, __ATOMIC_RELAXED))
		return 0;	/* a child process drives the port */
	if (!poll_trylock(d))
		return 0;	/* another thread is polling */
	mwp_reader_online(d->ctx, MWP_IBV_READER);
	/* A turn of the engine, parked after it rather than stopped: a stop
	 * and a start took the device lock twice and visited every QP on
	 * every call, a fifth of both perftest processes' time with 64 B
	 * SENDs.  A control op meanwhile takes the parked engine's turn
	 * (mwp_engine_park). */
	if (mwp_engine_resume(d->lc.eng)) {
		work = mwp_lcore_poll(&d->lc);
		mwp_engine_park(d->lc.eng);
	} else {
		work = 0;	/* a control op has the turn */
	}
	mwp_reader_offline(d->ctx, MWP_IBV_READER);
	poll_unlock(d);
	return work;
}

/* The engine stopped for good (the device stops): its last turn, and its
 * QPs back to mwp_poll. */
static void
stop_engine(struct mwp_ibv_dev *d)
{
	if (d->conf.progress == APP_PROGRESS_LCORE || d->lc.eng == NULL)
		return;
	poll_lock(d);
	while (!mwp_engine_resume(d->lc.eng))
		usleep(10);
	mwp_engine_stop(d->lc.eng);
	poll_unlock(d);
}

/* Set on the CM's thread, which polls QP1's CQ through the same verbs as
 * the program: its polls are not the program's. */
static __thread bool on_cm_thread;

unsigned int
mwp_ibv_app_poll(struct mwp_ibv_dev *d)
{
	/* the CM thread's tick would count as the program polling: the
	 * progress thread would stand aside for it every tick (with the
	 * kernel's default timer slack, for about 60 us of every 500); its
	 * datapath turn is its own (cm_thread) */
	if (on_cm_thread)
		return 0;
	__atomic_store_n(&d->app_poll_tsc, rte_rdtsc(), __ATOMIC_RELAXED);
	return mwp_ibv_progress(d);
}

/* The progress thread's long stand-aside ends now. */
static void
end_aside(struct mwp_ibv_dev *d)
{
	/* seq_cst, against stand_aside's: either the thread sees the kick
	 * before it sleeps, or this sees it asleep and wakes it */
	__atomic_fetch_add(&d->aside_kick, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&d->aside_long, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &d->aside_kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void
mwp_ibv_app_waits(struct mwp_ibv_dev *d)
{
	if (!on_cm_thread)
		end_aside(d);
}

/* The CM thread has work now (mwp_cm_set_wake's function): its sleep
 * ends.  Any thread; short. */
static void
cm_thread_wake(void *arg)
{
	struct mwp_ibv_dev *d = arg;

	__atomic_fetch_add(&d->cm_kick, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &d->cm_kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void
mwp_ibv_cm_kick(struct mwp_ibv_dev *d)
{
	if (d->has_cm_thread)
		cm_thread_wake(d);
}

/* The device's threads look at their stop and park flags now. */
static void
kick_threads(struct mwp_ibv_dev *d)
{
	end_aside(d);
	cm_thread_wake(d);
}

/* The progress thread: the datapath runs while the program does not call
 * (a passive perftest side waits in its TCP socket, UCX in epoll).  It
 * polls while there is work (and a while after it, for a passive
 * program) and sleeps ever longer, up to IDLE_MAX_US, while there is
 * none, so that on a machine with few cores it leaves them to the
 * program.  While the program polls its CQs itself (each poll runs
 * the datapath) the thread only sleeps: two pollers of one port would
 * take turns at its lock, and on a machine with fewer cores than busy
 * threads the one preempted holding it stalls the other (UCX's
 * latency tests: 250 us a round trip instead of 2). */
#define IDLE_SPIN	64
#define IDLE_MAX_US	200
#define APP_ACTIVE_US	20
/* While the program keeps polling, the thread looks again after
 * APP_ACTIVE_US, then twice as long each time it finds the program still
 * polling, up to ASIDE_MAX_US: each look is a wake-up and, on a machine
 * with fewer cores than busy threads, a preemption of a polling thread
 * (on this 2-core VM, with the default timer slack, a sleep of 20 us
 * woke after 60-80, and each wake cost the program 10-20 us).  64 B between two devices, alternated,
 * medians of 3 runs of 1-3 M operations: ib_write_bw 5.19 -> 6.23 Mpps,
 * ib_send_bw 3.50 -> 5.14, ib_read_bw 2.53 -> 3.20, ib_atomic_bw 2.57 ->
 * 3.22; ib_write_lat, ib_send_lat, ib_read_lat unchanged.  A program that
 * stops polling without a word (ib_write_lat's spin on memory) is served
 * after ASIDE_MAX_US at most, once.  One that arms a CQ or waits for a
 * completion event (mwp_ibv_app_waits) ends the long wait and the thread
 * starts over at APP_ACTIVE_US, as before: event programs are served as
 * they were (ib_send_bw -e 0.50 Mpps, ib_send_lat -e 135 us).  Taking
 * over at once when the program waits for an event was tried: -e
 * latency 10-104 us, but ib_send_bw -e 0.42 Mpps; not kept. */
#define ASIDE_MAX_US	1000
/* A program that has not polled for APP_PASSIVE_MS leaves the datapath to
 * the thread alone (ib_write_bw's server waits in its TCP socket): then,
 * after work, the thread polls on for WORK_SPIN_US before it sleeps, for
 * the next burst comes within a round trip, and a sleep (stretched by the
 * kernel's default timer slack to 60 us or more) stalled the sender's
 * window.
 * ib_write_bw 64 B between two devices here: 0.60 -> 1.23 Mpps (medians
 * of 6).  A program that polls keeps the thread from spinning: on a
 * machine with fewer cores than busy threads, a spinning thread takes the
 * core its own program needs (ib_send_bw fell 10-40% when it did). */
#define APP_PASSIVE_MS	10
#define WORK_SPIN_US	100
/* The thread's timer slack: its sleeps end within 1 us of when they are
 * asked to, not the kernel's default 50 us later.  A program that
 * stops polling without a word (ib_write_lat, spinning on memory) is
 * served at the first look that finds it gone, APP_ACTIVE_US after its
 * last poll; with the default slack that look came 60-80 us later.  64 B
 * between two devices here, alternated: ib_write_lat 43 -> 19 us
 * (median), ib_send_lat -e 130-137 -> 69-99 us, ib_send_bw -e 0.44-0.49
 * -> 0.49-0.64 Mpps; ib_write_bw, ib_send_bw, ib_read_bw, ib_send_lat
 * and ib_read_lat unchanged.  (Before the engine was parked between
 * turns and the poll lock was a flag, a 1 us slack made ib_write_lat
 * worse, 85-245 us.)  A first look sooner than APP_ACTIVE_US was tried:
 * 10 us gave 13-15 us, but one run in four 121 us; not kept. */
#define PROGRESS_SLACK_NS 1000

/* The program polled within `active' ticks. */
static bool
app_polls(const struct mwp_ibv_dev *d, uint64_t active)
{
	return rte_rdtsc() - __atomic_load_n(&d->app_poll_tsc, __ATOMIC_SEQ_CST) < active;
}

/* Stand aside for us microseconds while the program polls: a plain sleep
 * for the first look, then a wait that mwp_ibv_app_waits ends.  true:
 * the program said it waits (since the last time this said so). */
static bool
stand_aside(struct mwp_ibv_dev *d, unsigned int us, uint64_t active, uint32_t *last_kick)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000L };
	uint32_t k;

	if (us <= APP_ACTIVE_US) {
		usleep(us);
		return false;
	}
	__atomic_store_n(&d->aside_long, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&d->asides_long, d->asides_long + 1, __ATOMIC_RELAXED);
	k = __atomic_load_n(&d->aside_kick, __ATOMIC_SEQ_CST);
	if (k == *last_kick && app_polls(d, active))
		syscall(SYS_futex, &d->aside_kick, FUTEX_WAIT_PRIVATE, k, &ts, NULL, 0);
	__atomic_store_n(&d->aside_long, 0, __ATOMIC_RELAXED);
	k = __atomic_load_n(&d->aside_kick, __ATOMIC_RELAXED);
	if (k == *last_kick)
		return false;
	*last_kick = k;
	__atomic_store_n(&d->asides_ended, d->asides_ended + 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * A device thread that runs the datapath takes an lcore id of its own
 * (rte_thread_register), so that the mbufs it allocates and frees, and
 * those its PMD allocates and frees on its behalf, go through a per-lcore
 * mempool cache.  Without one (a thread the EAL does not know has
 * LCORE_ID_ANY) every mbuf came from the pool's ring and went back to it,
 * in ring order: each one cold, cycling through the whole pool.  ib_read_bw
 * of 64 KiB between two devices (MTU 4096), whose READ responses the
 * passive side's progress thread sends, alternated: 0.091, 0.086, 0.093
 * -> 0.189, 0.182, 0.141 M ops/s; the pool's ring had been 12% of that
 * thread's time.
 */
static void
thread_lcore_enter(const struct mwp_ibv_dev *d, const char *what)
{
	if (rte_thread_register() != 0)
		fprintf(stderr, "mwpath-ibverbs: %s: the %s thread has no lcore id of its own (%s): its mbufs skip the mempool's cache\n",
			d->dev.name, what, rte_strerror(rte_errno));
}

/* The thread's cached mbufs back to the device's pool: before it parks
 * for a fork (the child's threads take lcore ids of their own, and what
 * this one's cache held would be stranded there) and before it ends. */
static void
thread_lcore_flush(const struct mwp_ibv_dev *d)
{
	struct rte_mempool_cache *c;

	if (rte_lcore_id() == LCORE_ID_ANY || d->mp == NULL)
		return;
	c = rte_mempool_default_cache(d->mp, rte_lcore_id());
	if (c != NULL)
		rte_mempool_cache_flush(c, d->mp);
}

static void
thread_lcore_leave(const struct mwp_ibv_dev *d)
{
	thread_lcore_flush(d);
	if (rte_lcore_id() != LCORE_ID_ANY)
		rte_thread_unregister();
}

/* A device thread at the top of its loop, holding nothing: while the
 * device is to park (a fork), it says so and waits.  true: it parked. */
static bool
park_here(struct mwp_ibv_dev *d, bool *parked, const bool *stop)
{
	if (!__atomic_load_n(&d->park, __ATOMIC_ACQUIRE))
		return false;
	thread_lcore_flush(d);
	__atomic_store_n(parked, true, __ATOMIC_RELEASE);
	while (__atomic_load_n(&d->park, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(stop, __ATOMIC_RELAXED))
		usleep(1000);
	__atomic_store_n(parked, false, __ATOMIC_RELEASE);
	return true;
}

static void *
progress_thread(void *arg)
{
	struct mwp_ibv_dev *d = arg;
	const uint64_t active = rte_get_tsc_hz() / 1000000 * APP_ACTIVE_US;
	const uint64_t work_spin = rte_get_tsc_hz() / 1000000 * WORK_SPIN_US;
	const uint64_t passive = rte_get_tsc_hz() / 1000 * APP_PASSIVE_MS;
	unsigned int idle = 0, sleep_us = 1, aside_us = APP_ACTIVE_US;
	uint32_t last_kick = 0;
	uint64_t last_work = 0;

	if (prctl(PR_SET_TIMERSLACK, PROGRESS_SLACK_NS) != 0)
		fprintf(stderr, "mwpath-ibverbs: %s: the progress thread keeps the default timer slack: %s\n",
			d->dev.name, strerror(errno));
	thread_lcore_enter(d, "progress");
	while (!__atomic_load_n(&d->stop, __ATOMIC_RELAXED)) {
		if (park_here(d, &d->progress_parked, &d->stop))
			continue;
		if (app_polls(d, active)) {
			if (stand_aside(d, aside_us, active, &last_kick))
				aside_us = APP_ACTIVE_US;
			else
				aside_us = RTE_MIN(aside_us * 2, (unsigned int)ASIDE_MAX_US);
			continue;
		}
		aside_us = APP_ACTIVE_US;
		if (mwp_ibv_progress(d) != 0) {
			idle = 0;
			sleep_us = 1;
			last_work = rte_rdtsc();
		} else if (++idle > IDLE_SPIN &&
			   (rte_rdtsc() - last_work > work_spin ||
			    rte_rdtsc() - __atomic_load_n(&d->app_poll_tsc,
							  __ATOMIC_RELAXED) < passive)) {
			usleep(sleep_us);
			sleep_us = RTE_MIN(sleep_us * 2, (unsigned int)IDLE_MAX_US);
		}
	}
	thread_lcore_leave(d);
	return NULL;
}

/* The CM's thread: QP1's MADs and the CM's timers, and its events to the
 * programs' RDMA CM channels.  With progress = calls it runs the
 * datapath too, every CM_TICK_US: a program waiting in rdma_get_cm_event
 * makes no verbs calls, and the peer's REQ must still be taken.  So it
 * does while an address is being resolved (the neighbour table is asked
 * again each tick), until a memif link is warm, and while connections
 * come and go (a pass that had events: the MADs of many connections
 * are taken a tick's worth at a time).  Otherwise it sleeps until the
 * CM's next timer, CM_IDLE_MS at most, and whatever gives the CM work
 * wakes it (mwp_cm_set_wake: a MAD or a send completing on QP1, a timer
 * set sooner; rdma_resolve_addr; a stop or a fork).  On a machine with
 * fewer cores than busy threads each wake preempts one: at a 500 us
 * tick two devices' CM threads woke 3700 times a second, and
 * ib_write_bw 64 B between them went at 4.27 Mpps against 5.69 with
 * the threads asleep (medians of 4, alternated).  Now they wake about
 * 20 times a second, and one connection (cmtime) takes 0.7 ms, not 1.0:
 * the REQ, REP and RTU are taken as they come. */
#define CM_TICK_US	500
#define CM_IDLE_MS	100

/* How long the CM thread may sleep now (us; 0: not at all).  Arms the
 * CM's wake first. */
static unsigned int
cm_sleep_us(struct mwp_ibv_dev *d, uint64_t now)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t until;

	if (d->conf.progress == APP_PROGRESS_CALLS || (d->memif && !d->memif_warm) ||
	    mwp_rdmacm_resolving())
		return CM_TICK_US;
	if (d->cm == NULL)
		return CM_IDLE_MS * 1000;	/* memif's link, looked at */
	until = mwp_cm_idle_until(d->cm, now);
	if (until == 0)
		return 0;
	if (until - now >= hz / 1000 * CM_IDLE_MS)
		return CM_IDLE_MS * 1000;
	return (unsigned int)RTE_MAX((until - now) * 1000000 / hz, (uint64_t)1);
}

static bool link_up(uint16_t pid);

/* memif's regions are mapped when its link comes up (again): fault them
 * in then, before the datapath takes a page fault a page (mwp_warm.c) */
static void
warm_memif(struct mwp_ibv_dev *d)
{
	const bool up = link_up(d->conf.port);

	if (up && !d->memif_warm)
		mwp_warm_memif();
	d->memif_warm = up;
}

static void *
cm_thread(void *arg)
{
	struct mwp_ibv_dev *d = arg;

	on_cm_thread = true;
	thread_lcore_enter(d, "CM");
	if (d->cm != NULL)
		mwp_cm_set_wake(d->cm, cm_thread_wake, d);
	while (!__atomic_load_n(&d->cm_stop, __ATOMIC_RELAXED)) {
		uint32_t seen;
		unsigned int us;
		uint64_t now;
		bool busy;

		if (park_here(d, &d->cm_parked, &d->cm_stop))
			continue;
		now = rte_rdtsc();

		/* (a memif port without a CM has this thread for the warming
		 * alone: its datapath stays the program's calls') */
		if (d->conf.progress == APP_PROGRESS_CALLS && d->cm != NULL)
			mwp_ibv_progress(d);
		if (d->memif)
			warm_memif(d);
		busy = d->cm != NULL && mwp_cm_progress(d->cm, now) != 0;
		if (busy)
			mwp_rdmacm_events(d);
		mwp_rdmacm_tick(d, now);
		/* the kicks counted before the CM is armed: one after it ends
		 * the wait at once */
		seen = __atomic_load_n(&d->cm_kick, __ATOMIC_SEQ_CST);
		us = busy ? CM_TICK_US : cm_sleep_us(d, rte_rdtsc());
		if (us != 0 && !__atomic_load_n(&d->cm_stop, __ATOMIC_SEQ_CST) &&
		    !__atomic_load_n(&d->park, __ATOMIC_SEQ_CST)) {
			struct timespec ts = { .tv_sec = us / 1000000,
					       .tv_nsec = us % 1000000 * 1000L };

			syscall(SYS_futex, &d->cm_kick, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
		}
	}
	thread_lcore_leave(d);
	return NULL;
}

void
mwp_ibv_pause(struct mwp_ibv_dev *d)
{
	poll_lock(d);
	if (d->conf.progress == APP_PROGRESS_LCORE) {
		__atomic_store_n(&d->stop, true, __ATOMIC_RELAXED);
		rte_eal_wait_lcore(d->lcore);
	}
}

void
mwp_ibv_resume(struct mwp_ibv_dev *d)
{
	if (d->conf.progress == APP_PROGRESS_LCORE) {
		__atomic_store_n(&d->stop, false, __ATOMIC_RELAXED);
		if (rte_eal_remote_launch(mwp_lcore_main, &d->lc, d->lcore) != 0)
			fprintf(stderr, "mwpath-ibverbs: %s: lcore %u did not start again\n",
				d->dev.name, d->lcore);
	}
	poll_unlock(d);
}

/* Start the device's DPDK port.  A memif client whose server is not up yet
 * -- as when a program opens the device right after its own TCP exchange
 * while the other side's has not -- fails to start: it is tried again
 * every PEER_RETRY_MS for up to peer_wait_ms.  One that connected while
 * its server was still setting its port up has its handshake refused
 * and never tries again on its own: a memif client whose link is not up
 * LINK_WAIT_MS after it started is started again, within the same wait.
 * Any other port gets one try. */
#define PEER_RETRY_MS	50
#define LINK_WAIT_MS	500

static bool
link_up(uint16_t pid)
{
	struct rte_eth_link l;

	return rte_eth_link_get_nowait(pid, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

/* Is the port a memif client (role=client, memif's default)?  A server's
 * link waits for its client: nothing to start again. */
static bool
memif_client(uint16_t pid, struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da;

	if (rte_eth_dev_info_get(pid, info) != 0 || strcmp(info->driver_name, "net_memif") != 0)
		return false;
	da = rte_dev_devargs(info->device);
	return da == NULL || da->args == NULL || strstr(da->args, "role=server") == NULL;
}

static int
start_port(struct mwp_ibv_dev *d)
{
	const uint16_t pid = d->conf.port;
	const uint64_t ms = rte_get_tsc_hz() / 1000, start = rte_rdtsc();
	const uint64_t deadline = start + d->conf.peer_wait_ms * ms;
	const uint32_t level = rte_log_get_global_level();
	struct rte_eth_dev_info info;
	const uint32_t ip_mtu = d->pc.mtu + MWP_IP_OVERHEAD;
	bool client;
	int ret;

	client = memif_client(pid, &info);
	if (!client)
		return mwp_ethdev_start(pid, 1, d->mp, &d->pc.mac, ip_mtu);
	/* quietly while it waits (the driver says why at each try); the
	 * last try, after the wait, says why it failed */
	rte_log_set_global_level(RTE_LOG_CRIT);
	for (;;) {
		ret = mwp_ethdev_start(pid, 1, d->mp, &d->pc.mac, ip_mtu);
		if (ret == 0) {
			const uint64_t t = rte_rdtsc();

			while (!link_up(pid) && rte_rdtsc() - t < LINK_WAIT_MS * ms &&
			       rte_rdtsc() < deadline)
				rte_delay_us_sleep(1000);
			if (!link_up(pid) && rte_rdtsc() < deadline) {
				rte_eth_dev_stop(pid);
				continue;
			}
		}
		if (ret == 0 || rte_rdtsc() >= deadline)
			break;
		rte_delay_us_sleep(PEER_RETRY_MS * 1000);
	}
	rte_log_set_global_level(level);
	if (ret != 0)
		ret = mwp_ethdev_start(pid, 1, d->mp, &d->pc.mac, ip_mtu);
	return ret;
}

/*
 * fork: a device whose port keeps the host's addresses (an exception
 * path) and whose datapath runs on its progress thread moves to the child
 * -- a server that forks for each client (qperf) serves it from the child
 * at the address the parent was reached at.  Before the fork its threads
 * park where they hold nothing and the program's polls are shut out;
 * the child, which inherits the memory but no thread, starts its own;
 * the parent's stay parked and its polls do nothing from then on: the
 * port's rings and the tap's queues are the child's (two processes
 * taking frames from one ring lose them).  Other devices are left as
 * they were: a child that uses them is not supported.
 */
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void
at_fork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static bool
hands_over(const struct mwp_ibv_dev *d)
{
	return d->ctx != NULL && mwp_host_on(&d->host) &&
	       d->conf.progress == APP_PROGRESS_THREAD &&
	       !__atomic_load_n(&d->moved, __ATOMIC_RELAXED);
}

/* share = on: parent and child both drive it (share_child) */
static bool
shared(const struct mwp_ibv_dev *d)
{
	return d->ctx != NULL && d->share != NULL && d->failed == 0;
}

/* A child with a shared device says through it that it has its copy of
 * the EAL's memory (mwp_ibv_share_privatize): until then the parent's
 * threads stay parked, so that the copy is of memory at rest. */
static int share_pipe[2] = { -1, -1 };
#define SHARE_COPY_MS	10000

static void
fork_prepare(void)
{
	for (unsigned int i = 0; i < nb_devs; i++)
		if (shared(&devs[i]) && share_pipe[0] < 0 && pipe2(share_pipe, O_CLOEXEC) != 0)
			share_pipe[0] = share_pipe[1] = -1;
	for (unsigned int i = 0; i < nb_devs; i++) {
		struct mwp_ibv_dev *d = &devs[i];

		if (!hands_over(d) && !shared(d))
			continue;
		/* the tap's reader first: none of its rings or mbufs may be
		 * copied mid-change */
		mwp_host_pause(&d->host);
		__atomic_store_n(&d->park, true, __ATOMIC_SEQ_CST);
		kick_threads(d);
		for (unsigned int ms = 0; ms < 2000; ms++) {
			if ((!d->has_thread || __atomic_load_n(&d->progress_parked, __ATOMIC_ACQUIRE)) &&
			    (!d->has_cm_thread || __atomic_load_n(&d->cm_parked, __ATOMIC_ACQUIRE)))
				break;
			usleep(1000);
		}
		poll_lock(d);
	}
}

static void
fork_parent(void)
{
	if (share_pipe[0] >= 0) {
		struct pollfd p = { .fd = share_pipe[0], .events = POLLIN };
		char c;

		close(share_pipe[1]);
		if (poll(&p, 1, SHARE_COPY_MS) != 1 || read(share_pipe[0], &c, 1) != 1)
			fprintf(stderr, "mwpath-ibverbs: a forked child did not say it had its copy of the device's memory in %d ms\n",
				SHARE_COPY_MS);
		close(share_pipe[0]);
		share_pipe[0] = share_pipe[1] = -1;
	}
	for (unsigned int i = 0; i < nb_devs; i++) {
		struct mwp_ibv_dev *d = &devs[i];

		if (shared(d)) {
			/* ours still: the threads go on */
			__atomic_store_n(&d->park, false, __ATOMIC_RELEASE);
			poll_unlock(d);
			continue;
		}
		if (!hands_over(d))
			continue;
		__atomic_store_n(&d->moved, true, __ATOMIC_RELEASE);
		poll_unlock(d);
	}
}

/*
 * share = on, in a forked child: a port of its own on the same interface (a
 * second net_af_packet vdev with the first one's arguments: a packet
 * socket of its own, as each process of a kernel RDMA device has its
 * own file), its part of the QP numbers and of the CM's IDs, and random
 * numbers of its own.  The parent's port stays the parent's: this
 * process never polls it.  What the parent made before the fork (QPs
 * other than QP1, CM ids) would answer in both: a device with any is
 * not the child's.  0 or -errno.
 */
static int
share_child(struct mwp_ibv_dev *d)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	char name[RTE_ETH_NAME_MAX_LEN], args[RTE_DEV_NAME_MAX_LEN + 512];
	uint64_t seed;
	uint32_t lo, hi;
	uint16_t pid;
	int ret;

	if (mwp_device_qp_count(d->ctx) != d->share_qps) {
		fprintf(stderr, "mwpath-ibverbs: %s: the parent had QPs when it forked: the device is not this child's (share = on)\n",
			d->dev.name);
		return -EBUSY;
	}
	if (getrandom(&seed, sizeof(seed), 0) == sizeof(seed))
		rte_srand(seed);
	ret = mwp_ibv_share_join(d);
	if (ret != 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: %u processes share the device already (share = on)\n",
			d->dev.name, MWP_IBV_SHARE_PARTS);
		return ret;
	}
	if (d->cm != NULL && mwp_ibv_share_cm(d) != 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: the parent had RDMA CM ids when it forked: the device is not this child's (share = on)\n",
			d->dev.name);
		return -EBUSY;
	}
	if (rte_eth_dev_info_get(d->conf.port, &info) != 0 ||
	    (da = rte_dev_devargs(info.device)) == NULL)
		return -ENODEV;
	/* (EAL's hotplug, which finds the vdev bus by the name: linking
	 * the bus's library as well gave a second copy of it where its
	 * files are copies, not links -- the interop guest's) */
	snprintf(name, sizeof(name), "net_af_packet_mwp%d_%u", (int)getpid(), d->index);
	snprintf(args, sizeof(args), "%s,%s", name, da->args);
	ret = rte_dev_probe(args);
	if (ret == 0)
		ret = rte_eth_dev_get_port_by_name(name, &pid);
	if (ret == 0)
		ret = mwp_ethdev_start(pid, 1, d->mp, &d->pc.mac, d->pc.mtu + MWP_IP_OVERHEAD);
	if (ret != 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: the child's own port (%s,%s): %s\n",
			d->dev.name, name, da->args, strerror(-ret));
		return ret;
	}
	d->conf.port = pid;
	d->lc.q[0].port_id = pid;
	mwp_ibv_share_qpns(d->share_part, &lo, &hi);
	d->lc.q[0].own_qpn_lo = lo;
	d->lc.q[0].own_qpn_hi = hi;
	return mwp_device_set_qpn_range(d->ctx, lo, hi) == 0 ? 0 : -EINVAL;
}

static void
fork_child(void)
{
	int copied = 0;

	if (share_pipe[0] >= 0) {
		copied = mwp_ibv_share_privatize();
		if (copied != 0)
			fprintf(stderr, "mwpath-ibverbs: a forked child's copy of the device's memory: %s\n",
				strerror(-copied));
		if (write(share_pipe[1], "", 1) != 1)
			copied = copied != 0 ? copied : -EPIPE;
		close(share_pipe[0]);
		close(share_pipe[1]);
		share_pipe[0] = share_pipe[1] = -1;
	}
	for (unsigned int i = 0; i < nb_devs; i++) {
		struct mwp_ibv_dev *d = &devs[i];

		if (shared(d)) {
			int ret = copied != 0 ? copied : share_child(d);

			__atomic_store_n(&d->poll, 0, __ATOMIC_RELAXED);
			d->park = d->progress_parked = d->cm_parked = false;
			if (ret != 0) {
				/* nothing of it runs here; opens fail */
				d->failed = -ret;
				d->has_thread = d->has_cm_thread = false;
				d->share_part = -1;
				__atomic_store_n(&d->moved, true, __ATOMIC_RELEASE);
				continue;
			}
			if (d->has_thread)
				d->has_thread = pthread_create(&d->thread, NULL, progress_thread, d) == 0;
			if (d->has_cm_thread)
				d->has_cm_thread = pthread_create(&d->cm_thread, NULL, cm_thread, d) == 0;
			continue;
		}
		if (!hands_over(d))
			continue;
		__atomic_store_n(&d->poll, 0, __ATOMIC_RELAXED);
		d->park = d->progress_parked = d->cm_parked = false;
		mwp_host_resume(&d->host);
		if (d->has_thread)
			d->has_thread = pthread_create(&d->thread, NULL, progress_thread, d) == 0;
		if (d->has_cm_thread)
			d->has_cm_thread = pthread_create(&d->cm_thread, NULL, cm_thread, d) == 0;
	}
}

/* share = on, in the process that starts the device, before anything
 * of it is made: the port must be
 * a kernel interface's packet socket that lets the other processes' see
 * what it sends (net_af_packet with qdisc_bypass=0: a socket that skips
 * the queueing layer skips the other sockets too), and its datapath the
 * program's threads' (an lcore of the EAL does not survive a fork). */
static int
share_check(struct mwp_ibv_dev *d)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;

	if (rte_eth_dev_info_get(d->conf.port, &info) != 0 ||
	    strcmp(info.driver_name, "net_af_packet") != 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: share = on needs a net_af_packet port (a kernel interface each process opens again)\n",
			d->dev.name);
		return -EINVAL;
	}
	da = rte_dev_devargs(info.device);
	if (da != NULL && da->args != NULL && strstr(da->args, "iface=") != NULL) {
		const char *v = strstr(da->args, "iface=") + strlen("iface=");

		snprintf(d->share_if, sizeof(d->share_if), "%.*s", (int)strcspn(v, ","), v);
	}
	if (da == NULL || da->args == NULL || strstr(da->args, "qdisc_bypass=0") == NULL) {
		fprintf(stderr, "mwpath-ibverbs: %s: share = on needs qdisc_bypass=0 in the net_af_packet vdev's arguments (the other processes' sockets see nothing it sends without)\n",
			d->dev.name);
		return -EINVAL;
	}
	if (d->conf.progress == APP_PROGRESS_LCORE || d->hc.on) {
		fprintf(stderr, "mwpath-ibverbs: %s: share = on takes neither progress = lcore nor an exception path\n",
			d->dev.name);
		return -EINVAL;
	}
	return 0;
}

/* ... and its part (0), once its CM exists. */
static int
share_start(struct mwp_ibv_dev *d)
{
	uint32_t lo, hi;
	int ret;

	ret = mwp_ibv_share_create(d, d->share_if);
	if (ret != 0)
		return ret;
	if (d->share_part < 0)
		return -ENOSPC;
	mwp_ibv_share_qpns(d->share_part, &lo, &hi);
	d->lc.q[0].own_qpn_lo = lo;
	d->lc.q[0].own_qpn_hi = hi;
	if (mwp_device_set_qpn_range(d->ctx, lo, hi) != 0 ||
	    (d->cm != NULL && mwp_ibv_share_cm(d) != 0))
		return -EINVAL;
	d->share_qps = mwp_device_qp_count(d->ctx);
	return 0;
}

/* The port, the engine that polls it and the library's device. */
static int
start_device(struct mwp_ibv_dev *d)
{
	const uint16_t pid = d->conf.port;
	struct mwp_device_attr attr = {
		.max_keys = d->conf.max_keys, .socket = SOCKET_ID_ANY,
		.flags = d->sequential_keys ? MWP_DEVICE_F_SEQUENTIAL : 0,
	};
	char name[RTE_MEMPOOL_NAMESIZE];
	int ret;

	if (pid >= rte_eth_dev_count_avail()) {
		fprintf(stderr, "mwpath-ibverbs: %s: DPDK port %u does not exist (%u ports: add one with --vdev or -a in [device %u] eal)\n",
			d->dev.name, pid, rte_eth_dev_count_avail(), d->index);
		return -ENODEV;
	}
	if (rte_is_zero_ether_addr(&d->pc.mac)) {
		rte_eth_macaddr_get(pid, &d->pc.mac);
		d->guid = guid_of(&d->pc.mac);
	}
	if (d->conf.share) {
		ret = share_check(d);
		if (ret != 0)
			return ret;
	}
	if (mwp_xdp_port(pid)) {
		char err[256];

		if (d->hc.on) {
			fprintf(stderr, "mwpath-ibverbs: %s: [port %u] exception = tap is for a port the kernel has not got; on net_af_xdp the interface stays the kernel's\n",
				d->dev.name, pid);
			return -EINVAL;
		}
		ret = mwp_xdp_port_conf(pid, &d->pc, err, sizeof(err));
		if (ret != 0) {
			fprintf(stderr, "mwpath-ibverbs: %s: [port %u] %s\n", d->dev.name, pid, err);
			return ret;
		}
	}
	snprintf(name, sizeof(name), "mwp_ibv%u", d->index);
	/* net_af_xdp makes its umem of the pool: objects back to back */
	d->mp = d->pc.kernel_neigh ?
		mwp_xdp_pool_create(name, NB_MBUFS, MBUF_CACHE, mwp_port_mbuf_room(d->pc.mtu),
				    rte_eth_dev_socket_id(pid)) :
		rte_pktmbuf_pool_create(name, NB_MBUFS, MBUF_CACHE, 0,
					mwp_port_mbuf_room(d->pc.mtu), rte_eth_dev_socket_id(pid));
	mwp_warm_mempool(d->mp);
	d->pc.nb_queues = 1;
	d->port = d->mp != NULL ? mwp_port_create(&d->pc, pid, rte_eth_dev_socket_id(pid)) :
				  NULL;
	if (d->port == NULL) {
		fprintf(stderr, "mwpath-ibverbs: %s: %s\n", d->dev.name, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	mwp_port_set_mempool(d->port, d->mp);
	ret = start_port(d);
	if (ret != 0) {
		fprintf(stderr, "mwpath-ibverbs: %s: DPDK port %u did not start (a memif client tries for [device %u] peer_wait_ms, %u ms)\n",
			d->dev.name, pid, d->index, d->conf.peer_wait_ms);
		return ret;
	}
	if (d->pc.kernel_neigh) {
		char err[256];

		ret = mwp_xdp_start(&d->xdp, pid, d->port, err, sizeof(err));
		if (ret != 0) {
			fprintf(stderr, "mwpath-ibverbs: %s: port %u (net_af_xdp): %s\n",
				d->dev.name, pid, err);
			return ret;
		}
	}
	if (d->hc.on) {
		char err[256];

		/* the kernel's frames move only while the port is polled */
		if (d->conf.progress == APP_PROGRESS_CALLS) {
			fprintf(stderr, "mwpath-ibverbs: %s: [port %u] exception = tap needs progress = thread or lcore (with calls, the host's TCP waits until the program polls a CQ)\n",
				d->dev.name, pid);
			return -EINVAL;
		}
		ret = mwp_host_start(&d->host, &d->hc, &d->pc, d->index, 1, d->mp, err,
				     sizeof(err));
		if (ret != 0) {
			fprintf(stderr, "mwpath-ibverbs: %s: [port %u] exception: %s\n",
				d->dev.name, pid, err);
			return ret;
		}
	}
	d->ctx = mwp_open_device(&attr);
	if (d->ctx == NULL)
		return -errno;
	/* progress = lcore: the first worker lcore of the EAL arguments
	 * polls, and is the reader; otherwise whoever polls is reader
	 * MWP_IBV_READER, online only while polling */
	if (d->conf.progress == APP_PROGRESS_LCORE) {
		d->lcore = rte_get_next_lcore(-1, 1, 0);
		if (d->lcore >= RTE_MAX_LCORE) {
			fprintf(stderr, "mwpath-ibverbs: %s: progress = lcore needs a worker lcore (give eal = ... -l 0,1)\n",
				d->dev.name);
			return -EINVAL;
		}
	}
	d->lc.lcore_id = d->conf.progress == APP_PROGRESS_LCORE ? d->lcore : MWP_IBV_READER;
	d->lc.nb_queues = 1;
	d->lc.q[0].port_id = pid;
	d->lc.q[0].queue_id = 0;
	d->lc.q[0].port = d->port;
	d->lc.q[0].host = mwp_host_on(&d->host) ? &d->host : NULL;
	d->lc.stop = &d->stop;
	ret = mwp_lcore_init(&d->lc, rte_eth_dev_socket_id(pid));
	if (ret != 0)
		return ret;
	if (d->conf.progress == APP_PROGRESS_LCORE) {
		ret = rte_eal_remote_launch(mwp_lcore_main, &d->lc, d->lcore);
		if (ret != 0)
			return ret;
	} else {
		ret = mwp_reader_register(d->ctx, MWP_IBV_READER);
		if (ret != 0)
			return -ret;
		mwp_reader_offline(d->ctx, MWP_IBV_READER);
	}
	/* QP1: the port answers the CM from now on (docs/cm.md) */
	if (d->cm_on) {
		d->cm = mwp_cm_create(d->ctx, d->port, NULL);
		if (d->cm == NULL)
			fprintf(stderr, "mwpath-ibverbs: %s: no connection manager: %s\n",
				d->dev.name, strerror(errno));
	}
	d->memif = is_memif(pid);
	if ((d->cm != NULL || d->memif) &&
	    pthread_create(&d->cm_thread, NULL, cm_thread, d) == 0) {
		pthread_setname_np(d->cm_thread, "mwpath-cm");
		d->has_cm_thread = true;
	}
	if (d->conf.share) {
		ret = share_start(d);
		if (ret != 0)
			return ret;
	}
	if (d->conf.progress == APP_PROGRESS_THREAD) {
		ret = pthread_create(&d->thread, NULL, progress_thread, d);
		if (ret != 0)
			return -ret;
		pthread_setname_np(d->thread, "mwpath-progress");
		d->has_thread = true;
	}
	if (mwp_host_on(&d->host) || d->share != NULL) {
		static pthread_once_t once = PTHREAD_ONCE_INIT;

		pthread_once(&once, at_fork);
	}
	/* what the program sees: its device, one completion vector, and the
	 * descriptor its asynchronous events come through */
	d->ctx->device = &d->dev;
	d->ctx->num_comp_vectors = 1;
	d->ctx->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	/* the command descriptor a kernel device has: here a file of its
	 * own, which a program may dup and which ibv_import_device knows
	 * (mwp_ibv_fd_dev) */
	d->ctx->cmd_fd = memfd_create("mwpath-cmd", MFD_CLOEXEC);
	pthread_mutex_init(&d->async_lock, NULL);
	mwp_device_set_async(d->ctx, mwp_ibv_async, d);
	return 0;
}

struct ibv_context *
mwp_ibv_open(struct mwp_ibv_dev *d)
{
	struct ibv_context *ctx = NULL;
	int ret = 0;

	pthread_mutex_lock(&eal_lock);
	if (!eal_up) {
		ret = start_eal(d);
		if (ret == 0) {
			eal_up = true;
			atexit(stop_ports);
			if (getenv("MWPATH_STATS") != NULL) {
				struct sigaction sa = { .sa_handler = abort_stats };

				sigemptyset(&sa.sa_mask);
				sigaction(SIGABRT, &sa, &prev_abrt);
			}
		}
	}
	pthread_mutex_unlock(&eal_lock);
	if (ret != 0) {
		errno = -ret;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	if (d->ctx == NULL && d->failed == 0) {
		ret = start_device(d);
		if (ret != 0) {
			/* what was made stays (DPDK cannot take a port apart and
			 * start it again in one process): later opens fail alike */
			d->ctx = NULL;
			d->failed = -ret;
		}
	}
	if (d->failed != 0) {
		pthread_mutex_unlock(&d->lock);
		errno = d->failed;
		return NULL;
	}
	d->refs++;
	ctx = d->ctx;
	pthread_mutex_unlock(&d->lock);
	return ctx;
}

int
mwp_ibv_close(struct mwp_ibv_dev *d)
{
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	if (d->refs == 0)
		ret = EINVAL;
	else
		d->refs--;
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/*
 * Devices with start = load (the default where the port's host keeps its
 * addresses: an exception path) start with the program, so that the
 * port's addresses exist before it opens a device -- a server that waits
 * on TCP first (qperf) is reached at them.  A process the program starts
 * with the same environment leaves them to the one that started them
 * (MWPATH_STARTED_BY, while that process lives): two processes cannot
 * drive one port.
 */
static void __attribute__((constructor))
start_at_load(void)
{
	const char *by = getenv("MWPATH_STARTED_BY");
	struct mwp_ibv_dev *all;
	bool started = false;
	unsigned int n;

	if (getenv("MWPATH_CONFIG") == NULL)
		return;
	if (by != NULL && atoi(by) > 0 && atoi(by) != getpid() && kill(atoi(by), 0) == 0)
		return;
	n = mwp_ibv_devices(&all);
	for (unsigned int i = 0; i < n; i++) {
		if (all[i].conf.start != APP_START_LOAD)
			continue;
		if (mwp_ibv_open(&all[i]) != NULL) {
			mwp_ibv_close(&all[i]);
			started = true;
		}
	}
	if (started) {
		char pid[24];

		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		setenv("MWPATH_STARTED_BY", pid, 1);
	}
}
