/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exception path (mwp_pmd.h, docs/host.md): a tap that holds a
 * port's MAC and addresses for the host's kernel, one non-blocking
 * descriptor per queue of the port; made, addressed and checked with the
 * kernel's own calls (TUNSETIFF, ioctl, getifaddrs).  Not DPDK's net_tap:
 * it asks the kernel for SIGIO on every frame (its rx reads only after
 * one), and in a program that runs mwpath's device that signal
 * interrupts the program's own select and read (qperf, fabtests fail
 * with EINTR).  What the kernel sends is read by a thread of the tap's
 * own, asleep in epoll_wait while the kernel is quiet, into a ring per
 * queue; the poll loop (mwp_lcore.c) takes from the ring, and writes
 * what goes to the kernel itself (mwp_host_tx).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_tun.h>
#include <linux/ipv6.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <net/if_arp.h>

#include <rte_cycles.h>

#include "mwp_pmd.h"

/* Is there a network interface called name, is it a tap, and does it
 * take several queues? */
static bool
if_exists(const char *name, bool *is_tap, bool *multi_queue)
{
	unsigned int flags = 0;
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags", name);
	f = fopen(path, "r");
	*is_tap = f != NULL && fscanf(f, "%x", &flags) == 1 && (flags & IFF_TAP) != 0;
	*multi_queue = (flags & IFF_MULTI_QUEUE) != 0;
	if (f != NULL)
		fclose(f);
	return if_nametoindex(name) != 0;
}

/* One descriptor of the tap ifname (made if it does not exist), or a
 * negative errno. */
static int
tap_open(const char *ifname, bool multi_queue)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | (multi_queue ? IFF_MULTI_QUEUE : 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
		const int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* The tap's MAC, and the link up. */
static int
tap_link(const char *ifname, const struct rte_ether_addr *mac)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
	if (ioctl(fd, SIOCSIFHWADDR, &ifr) != 0)
		ret = -errno;
	if (ret == 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		ret = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (ret == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* What the kernel sent on queue q, into its ring, until the tap has no
 * more.  The pool empty: the kernel keeps what was not read, and the
 * reader looks again a little later.  The tap gone (deleted under us):
 * its descriptor leaves the epoll, said once; the wire's frames for it
 * are then counted lost where they are written (mwp_host_tx). */
static void
read_queue(struct mwp_host *h, uint16_t q)
{
	for (;;) {
		struct rte_mbuf *b = rte_pktmbuf_alloc(h->mp);
		ssize_t len;

		if (b == NULL) {
			usleep(100);
			return;
		}
		len = read(h->fd[q], rte_pktmbuf_mtod(b, void *), rte_pktmbuf_tailroom(b));
		if (len <= 0) {
			const int e = len < 0 ? errno : EIO;

			rte_pktmbuf_free(b);
			if (e != EAGAIN && e != EINTR) {
				epoll_ctl(h->ep, EPOLL_CTL_DEL, h->fd[q], NULL);
				MWP_LOG(WARNING, "%s: queue %u: %s: the tap is gone; RoCE goes on, the kernel's frames do not",
					h->ifname, q, strerror(e));
			}
			return;
		}
		b->data_len = (uint16_t)len;
		b->pkt_len = (uint32_t)len;
		if (rte_ring_mp_enqueue(h->down[q], b) != 0) {
			rte_pktmbuf_free(b);
			__atomic_fetch_add(&h->ring_full, 1, __ATOMIC_RELAXED);
		}
	}
}

/* The reader: asleep in epoll_wait while the kernel sends nothing; each
 * queue's frames to its ring when it does.  Event data: the queue, or
 * UINT16_MAX for the wake-up. */
static void *
reader(void *arg)
{
	struct mwp_host *h = arg;
	struct epoll_event ev[MWP_MAX_TAP_QUEUES + 1];

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		const int n = epoll_wait(h->ep, ev, RTE_DIM(ev), -1);

		for (int i = 0; i < n; i++) {
			if (ev[i].data.u32 == UINT16_MAX) {
				uint64_t v;

				if (read(h->wake, &v, sizeof(v)) < 0)
					continue;
			} else {
				read_queue(h, (uint16_t)ev[i].data.u32);
			}
		}
	}
	return NULL;
}

int
mwp_host_resume(struct mwp_host *h)
{
	int ret;

	if (h->reading)
		return 0;
	__atomic_store_n(&h->stop, false, __ATOMIC_RELEASE);
	ret = pthread_create(&h->reader, NULL, reader, h);
	if (ret != 0)
		return -ret;
	pthread_setname_np(h->reader, "mwpath-host");
	h->reading = true;
	return 0;
}

void
mwp_host_pause(struct mwp_host *h)
{
	const uint64_t one = 1;

	if (!h->reading)
		return;
	__atomic_store_n(&h->stop, true, __ATOMIC_RELEASE);
	if (write(h->wake, &one, sizeof(one)) < 0)
		return;	/* cannot wake it: leave it be */
	pthread_join(h->reader, NULL);
	h->reading = false;
}

/* The reader's epoll, its wake-up and the rings. */
static int
reader_setup(struct mwp_host *h)
{
	struct epoll_event e = { .events = EPOLLIN };

	h->ep = epoll_create1(EPOLL_CLOEXEC);
	h->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->ep < 0 || h->wake < 0)
		return -errno;
	e.data.u32 = UINT16_MAX;
	if (epoll_ctl(h->ep, EPOLL_CTL_ADD, h->wake, &e) != 0)
		return -errno;
	for (uint16_t q = 0; q < h->nb_queues; q++) {
		char name[RTE_RING_NAMESIZE];
		static uint32_t seq;

		e.data.u32 = q;
		if (epoll_ctl(h->ep, EPOLL_CTL_ADD, h->fd[q], &e) != 0)
			return -errno;
		snprintf(name, sizeof(name), "mwp_host%u",
			 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		h->down[q] = rte_ring_create(name, MWP_HOST_RING, SOCKET_ID_ANY,
					     RING_F_SC_DEQ);
		if (h->down[q] == NULL)
			return -ENOMEM;
	}
	return mwp_host_resume(h);
}

uint16_t
mwp_host_tx(const struct mwp_host *h, uint16_t q, struct rte_mbuf **m, uint16_t n)
{
	uint16_t took = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct iovec iov[8];
		const struct rte_mbuf *s = m[i];
		int k = 0;

		for (; s != NULL && k < (int)RTE_DIM(iov); s = s->next, k++) {
			iov[k].iov_base = rte_pktmbuf_mtod(s, void *);
			iov[k].iov_len = s->data_len;
		}
		if (s == NULL && writev(h->fd[q], iov, k) > 0)
			took++;
	}
	rte_pktmbuf_free_bulk(m, n);
	return took;
}

static int
set_ipv4(const char *ifname, rte_be32_t ip, uint8_t prefix)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = ip;
	if (ioctl(fd, SIOCSIFADDR, &ifr) != 0)
		ret = -errno;
	sin->sin_addr.s_addr = prefix == 0 ? 0 : htonl(~0u << (32 - prefix));
	if (ret == 0 && ioctl(fd, SIOCSIFNETMASK, &ifr) != 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* An IPv6 address, with no duplicate address detection first: the port
 * already answers for it on the link, and the address is usable at once. */
static int
set_ipv6(const char *ifname, const uint8_t ip[16], uint8_t prefix)
{
	struct in6_ifreq r;
	char path[128];
	FILE *f;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/accept_dad", ifname);
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("0\n", f);
		fclose(f);
	}
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&r, 0, sizeof(r));
	memcpy(&r.ifr6_addr, ip, 16);
	r.ifr6_prefixlen = prefix;
	r.ifr6_ifindex = (int)if_nametoindex(ifname);
	if (ioctl(fd, SIOCSIFADDR, &r) != 0 && errno != EEXIST)
		ret = -errno;
	close(fd);
	return ret;
}

static bool
is_link_local6(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/* What the kernel's interfaces hold of the port's addresses: on ifname,
 * whether it has any IPv4 / global IPv6 address and whether the port's
 * are among them; elsewhere, the first other interface holding one of
 * the port's (into other, "" if none). */
struct held {
	bool any4, own4, any6, own6;
	char first4[INET_ADDRSTRLEN], first6[INET6_ADDRSTRLEN];
	char other[IF_NAMESIZE];
};

static void
held_by(const char *ifname, const struct mwp_port_conf *pc, struct held *h)
{
	struct ifaddrs *all, *a;

	memset(h, 0, sizeof(*h));
	if (getifaddrs(&all) != 0)
		return;
	for (a = all; a != NULL; a = a->ifa_next) {
		const bool here = strcmp(a->ifa_name, ifname) == 0;
		bool own = false;

		if (a->ifa_addr == NULL)
			continue;
		if (a->ifa_addr->sa_family == AF_INET) {
			const struct in_addr *in = &((struct sockaddr_in *)a->ifa_addr)->sin_addr;

			own = pc->has_ipv4 && in->s_addr == pc->ipv4;
			if (here) {
				if (!h->any4)
					inet_ntop(AF_INET, in, h->first4, sizeof(h->first4));
				h->any4 = true;
				h->own4 |= own;
			}
		} else if (a->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *in = &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;

			if (is_link_local6(in->s6_addr))
				continue;
			own = pc->has_ipv6 && memcmp(in->s6_addr, pc->ipv6, 16) == 0;
			if (here) {
				if (!h->any6)
					inet_ntop(AF_INET6, in, h->first6, sizeof(h->first6));
				h->any6 = true;
				h->own6 |= own;
			}
		} else {
			continue;
		}
		if (own && !here && h->other[0] == '\0')
			snprintf(h->other, sizeof(h->other), "%s", a->ifa_name);
	}
	freeifaddrs(all);
}

int
mwp_host_check(const char *ifname, const struct mwp_port_conf *pc, bool set, char *err,
	       size_t errlen)
{
	char ip4[INET_ADDRSTRLEN] = "", ip6[INET6_ADDRSTRLEN] = "";
	struct held h;

	if (pc->has_ipv4)
		inet_ntop(AF_INET, &pc->ipv4, ip4, sizeof(ip4));
	if (pc->has_ipv6)
		inet_ntop(AF_INET6, pc->ipv6, ip6, sizeof(ip6));
	held_by(ifname, pc, &h);
	if (h.other[0] != '\0') {
		snprintf(err, errlen, "the port's address %s is also on %s: the kernel would answer for it there too; take it off %s",
			 ip4[0] != '\0' ? ip4 : ip6, h.other, h.other);
		return -EADDRINUSE;
	}
	if (pc->has_ipv4 && h.any4 && !h.own4) {
		snprintf(err, errlen, "%s holds %s and the port %s: they must agree", ifname,
			 h.first4, ip4);
		return -EADDRNOTAVAIL;
	}
	if (pc->has_ipv6 && h.any6 && !h.own6) {
		snprintf(err, errlen, "%s holds %s and the port %s: they must agree", ifname,
			 h.first6, ip6);
		return -EADDRNOTAVAIL;
	}
	if (!set && ((pc->has_ipv4 && !h.own4) || (pc->has_ipv6 && !h.own6))) {
		snprintf(err, errlen, "%s does not hold the port's address %s", ifname,
			 pc->has_ipv4 && !h.own4 ? ip4 : ip6);
		return -EADDRNOTAVAIL;
	}
	if (!pc->has_ipv4 && !pc->has_ipv6) {
		snprintf(err, errlen, "the port has no IP address for %s to hold", ifname);
		return -EINVAL;
	}
	return 0;
}

int
mwp_host_start(struct mwp_host *h, const struct mwp_host_conf *hc,
	       const struct mwp_port_conf *pc, unsigned int index, uint16_t nb_queues,
	       struct rte_mempool *mp, char *err, size_t errlen)
{
	bool exists, is_tap, multi_queue;
	int ret;

	memset(h, 0, sizeof(*h));
	h->ep = h->wake = -1;
	if (hc->ifname[0] != '\0')
		snprintf(h->ifname, sizeof(h->ifname), "%s", hc->ifname);
	else
		snprintf(h->ifname, sizeof(h->ifname), "mwp%u", index);
	if (rte_is_zero_ether_addr(&pc->mac)) {
		snprintf(err, errlen, "the port needs a MAC for %s", h->ifname);
		return -EINVAL;
	}
	if (nb_queues == 0 || nb_queues > MWP_MAX_TAP_QUEUES) {
		snprintf(err, errlen, "%u queues: a tap has 1 to %u", nb_queues,
			 MWP_MAX_TAP_QUEUES);
		return -EINVAL;
	}
	exists = if_exists(h->ifname, &is_tap, &multi_queue);
	if (exists && !is_tap) {
		snprintf(err, errlen, "%s exists and is not a tap", h->ifname);
		return -EEXIST;
	}
	if (exists && nb_queues > 1 && !multi_queue) {
		snprintf(err, errlen, "%s is a tap of one queue and the port has %u; make it with: ip tuntap add mode tap %s multi_queue",
			 h->ifname, nb_queues, h->ifname);
		return -EINVAL;
	}
	/* an existing tap may hold addresses already: they must be ours */
	if (exists) {
		ret = mwp_host_check(h->ifname, pc, true, err, errlen);
		if (ret != 0)
			return ret;
	}
	if (!exists)
		multi_queue = nb_queues > 1;
	h->made = !exists;
	h->mp = mp;
	for (uint16_t q = 0; q < nb_queues; q++) {
		ret = tap_open(h->ifname, multi_queue);
		if (ret < 0) {
			snprintf(err, errlen, "cannot %s the tap %s: %s",
				 exists ? "attach to" : "make", h->ifname, strerror(-ret));
			mwp_host_stop(h);
			return ret;
		}
		h->fd[h->nb_queues++] = ret;
	}
	ret = tap_link(h->ifname, &pc->mac);
	if (ret == 0 && pc->has_ipv4)
		ret = set_ipv4(h->ifname, pc->ipv4, hc->prefix4);
	if (ret == 0 && pc->has_ipv6)
		ret = set_ipv6(h->ifname, pc->ipv6, hc->prefix6);
	if (ret != 0) {
		snprintf(err, errlen, "cannot give %s the port's MAC and addresses: %s",
			 h->ifname, strerror(-ret));
		mwp_host_stop(h);
		return ret;
	}
	ret = mwp_host_check(h->ifname, pc, false, err, errlen);
	if (ret != 0) {
		mwp_host_stop(h);
		return ret;
	}
	ret = reader_setup(h);
	if (ret != 0) {
		snprintf(err, errlen, "%s: cannot start its reader: %s", h->ifname, strerror(-ret));
		mwp_host_stop(h);
		return ret;
	}
	MWP_LOG(INFO, "port %u: the host keeps its addresses on %s (%s)", index, h->ifname,
		h->made ? "made" : "attached");
	return 0;
}

void
mwp_host_stop(struct mwp_host *h)
{
	mwp_host_pause(h);
	for (uint16_t q = 0; q < h->nb_queues; q++) {
		struct rte_mbuf *m;

		close(h->fd[q]);
		while (h->down[q] != NULL && rte_ring_sc_dequeue(h->down[q], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(h->down[q]);
		h->down[q] = NULL;
	}
	if (h->ep > 0)
		close(h->ep);
	if (h->wake > 0)
		close(h->wake);
	h->ep = h->wake = -1;
	h->nb_queues = 0;
}
