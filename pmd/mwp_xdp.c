/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port on net_af_xdp (mwp_pmd.h, docs/host.md "AF_XDP"): the interface
 * stays the kernel's, and mwpath's XDP program (pmd/xdp/mwp_xdp.bpf.c)
 * sends it only RoCEv2 for the port's addresses.  Here: the program given
 * to every net_af_xdp vdev that names none, the port's addresses put in
 * its map once the PMD has loaded it, the check that the kernel holds
 * them, and a thread that resolves the port's neighbours through the
 * kernel -- ARP and ND are the kernel's, so a probe becomes a netlink
 * request (NTF_USE: "resolve this") and the kernel's neighbour events
 * come back into the port's table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef MWP_HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "mwp_log.h"
#include "mwp_pmd.h"

#define XDP_DRIVER "net_af_xdp"
/* a frame, the PMD's headroom and the kernel's fit one page (a umem
 * chunk is at most a page) */
#define MWP_XDP_MAX_MTU 2048
#define ADDRS_MAP "mwp_addrs"
#define STATS_MAP "mwp_stats"
/* how often the thread looks for probes when the kernel is quiet */
#define ASK_POLL_MS 2

static int take_off_stale(int ifindex, const char *ifname, char *err, size_t errlen);

const char *
mwp_xdp_prog(void)
{
	const char *env = getenv("MWPATH_XDP_PROG");

	if (env != NULL && env[0] != '\0')
		return env;
	if (access(MWP_XDP_BUILD_PATH, R_OK) == 0)
		return MWP_XDP_BUILD_PATH;
	return MWP_XDP_INSTALL_PATH;
}

/* Is arg (what follows --vdev) a net_af_xdp device without xdp_prog=? */
static bool
wants_prog(const char *arg)
{
	return strncmp(arg, XDP_DRIVER, strlen(XDP_DRIVER)) == 0 &&
	       strstr(arg, "xdp_prog=") == NULL;
}

static char *
with_prog(const char *prefix, const char *arg)
{
	char *s;

	if (asprintf(&s, "%s%s,xdp_prog=%s", prefix, arg, mwp_xdp_prog()) < 0)
		return NULL;
	return s;
}

/* The interface of a net_af_xdp vdev's arguments (iface=...), or "". */
static void
vdev_iface(const char *arg, char *ifname, size_t len)
{
	const char *p = strstr(arg, ",iface=");
	size_t n;

	ifname[0] = '\0';
	if (p == NULL)
		return;
	p += strlen(",iface=");
	n = strcspn(p, ",");
	if (n < len)
		snprintf(ifname, len, "%.*s", (int)n, p);
}

/* Before the EAL probes a net_af_xdp vdev (the PMD takes off whatever
 * program the interface has when the port closes, even one it never
 * loaded): an interface holding another's program is refused, one that
 * an ended mwpath left is taken off. */
static int
check_iface(const char *arg, char *err, size_t errlen)
{
	char ifname[IF_NAMESIZE];
	unsigned int ifindex;

	vdev_iface(arg, ifname, sizeof(ifname));
	ifindex = ifname[0] != '\0' ? if_nametoindex(ifname) : 0;
	if (ifindex == 0)
		return 0;	/* the PMD says what is wrong */
	return take_off_stale((int)ifindex, ifname, err, errlen);
}

int
mwp_xdp_eal_args(int argc, char **argv, char ***out, char *err, size_t errlen)
{
	/* argv's pointers, NULL, then the strings made here, NULL (the EAL
	 * permutes the first argc only) */
	char **v = calloc(2 * (size_t)argc + 2, sizeof(*v));
	int changed = 0, ret;

	if (v == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < argc; i++) {
		const char *arg = NULL, *prefix = "";

		v[i] = argv[i];
		if (strncmp(argv[i], "--vdev=", 7) == 0) {
			arg = argv[i] + 7;
			prefix = "--vdev=";
		} else if (i > 0 && strcmp(argv[i - 1], "--vdev") == 0) {
			arg = argv[i];
		}
		if (arg == NULL || strncmp(arg, XDP_DRIVER, strlen(XDP_DRIVER)) != 0)
			continue;
		ret = check_iface(arg, err, errlen);
		if (ret != 0) {
			mwp_xdp_eal_args_free(argc, v);
			return ret;
		}
		if (!wants_prog(arg))
			continue;
		v[i] = with_prog(prefix, arg);
		if (v[i] == NULL) {
			mwp_xdp_eal_args_free(argc, v);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		v[argc + 1 + changed++] = v[i];
	}
	*out = v;
	return changed;
}

void
mwp_xdp_eal_args_free(int argc, char **out)
{
	if (out == NULL)
		return;
	for (char **p = out + argc + 1; *p != NULL; p++)
		free(*p);
	free(out);
}

bool
mwp_xdp_port(uint16_t port_id)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(port_id, &info) == 0 && info.driver_name != NULL &&
	       strcmp(info.driver_name, XDP_DRIVER) == 0;
}

int
mwp_xdp_port_conf(uint16_t port_id, struct mwp_port_conf *pc, char *err, size_t errlen)
{
	struct rte_ether_addr mac;
	char a[RTE_ETHER_ADDR_FMT_SIZE], b[RTE_ETHER_ADDR_FMT_SIZE];

	if (!mwp_xdp_port(port_id))
		return 0;
	if (rte_eth_macaddr_get(port_id, &mac) != 0) {
		snprintf(err, errlen, "the interface's MAC is unknown");
		return -EINVAL;
	}
	if (rte_is_zero_ether_addr(&pc->mac)) {
		pc->mac = mac;
	} else if (!rte_is_same_ether_addr(&pc->mac, &mac)) {
		rte_ether_format_addr(a, sizeof(a), &pc->mac);
		rte_ether_format_addr(b, sizeof(b), &mac);
		snprintf(err, errlen, "mac %s is not the interface's (%s): the kernel answers ARP and ND with its own; leave mac out or give %s",
			 a, b, b);
		return -EINVAL;
	}
	if (!pc->has_ipv4 && !pc->has_ipv6) {
		snprintf(err, errlen, "on net_af_xdp the port needs an address (ipv4, ipv6): the XDP program takes RoCE for its addresses only");
		return -EINVAL;
	}
	if (pc->mtu > MWP_XDP_MAX_MTU) {
		snprintf(err, errlen, "mtu %u: net_af_xdp carries frames of up to a page, a RoCE path MTU of up to %u",
			 pc->mtu, MWP_XDP_MAX_MTU);
		return -EINVAL;
	}
	pc->kernel_neigh = true;
	return 0;
}

/* net_af_xdp (22.11) makes its umem of the rx queue's pool: from the
 * first object, populated_size objects back to back.  A pool the EAL lays
 * out page by page (without hugepages: objects do not cross a 4 KiB
 * page, so each page ends in a gap) is longer than that, and the objects
 * past the umem's end are frames the kernel refuses -- sent, counted, and
 * never on the wire.  NO_IOVA_CONTIG packs them back to back (the kernel
 * copies in copy mode; a zero-copy driver maps the umem page by page). */
struct rte_mempool *
mwp_xdp_pool_create(const char *name, unsigned int n, unsigned int cache, uint16_t room,
		    int socket)
{
	struct rte_pktmbuf_pool_private priv = { .mbuf_priv_size = 0 };
	struct rte_mempool *mp;

	/* the kernel writes a frame XDP_PACKET_HEADROOM into the buffer
	 * the PMD gives it, past the mbuf's own headroom */
	room = (uint16_t)(room + XDP_PACKET_HEADROOM);
	priv.mbuf_data_room_size = room;

	mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + room, cache,
				      sizeof(priv), socket, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL) != 0)
		goto fail;
	rte_pktmbuf_pool_init(mp, &priv);
	if (rte_mempool_populate_default(mp) < 0 || mp->nb_mem_chunks != 1)
		goto fail;
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
fail:
	rte_mempool_free(mp);
	rte_errno = ENOMEM;
	return NULL;
}

/* ---- the kernel's neighbours ---------------------------------------- */

struct nl_req {
	struct nlmsghdr nh;
	struct ndmsg nd;
	char attr[64];
};

static void
nl_attr(struct nl_req *r, unsigned short type, const void *data, size_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static void
nl_send(int fd, struct nl_req *r)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	/* a full socket buffer loses it: the table asks again */
	(void)sendto(fd, r, r->nh.nlmsg_len, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
}

/* Ask the kernel to resolve a.ip on the interface (NTF_USE: as if a
 * packet were sent to it), and for what it knows of it now: an entry
 * already REACHABLE raises no event. */
static void
ask_kernel(struct mwp_xdp *x, const struct mwp_port_ask *a)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const bool v4 = memcmp(a->ip, v4mapped, sizeof(v4mapped)) == 0;
	struct nl_req r;

	for (int get = 0; get <= 1; get++) {
		memset(&r, 0, sizeof(r));
		r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(r.nd));
		r.nh.nlmsg_type = get ? RTM_GETNEIGH : RTM_NEWNEIGH;
		r.nh.nlmsg_flags = NLM_F_REQUEST | (get ? 0 : NLM_F_CREATE);
		r.nh.nlmsg_seq = ++x->seq;
		r.nd.ndm_family = v4 ? AF_INET : AF_INET6;
		r.nd.ndm_ifindex = x->ifindex;
		r.nd.ndm_flags = get ? 0 : NTF_USE;
		nl_attr(&r, NDA_DST, v4 ? a->ip + 12 : a->ip, v4 ? 4 : 16);
		nl_send(x->nl_req, &r);
	}
	__atomic_fetch_add(&x->asked, 1, __ATOMIC_RELAXED);
}

/* One neighbour message: what a usable entry on our interface says, for
 * the port's table -- which takes it for an address it asked about or
 * knows, and ignores the rest (a busy link's neighbours do not fill it). */
static void
neigh_msg(struct mwp_xdp *x, const struct nlmsghdr *nh)
{
	const struct ndmsg *nd = NLMSG_DATA(nh);
	const uint16_t usable = NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
				NUD_PERMANENT;
	const uint8_t *dst = NULL, *ll = NULL;
	size_t dst_len = 0, ll_len = 0;
	uint8_t ip[16] = { 0 };
	struct rtattr *rta;
	int len;

	if (nh->nlmsg_type != RTM_NEWNEIGH || nh->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)) ||
	    nd->ndm_ifindex != x->ifindex || (nd->ndm_state & usable) == 0)
		return;
	len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (rta = (struct rtattr *)((const char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == NDA_DST) {
			dst = RTA_DATA(rta);
			dst_len = RTA_PAYLOAD(rta);
		} else if (rta->rta_type == NDA_LLADDR) {
			ll = RTA_DATA(rta);
			ll_len = RTA_PAYLOAD(rta);
		}
	}
	if (ll == NULL || ll_len != RTE_ETHER_ADDR_LEN)
		return;
	if (nd->ndm_family == AF_INET && dst_len == 4) {
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, dst, 4);
	} else if (nd->ndm_family == AF_INET6 && dst_len == 16) {
		memcpy(ip, dst, 16);
	} else {
		return;
	}
	mwp_port_neigh_learn(x->port, ip, (const struct rte_ether_addr *)ll, rte_rdtsc());
	__atomic_fetch_add(&x->reports, 1, __ATOMIC_RELAXED);
}

/* Everything readable on a netlink socket. */
static void
nl_read(struct mwp_xdp *x, int fd)
{
	char buf[16384] __rte_aligned(sizeof(struct nlmsghdr));

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		int len = (int)n;

		if (n <= 0)
			return;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len))
			neigh_msg(x, nh);
	}
}

static void *
neigh_thread(void *arg)
{
	struct mwp_xdp *x = arg;
	struct pollfd p[3] = {
		{ .fd = x->nl_ev, .events = POLLIN },
		{ .fd = x->nl_req, .events = POLLIN },
		{ .fd = x->wake, .events = POLLIN },
	};

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		struct mwp_port_ask a[16];
		unsigned int n;

		/* the asks ring has no descriptor: look every ASK_POLL_MS */
		(void)poll(p, RTE_DIM(p), ASK_POLL_MS);
		if (p[0].revents != 0)
			nl_read(x, x->nl_ev);
		if (p[1].revents != 0)
			nl_read(x, x->nl_req);
		while ((n = mwp_port_neigh_asked(x->port, a, RTE_DIM(a))) != 0)
			for (unsigned int i = 0; i < n; i++)
				ask_kernel(x, &a[i]);
	}
	return NULL;
}

static int
nl_socket(uint32_t groups)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		const int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int
neigh_start(struct mwp_xdp *x)
{
	int ret;

	x->nl_ev = nl_socket(1u << (RTNLGRP_NEIGH - 1));
	x->nl_req = nl_socket(0);
	x->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (x->nl_ev < 0 || x->nl_req < 0 || x->wake < 0)
		return x->nl_ev < 0 ? x->nl_ev : x->nl_req < 0 ? x->nl_req : -errno;
	x->stop = false;
	ret = pthread_create(&x->thread, NULL, neigh_thread, x);
	if (ret != 0)
		return -ret;
	x->running = true;
	(void)pthread_setname_np(x->thread, "mwp-neigh");
	return 0;
}

/* ---- the program's maps ---------------------------------------------- */

#ifdef MWP_HAVE_LIBBPF
/* The map called name of the XDP program on ifindex (a descriptor), or a
 * negative errno: -ENOENT no program, -ESRCH a program without it. */
static int
prog_map(int ifindex, const char *name)
{
	struct bpf_prog_info pinfo;
	uint32_t prog_id = 0, ids[16], plen = sizeof(pinfo);
	int pfd, ret = -ESRCH;

	if (bpf_xdp_query_id(ifindex, 0, &prog_id) != 0 || prog_id == 0)
		return -ENOENT;
	pfd = bpf_prog_get_fd_by_id(prog_id);
	if (pfd < 0)
		return -errno;
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = RTE_DIM(ids);
	pinfo.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(pfd, &pinfo, &plen) != 0) {
		ret = -errno;
		close(pfd);
		return ret;
	}
	close(pfd);
	for (uint32_t i = 0; i < RTE_MIN(pinfo.nr_map_ids, (uint32_t)RTE_DIM(ids)); i++) {
		struct bpf_map_info minfo;
		uint32_t mlen = sizeof(minfo);
		int mfd = bpf_map_get_fd_by_id(ids[i]);

		if (mfd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		if (bpf_obj_get_info_by_fd(mfd, &minfo, &mlen) == 0 &&
		    strcmp(minfo.name, name) == 0)
			return mfd;
		close(mfd);
	}
	return ret;
}

static int
put_addrs(struct mwp_xdp *x, const struct mwp_port_conf *pc)
{
	uint8_t ip[16] = { [10] = 0xff, [11] = 0xff };
	uint32_t one = (uint32_t)getpid();	/* who holds the interface */

	if (pc->has_ipv4) {
		memcpy(ip + 12, &pc->ipv4, 4);
		if (bpf_map_update_elem(x->addrs_fd, ip, &one, BPF_ANY) != 0)
			return -errno;
	}
	if (pc->has_ipv6 && bpf_map_update_elem(x->addrs_fd, pc->ipv6, &one, BPF_ANY) != 0)
		return -errno;
	return 0;
}

/* Before the PMD loads mwpath's program on ifname: a program there
 * already is refused, unless it is mwpath's and whoever gave it addresses
 * has gone -- a process killed before the PMD took its program off. */
static int
take_off_stale(int ifindex, const char *ifname, char *err, size_t errlen)
{
	uint8_t key[16], next[16];
	uint32_t pid = 0;
	void *prev = NULL;
	int fd = prog_map(ifindex, ADDRS_MAP), ret;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0) {
		snprintf(err, errlen, "%s has an XDP program already, not mwpath's: take it off first (ip link set dev %s xdp off), or run mwpath on another interface",
			 ifname, ifname);
		return -EBUSY;
	}
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (bpf_map_lookup_elem(fd, key, &pid) == 0 && pid != 0 &&
		    pid != (uint32_t)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
			break;
		pid = 0;
	}
	close(fd);
	if (pid != 0) {
		snprintf(err, errlen, "%s is mwpath's already: process %u runs a port on it",
			 ifname, pid);
		return -EBUSY;
	}
	ret = bpf_xdp_detach(ifindex, 0, NULL);
	if (ret != 0) {
		snprintf(err, errlen, "cannot take off the XDP program an ended mwpath left on %s: %s",
			 ifname, strerror(-ret));
		return ret;
	}
	MWP_LOG(NOTICE, "%s: took off the XDP program of an mwpath that has ended", ifname);
	return 0;
}

static int
maps_open(struct mwp_xdp *x, const struct mwp_port_conf *pc, char *err, size_t errlen)
{
	int ret;

	x->addrs_fd = prog_map(x->ifindex, ADDRS_MAP);
	if (x->addrs_fd == -ENOENT) {
		snprintf(err, errlen, "no XDP program on %s after the port started", x->ifname);
		return -ENOENT;
	}
	if (x->addrs_fd == -ESRCH) {
		snprintf(err, errlen, "the XDP program on %s is not mwpath's (no map %s): it would send mwpath frames that are the kernel's; give the vdev xdp_prog=%s",
			 x->ifname, ADDRS_MAP, mwp_xdp_prog());
		return -ESRCH;
	}
	if (x->addrs_fd < 0) {
		snprintf(err, errlen, "cannot read the XDP program on %s: %s", x->ifname,
			 strerror(-x->addrs_fd));
		return x->addrs_fd;
	}
	x->stats_fd = prog_map(x->ifindex, STATS_MAP);
	ret = put_addrs(x, pc);
	if (ret != 0)
		snprintf(err, errlen, "cannot give the XDP program on %s the port's addresses: %s",
			 x->ifname, strerror(-ret));
	return ret;
}

void
mwp_xdp_counts(const struct mwp_xdp *x, uint64_t c[MWP_XDP_NB_COUNTS])
{
	int ncpu = libbpf_num_possible_cpus();

	memset(c, 0, sizeof(uint64_t) * MWP_XDP_NB_COUNTS);
	if (x->stats_fd < 0 || ncpu <= 0)
		return;
	for (uint32_t k = 0; k < MWP_XDP_NB_COUNTS; k++) {
		uint64_t v[ncpu];

		if (bpf_map_lookup_elem(x->stats_fd, &k, v) != 0)
			continue;
		for (int i = 0; i < ncpu; i++)
			c[k] += v[i];
	}
}
#else
static int
take_off_stale(int ifindex, const char *ifname, char *err, size_t errlen)
{
	RTE_SET_USED(ifindex);
	RTE_SET_USED(ifname);
	RTE_SET_USED(err);
	RTE_SET_USED(errlen);
	return 0;
}

static int
maps_open(struct mwp_xdp *x, const struct mwp_port_conf *pc, char *err, size_t errlen)
{
	RTE_SET_USED(pc);
	snprintf(err, errlen, "mwpath was built without libbpf: it cannot give the XDP program on %s the port's addresses",
		 x->ifname);
	return -ENOTSUP;
}

void
mwp_xdp_counts(const struct mwp_xdp *x, uint64_t c[MWP_XDP_NB_COUNTS])
{
	RTE_SET_USED(x);
	memset(c, 0, sizeof(uint64_t) * MWP_XDP_NB_COUNTS);
}
#endif

/* The kernel interface's MTU carries the port's largest RoCE frame?  It
 * is the kernel's link: the PMD does not change it, and a frame above it
 * is dropped on the way out. */
static int
link_mtu_check(const char *ifname, const struct mwp_port_conf *pc, char *err, size_t errlen)
{
	const unsigned int need = pc->mtu + MWP_IP_OVERHEAD;
	unsigned int mtu = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
	f = fopen(path, "r");
	if (f == NULL || fscanf(f, "%u", &mtu) != 1)
		mtu = 0;
	if (f != NULL)
		fclose(f);
	if (mtu != 0 && mtu < need) {
		snprintf(err, errlen, "%s's MTU is %u and the RoCE path MTU %u needs %u: raise it (ip link set dev %s mtu %u) or lower the port's mtu",
			 ifname, mtu, pc->mtu, need, ifname, need);
		return -EMSGSIZE;
	}
	return 0;
}

int
mwp_xdp_start(struct mwp_xdp *x, uint16_t port_id, struct mwp_port *port, char *err,
	      size_t errlen)
{
	struct rte_eth_dev_info info;
	int ret;

	memset(x, 0, sizeof(*x));
	x->addrs_fd = x->stats_fd = x->nl_ev = x->nl_req = x->wake = -1;
	x->port = port;
	if (rte_eth_dev_info_get(port_id, &info) != 0 || info.if_index == 0 ||
	    if_indextoname(info.if_index, x->ifname) == NULL) {
		snprintf(err, errlen, "the port's kernel interface is unknown");
		return -ENODEV;
	}
	x->ifindex = (int)info.if_index;
	ret = link_mtu_check(x->ifname, &port->conf, err, errlen);
	if (ret == 0)
		ret = mwp_host_check(x->ifname, &port->conf, false, err, errlen);
	if (ret == 0)
		ret = maps_open(x, &port->conf, err, errlen);
	if (ret == 0) {
		ret = neigh_start(x);
		if (ret != 0)
			snprintf(err, errlen, "cannot follow the kernel's neighbours: %s",
				 strerror(-ret));
	}
	if (ret != 0) {
		mwp_xdp_stop(x);
		return ret;
	}
	MWP_LOG(INFO, "port %u: net_af_xdp on %s: RoCE for the port's addresses to mwpath, the rest to the kernel",
		port_id, x->ifname);
	return 0;
}

void
mwp_xdp_stop(struct mwp_xdp *x)
{
	if (x->port == NULL)
		return;		/* never started (all zeros), or stopped */
	if (x->running) {
		const uint64_t one = 1;

		__atomic_store_n(&x->stop, true, __ATOMIC_RELEASE);
		(void)write(x->wake, &one, sizeof(one));
		pthread_join(x->thread, NULL);
		x->running = false;
	}
	if (x->addrs_fd >= 0)
		close(x->addrs_fd);
	if (x->stats_fd >= 0)
		close(x->stats_fd);
	if (x->nl_ev >= 0)
		close(x->nl_ev);
	if (x->nl_req >= 0)
		close(x->nl_req);
	if (x->wake >= 0)
		close(x->wake);
	x->addrs_fd = x->stats_fd = x->nl_ev = x->nl_req = x->wake = -1;
	x->port = NULL;
}
