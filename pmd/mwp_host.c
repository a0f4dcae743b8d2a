/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exception path (mwp_pmd.h, docs/host.md): a tap that holds a
 * port's MAC and addresses for the host's kernel.  Made here with DPDK's
 * net_tap at run time (rte_vdev_init), one queue pair per queue of the
 * port; its addresses set and checked with the kernel's own calls
 * (ioctl, getifaddrs).  The frames themselves move in mwp_lcore.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_tun.h>
#include <linux/ipv6.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "mwp_pmd.h"

/* Is there a network interface called name, is it a tap, and does it
 * take several queues (net_tap opens every tap with IFF_MULTI_QUEUE)? */
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

/* net_tap says, at every start and stop, what a process without shared
 * configuration (--no-shconf) cannot have -- no multiq qdisc for its
 * flow rules, no secondary to tell -- at ERR level; quiet while we make
 * and take down the tap (level: the one to put back, or -1). */
static int
tap_quiet(int level)
{
	const int t = rte_log_register("pmd.net.tap");
	int was;

	if (t < 0)
		return -1;
	was = rte_log_get_level(t);
	rte_log_set_level(t, level >= 0 ? (uint32_t)level : RTE_LOG_CRIT);
	return was;
}

int
mwp_host_start(struct mwp_host *h, const struct mwp_host_conf *hc,
	       const struct mwp_port_conf *pc, unsigned int index, uint16_t nb_queues,
	       struct rte_mempool *mp, char *err, size_t errlen)
{
	char name[RTE_DEV_NAME_MAX_LEN], args[128];
	struct rte_ether_addr mac;
	const uint8_t *b = pc->mac.addr_bytes;
	bool exists, is_tap, multi_queue;
	int ret, level;

	memset(h, 0, sizeof(*h));
	h->port_id = MWP_HOST_NONE;
	if (hc->ifname[0] != '\0')
		snprintf(h->ifname, sizeof(h->ifname), "%s", hc->ifname);
	else
		snprintf(h->ifname, sizeof(h->ifname), "mwp%u", index);
	if (rte_is_zero_ether_addr(&pc->mac)) {
		snprintf(err, errlen, "the port needs a MAC for %s", h->ifname);
		return -EINVAL;
	}
	exists = if_exists(h->ifname, &is_tap, &multi_queue);
	if (exists && !is_tap) {
		snprintf(err, errlen, "%s exists and is not a tap", h->ifname);
		return -EEXIST;
	}
	if (exists && !multi_queue) {
		snprintf(err, errlen, "%s is a tap of one queue; DPDK's net_tap attaches to one made with: ip tuntap add mode tap %s multi_queue",
			 h->ifname, h->ifname);
		return -EINVAL;
	}
	/* an existing tap may hold addresses already: they must be ours */
	if (exists) {
		ret = mwp_host_check(h->ifname, pc, true, err, errlen);
		if (ret != 0)
			return ret;
	}
	snprintf(name, sizeof(name), "net_tap_mwp%u", index);
	snprintf(args, sizeof(args), "iface=%s,mac=%02x:%02x:%02x:%02x:%02x:%02x", h->ifname,
		 b[0], b[1], b[2], b[3], b[4], b[5]);
	level = tap_quiet(-1);
	ret = rte_vdev_init(name, args);
	if (ret == 0)
		ret = rte_eth_dev_get_port_by_name(name, &h->port_id);
	if (ret == 0)
		ret = mwp_ethdev_start(h->port_id, nb_queues, mp, &pc->mac, 0);
	tap_quiet(level);
	if (ret != 0 && h->port_id == MWP_HOST_NONE) {
		snprintf(err, errlen, "cannot make the tap %s (net_tap %s): %s", h->ifname, args,
			 strerror(ret < 0 ? -ret : ret));
		return ret < 0 ? ret : -ret;
	}
	if (ret != 0) {
		snprintf(err, errlen, "the tap %s did not start: %s", h->ifname, strerror(-ret));
		return ret;
	}
	if (rte_eth_macaddr_get(h->port_id, &mac) != 0 || !rte_is_same_ether_addr(&mac, &pc->mac)) {
		snprintf(err, errlen, "the tap %s did not take the port's MAC", h->ifname);
		return -EINVAL;
	}
	h->made = !exists;
	ret = pc->has_ipv4 ? set_ipv4(h->ifname, pc->ipv4, hc->prefix4) : 0;
	if (ret == 0 && pc->has_ipv6)
		ret = set_ipv6(h->ifname, pc->ipv6, hc->prefix6);
	if (ret != 0) {
		snprintf(err, errlen, "cannot give %s the port's addresses: %s", h->ifname,
			 strerror(-ret));
		return ret;
	}
	ret = mwp_host_check(h->ifname, pc, false, err, errlen);
	if (ret != 0)
		return ret;
	h->poll_gap = (uint64_t)(hc->poll_us != 0 ? hc->poll_us : MWP_HOST_POLL_US) *
		      (rte_get_tsc_hz() / 1000000);
	MWP_LOG(INFO, "port %u: the host keeps its addresses on %s (%s)", index, h->ifname,
		h->made ? "made" : "attached");
	return 0;
}

void
mwp_host_stop(struct mwp_host *h)
{
	int level;

	if (h->port_id == MWP_HOST_NONE)
		return;
	level = tap_quiet(-1);
	mwp_ethdev_close(h->port_id);
	tap_quiet(level);
	h->port_id = MWP_HOST_NONE;
}
